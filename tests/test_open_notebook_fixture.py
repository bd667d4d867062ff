"""The collection layout and its generator: every file the generator writes validates against
its schema in schemas/open-notebook/, the oracle it returns agrees with the files (and with
the reference's parser), builds are deterministic but for the canaries, and the canaries sit
where the oracle says."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from contract_tests.synthetic import notebook_generator as fixture
from reference.open_notebook import layout

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas" / "open-notebook"
CANARY = re.compile(r"rc(?:body|title|artifact)[0-9a-f]{16}")


def validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8")))


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> fixture.GeneratedRoot:
    return fixture.build(tmp_path_factory.mktemp("on") / "root", seed=7)


@pytest.mark.parametrize("kind", ["collection", "notebook", "artifact-set"])
def test_each_schema_is_a_valid_draft_2020_12_schema(kind):
    schema = json.loads((SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_every_file_the_generator_writes_validates_against_its_schema(built):
    """Checked with jsonschema directly, not through the reference's reader."""
    kinds = {"collection": validator("collection"), "notebook": validator("notebook"),
             "artifact-set": validator("artifact-set")}
    seen = {"collection": 0, "notebook": 0, "artifact-set": 0, "contents": 0}
    for rel, data in files(built.root).items():
        text = data.decode("utf-8")
        parts = rel.split("/")
        if parts[1:] == ["collection.json"]:
            kinds["collection"].validate(json.loads(text))
            seen["collection"] += 1
        elif parts[1] == "notebooks" and rel.endswith(".md"):
            assert text.startswith("---\n") and "\r" not in text
            front = yaml.safe_load(text.split("\n---\n", 1)[0][4:])
            kinds["notebook"].validate(front)
            assert front["notebook_id"] == parts[2][:-3]
            seen["notebook"] += 1
        elif parts[1] == "artifacts" and parts[3] == "set.json":
            manifest = json.loads(text)
            kinds["artifact-set"].validate(manifest)
            assert manifest["artifact_set_id"] == parts[2]
            seen["artifact-set"] += 1
        else:
            assert parts[1] == "artifacts" and parts[3].endswith((".md", ".json")), rel
            seen["contents"] += 1
    assert seen == {"collection": 3, "notebook": 18, "artifact-set": 12, "contents": 18}


def test_the_schemas_reject_what_the_layout_forbids():
    collection = validator("collection")
    good = {"layout_version": 1, "collection_id": "a-b", "title": "T", "date_range": {"start": "2023-01-01",
            "end": "2023-02-01"}, "domain_tags": ["x"], "last_modified": 1}
    assert collection.is_valid(good)
    for bad in ({**good, "collection_id": "A/B"}, {**good, "extra": 1}, {**good, "last_modified": 1.5},
                {**good, "date_range": {"start": "2023-1-1", "end": "2023-02-01"}}):
        assert not collection.is_valid(bad)
    artifact_set = validator("artifact-set")
    manifest = json.loads(json.dumps(_manifest("offered", "synthesis_pipeline", True)))
    assert artifact_set.is_valid(manifest)
    assert not artifact_set.is_valid(_manifest("offered", "human_export", True))  # offered means synthesized
    assert not artifact_set.is_valid(_manifest("canonical", "human_export", True))
    assert artifact_set.is_valid(_manifest("canonical", "human_export", False))
    manifest["artifacts"][0]["contents_file"] = "../escape.md"
    assert not artifact_set.is_valid(manifest)


def _manifest(status: str, created_by: str, synthesized: bool) -> dict:
    return {"layout_version": 1, "artifact_set_id": "s", "artifact_type": "summary", "status": status,
            "created_at": 1, "source_notebooks": ["nb-1"], "artifacts": [{
                "artifact_id": "a", "contents_file": "a.md", "media_type": "text/markdown", "sha256": "0" * 64,
                "provenance": {"source_notebooks": ["nb-1"], "created_at": 1, "created_by": created_by,
                               "transformation_steps": [{"step_order": 1, "tool": "t", "timestamp": 1,
                                                         "parameters": {}}]},
                "synthesis_metadata": {"synthesized": synthesized, "confidence_note": "n", "last_refreshed": None,
                                       "staleness_indicator": "unknown"}}]}


def test_the_oracle_agrees_with_the_files_and_with_the_reference_parser(built):
    loaded = layout.load_root(built.root)
    assert list(loaded) == built.collection_ids
    for cid, info in built.collections.items():
        parsed = {f"{cid}:{p.notebook_id}:{p.page}:{p.ordinal}": p
                  for nb in loaded[cid].notebooks.values() for p in nb.passages}
        assert list(parsed) == info.source_ids
        assert info.notebook_paths == [f"{cid}/notebooks/{n}.md" for n in info.notebook_ids]
        for passage in info.passages:
            assert parsed[passage.source_id].text == passage.exact_text
            assert passage.exact_text in (built.root / passage.notebook_path).read_text(encoding="utf-8")
        for artifact in info.artifacts:
            data = (built.root / artifact.contents_path).read_bytes()
            assert hashlib.sha256(data).hexdigest() == artifact.sha256
            assert loaded[cid].artifact_sets[artifact.artifact_set_id].artifacts[artifact.local_id].intact_at_start
        statuses = {a.status for a in info.artifacts}
        assert statuses == {"offered", "canonical"}
        assert all(a.synthesized == (a.status == "offered") for a in info.artifacts)


def test_each_collection_has_every_notable_passage_kind(built):
    for info in built.collections.values():
        kinds = [p.kind for p in info.passages]
        for kind in ("probe", "long_context", "canary", "unicode", "multiline", "list", "fence"):
            assert kind in kinds
        assert "\n" in info.passage("multiline").exact_text
        assert "\n\n" in info.passage("fence").exact_text  # a blank line inside a fence stays in one passage


def test_every_collection_has_an_undated_page_and_dated_ones(built):
    for cid in built.collection_ids:
        stamps = [p.timestamp for nb in layout.load_root(built.root)[cid].notebooks.values() for p in nb.pages]
        assert None in stamps and any(isinstance(s, int) for s in stamps)


def test_canaries_are_lower_case_alphanumeric_and_planted_only_in_their_own_collection(built):
    all_text = {rel: data.decode("utf-8") for rel, data in files(built.root).items()}
    for cid, info in built.collections.items():
        assert set(info.canaries) == set(fixture.CANARY_KINDS)
        for kind, token in info.canaries.items():
            assert CANARY.fullmatch(token) and token.startswith(f"rc{kind}")
            holders = {rel.split("/")[0] for rel, text in all_text.items() if token in text}
            assert holders == {cid}, (kind, holders)
        assert info.canaries["body"] in info.passage("canary").exact_text
        metadata = (built.root / cid / "collection.json").read_text(encoding="utf-8")
        assert not CANARY.search(metadata)  # list_collections shows it in every session


def test_canaries_are_random_per_build(tmp_path):
    one = fixture.build(tmp_path / "a", seed=1)
    two = fixture.build(tmp_path / "b", seed=1)
    assert set(one.canaries()).isdisjoint(two.canaries())


def test_a_build_is_a_function_of_the_seed_and_the_canary_salt(tmp_path):
    one = fixture.build(tmp_path / "a", seed=3, canary_salt="s")
    two = fixture.build(tmp_path / "b", seed=3, canary_salt="s")
    other = fixture.build(tmp_path / "c", seed=4, canary_salt="s")
    assert files(one.root) == files(two.root)
    assert files(one.root) != files(other.root)
    strip = lambda f: {**f.to_dict(), "root": None}  # noqa: E731
    assert strip(one) == strip(two)
    json.dumps(one.to_dict())  # the oracle is plain JSON


def test_the_generator_refuses_a_non_empty_root(tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(FileExistsError):
        fixture.build(tmp_path)


def test_the_size_option_builds_a_thousand_notebook_collection(tmp_path):
    built = fixture.build(tmp_path / "r", seed=0, collections=1, bench_notebooks=1000)
    bench = built.collections[fixture.BENCH_COLLECTION]
    assert len(bench.notebook_ids) == 1000
    assert len(list((tmp_path / "r" / fixture.BENCH_COLLECTION / "notebooks").glob("*.md"))) == 1000
    assert len(bench.source_ids) > 5000
    meta = json.loads((tmp_path / "r" / fixture.BENCH_COLLECTION / "collection.json").read_text())
    validator("collection").validate(meta)
