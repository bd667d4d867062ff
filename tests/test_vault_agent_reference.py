"""The reference vault-agent in process: configuration, indexing and chunking, search and
related in every mode, freshness states, size limits, path safety, error sanitisation, and
the error catalogue. Transports and the CLI are in test_vault_agent_transports.py."""

from __future__ import annotations

import builtins
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from reference.vault_agent import errors as catalogue_code
from reference.vault_agent.config import KEYS, ConfigError, index_file, load_settings
from reference.vault_agent.core import Core
from reference.vault_agent.errors import VaultError
from reference.vault_agent.lock import HOLD_AT, HOLD_FILE
from reference.vault_agent.markdown import MAX_CHUNK, parse_note
from reference.vault_agent.store import note_id
from tests.test_vault_agent_support import (
    CANARY_ATTACH, CANARY_BODY, CANARY_FRONT, CANARY_QUERY, CLI, build_model, build_vault, clean_env, settings,
)

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = yaml.safe_load((ROOT / "specs/catalogues/vault-agent-errors.yaml").read_text(encoding="utf-8"))
OPENAPI = yaml.safe_load((ROOT / "specs/openapi/vault-agent.openapi.yaml").read_text(encoding="utf-8"))
EXCLUDE = {"vault__exclude": "drafts/"}


def component(name: str) -> Draft202012Validator:
    registry = Registry().with_resource("urn:openapi", DRAFT202012.create_resource(OPENAPI))
    return Draft202012Validator({"$ref": f"urn:openapi#/components/schemas/{name}"}, registry=registry)


def envelope_ok(reply, data_schema: str) -> None:
    component(data_schema).validate(reply.data)
    component("Warnings").validate(reply.warnings)


def code_of(fn, *args, **kwargs) -> VaultError:
    with pytest.raises(VaultError) as info:
        fn(*args, **kwargs)
    return info.value


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    base = tmp_path_factory.mktemp("va")
    vault = build_vault(base)
    core = Core(settings(vault, base / "idx", **EXCLUDE))
    summary = core.index(full=True)
    return base, vault, core, summary


@pytest.fixture
def fresh(tmp_path):
    """A private vault and index for tests that change files."""
    vault = build_vault(tmp_path)
    core = Core(settings(vault, tmp_path / "idx", **EXCLUDE))
    core.index(full=True)
    return tmp_path, vault, core


def ids(core: Core, rel: str) -> str:
    return note_id(rel)


# -- configuration ---------------------------------------------------------------------------------
# Three distinct values per kind: (TOML value, environment string, flag string).
LAYERS = {"bool": (True, "false", "true"), "int": (9001, "9002", "9003"),
          "list": (["http://a.example"], "http://b.example", "http://c.example"),
          "path": ("/tmp/x", "/tmp/y", "/tmp/z"), "url": ("http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3"),
          "level": ("debug", "warn", "error"), "endpoint": ("/mcp-x", "/mcp-y", "/mcp-z"),
          "str": ("t" * 40, "e" * 40, "f" * 40)}
# Keys another key's validation depends on, set in every layer's TOML.
SUPPORT = {"embedding.enabled": 'model = "/tmp/m"\n', "cors.enabled": 'allowed_origins = ["http://a.example"]\n',
           "cors.allowed_origins": "enabled = true\n"}


@pytest.mark.parametrize("key", KEYS, ids=lambda k: k.name)
def test_every_key_takes_flags_over_environment_over_toml_over_defaults(key, tmp_path):
    toml_value, env_value, flag_value = LAYERS[key.kind]
    section, _, leaf = key.name.rpartition(".")
    config = tmp_path / "config.toml"
    config.write_text(f"[{section}]\n{leaf} = {json.dumps(toml_value)}\n{SUPPORT.get(key.name, '')}", encoding="utf-8")
    layers = [load_settings({}, config=str(config), env={}),
              load_settings({}, config=str(config), env={key.env: env_value}),
              load_settings({key.name: flag_value}, config=str(config), env={key.env: env_value})]
    assert [layer.sources[key.name] for layer in layers] == ["toml", "env", "flag"]
    seen = [layer[key.name] for layer in layers]
    assert seen[0] != seen[1] and seen[1] != seen[2]
    default = load_settings({}, config=None, env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert default.sources[key.name] == "default" and default[key.name] == key.default


def test_mcp_keys_default_to_disabled_and_slash_mcp(tmp_path):
    values = load_settings({}, env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert values["mcp.enabled"] is False and values["mcp.http.endpoint"] == "/mcp"


@pytest.mark.parametrize("path", ["/search", "/notes/x", "/", "/status", "mcp", "/a/../b", "/sync/pull"])
def test_an_mcp_endpoint_that_collides_or_is_malformed_is_a_configuration_error(path, tmp_path):
    with pytest.raises(ConfigError):
        load_settings({"mcp.http.endpoint": path}, env={"XDG_CONFIG_HOME": str(tmp_path)})


def test_the_mcp_command_ignores_mcp_keys_even_when_invalid(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text('mcp.enabled = "yes"\nmcp.http.endpoint = "/search"\n', encoding="utf-8")
    with pytest.raises(ConfigError):
        load_settings({}, config=str(config), env={})
    assert load_settings({}, config=str(config), env={}, command="mcp")["mcp.enabled"] is False


@pytest.mark.parametrize("origins", ["*", "http://*.example", "http://a.example/path", ""])
def test_cors_needs_explicit_origins_without_wildcards(origins, tmp_path):
    with pytest.raises(ConfigError):
        load_settings({"cors.enabled": "true", "cors.allowed_origins": origins}, env={"XDG_CONFIG_HOME": str(tmp_path)})


def test_unknown_configuration_keys_and_bad_booleans_are_rejected(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("[vault]\nroot = \"/v\"\nsurprise = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_settings({}, config=str(config), env={})
    with pytest.raises(ConfigError):
        load_settings({}, env={"VAULT_AGENT_MCP_ENABLED": "yes", "XDG_CONFIG_HOME": str(tmp_path)})


def test_the_index_lives_under_the_index_dir_by_vault_identity(built):
    base, vault, core, _ = built
    assert core.index_path.parent.parent == base / "idx" and core.index_path.name == "index.sqlite"
    assert index_file(settings(vault, base / "idx", **EXCLUDE)) == core.index_path


# -- indexing and chunking -----------------------------------------------------------------------------
def test_indexing_skips_bad_files_with_warnings_and_counts_notes(built):
    _base, _vault, _core, summary = built
    codes = {w["code"] for w in summary.warnings}
    assert {"FILE_NOT_UTF8", "FILE_BINARY", "FRONTMATTER_PARSE_FAILED"} <= codes
    assert summary.data["mode"] == "full" and summary.data["notesIndexed"] == 8  # 10 discoverable, 2 skipped
    assert all(not w["details"].get("path", "x").startswith("/") for w in summary.warnings)


def test_note_ids_are_the_sha256_prefix_of_the_vault_relative_path():
    import hashlib

    assert note_id("notes/cats.md") == hashlib.sha256(b"notes/cats.md").hexdigest()[:32]


def test_chunks_follow_headings_exclude_frontmatter_and_keep_heading_paths():
    parsed = parse_note("---\ntitle: T\nsecret: s\n---\nintro\n\n# A\ntext a\n\n```\n# fenced\n```\n\n## B\ntext b\n", "stem")
    assert [c.heading for c in parsed.chunks] == [None, "A", "B"]
    assert parsed.chunks[2].heading_path == ["A", "B"]
    assert all("secret" not in c.content for c in parsed.chunks)
    assert "# fenced" in parsed.chunks[1].content
    big = parse_note("# H\n\n" + ("word " * 500 + "\n\n") * 12 + "x" * 9000, "s")
    assert len(big.chunks) > 3 and all(len(c.content) <= MAX_CHUNK for c in big.chunks)


def test_titles_come_from_frontmatter_then_first_h1_then_file_stem():
    assert parse_note("---\ntitle: Front\n---\n# H1\n", "stem").title == "Front"
    assert parse_note("## h2\n# H1\n", "stem").title == "H1"
    assert parse_note("plain", "stem").title == "stem"


# -- search ------------------------------------------------------------------------------------------
def test_lexical_search_returns_compact_chunk_results_without_echoing_the_query(built):
    _base, _vault, core, _ = built
    reply = core.search({"query": f"cat water {CANARY_QUERY}"})
    envelope_ok(reply, "SearchData")
    data = reply.data
    assert data["requestedMode"] is None and data["usedMode"] == "lexical" and data["limit"] == 10
    assert data["freshness"] == "fresh" and reply.warnings == []
    assert data["results"][0]["path"] == "notes/cats.md"
    assert CANARY_QUERY not in json.dumps(data)
    for result in data["results"]:
        chunk = core.get_chunk({"noteId": result["noteId"], "chunkIndex": result["chunkIndex"]}).data["content"]
        assert len(result["snippet"]) <= 240 and result["snippet"] != chunk and len(result["snippet"]) < len(chunk)


def test_results_carry_allowlisted_metadata_only(built):
    _base, _vault, core, _ = built
    result = core.search({"query": "feeding"}).data["results"][0]
    assert result["metadata"] == {"aliases": ["Feline guide"], "tags": ["pets", "animals"], "date": "2024-05-01",
                                  "created": None, "updated": None, "attachmentCount": 0}
    assert CANARY_FRONT not in json.dumps(result)


def test_chunkless_notes_are_found_as_note_results_by_title(built):
    _base, _vault, core, _ = built
    results = core.search({"query": "empty"}).data["results"]
    note = [r for r in results if r["type"] == "note"]
    assert note and note[0]["chunkIndex"] is None and note[0]["snippet"] == "" and note[0]["headingPath"] == []


def test_excluded_hidden_and_escaping_notes_are_never_indexed(built):
    _base, _vault, core, _ = built
    for query in ("hidden", "Dependency", "draft", "Outside"):
        assert core.search({"query": query}).data["results"] == []


def test_limit_caps_results_and_invalid_limits_are_rejected_not_clamped(built):
    _base, _vault, core, _ = built
    assert len(core.search({"query": "the", "limit": 1}).data["results"]) == 1
    for bad in (0, 51, 1.5, -1):
        assert code_of(core.search, {"query": "x", "limit": bad}).code == "INVALID_LIMIT"


VALIDATION = [
    ("search", {}, "INVALID_QUERY", True), ("search", {"query": 5}, "INVALID_QUERY", True),
    ("search", {"query": " \t\u3000"}, "INVALID_QUERY", False), ("search", {"query": "x" * 1001}, "INVALID_QUERY", False),
    ("search", {"query": "x", "mode": "fast"}, "INVALID_MODE", False), ("search", {"query": "x", "mode": 1}, "INVALID_MODE", True),
    ("search", {"query": "x", "limit": "5"}, "INVALID_LIMIT", True), ("search", {"query": "x", "limit": None}, "INVALID_LIMIT", True),
    ("related", {"type": "doc", "id": "a"}, "INVALID_TYPE", False), ("related", {"id": "a"}, "INVALID_TYPE", True),
    ("related", {"type": "note", "id": "abc"}, "INVALID_ID", False), ("related", {"type": "chunk", "id": "0" * 32}, "INVALID_ID", False),
    ("related", {"type": "note"}, "INVALID_ID", True),
    ("get_note", {"noteId": ""}, "INVALID_ID", False), ("get_note", {"noteId": "A" * 32}, "INVALID_ID", False),
    ("get_note", {}, "INVALID_ID", True), ("get_note", {"noteId": "0" * 32, "allowLarge": "yes"}, "INVALID_PARAMETER", True),
    ("get_chunk", {"noteId": "0" * 32, "chunkIndex": -1}, "INVALID_ID", False),
    ("get_chunk", {"noteId": "0" * 32, "chunkIndex": "1"}, "INVALID_ID", True),
    ("get_attachment", {"vaultRelativePath": ""}, "INVALID_PATH", False),
    ("get_attachment", {"vaultRelativePath": 3}, "INVALID_PATH", True),
    ("get_attachment", {"vaultRelativePath": "a.png", "download": 1}, "INVALID_PARAMETER", True),
]


@pytest.mark.parametrize("tool,args,code,protocol", VALIDATION, ids=lambda v: str(v)[:30])
def test_malformed_arguments_get_the_documented_code(built, tool, args, code, protocol):
    _base, _vault, core, _ = built
    fn = {"search": core.search, "related": core.related, "get_note": core.get_note, "get_chunk": core.get_chunk,
          "get_attachment": core.get_attachment}[tool]
    error = code_of(fn, args)
    assert (error.code, error.protocol) == (code, protocol)
    assert error.rpc_code == (-32602 if protocol else -32000)


# -- embedding and hybrid --------------------------------------------------------------------------
def test_without_a_model_embedding_mode_fails_and_hybrid_falls_back_with_a_warning(built):
    _base, _vault, core, _ = built
    assert code_of(core.search, {"query": "cat", "mode": "embedding"}).code == "EMBEDDING_UNAVAILABLE"
    reply = core.search({"query": "cat", "mode": "hybrid"})
    assert reply.data["usedMode"] == "lexical" and [w["code"] for w in reply.warnings] == ["EMBEDDING_UNAVAILABLE"]
    assert core.related({"type": "note", "id": note_id("notes/cats.md")}).warnings == []


def test_a_configured_model_that_cannot_load_makes_defaults_fall_back_visibly(tmp_path):
    vault = build_vault(tmp_path)
    core = Core(settings(vault, tmp_path / "idx", embedding__enabled="true", embedding__model=str(tmp_path / "missing.json")))
    core.index(full=True)
    search = core.search({"query": "cat"})
    related = core.related({"type": "note", "id": note_id("notes/cats.md")})
    for reply in (search, related):
        assert reply.data["usedMode"] == "lexical" and [w["code"] for w in reply.warnings] == ["EMBEDDING_UNAVAILABLE"]


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    base = tmp_path_factory.mktemp("emb")
    vault = build_vault(base)
    model = build_model(base / "model.json", vault)
    core = Core(settings(vault, base / "idx", embedding__enabled="true", embedding__model=str(model), **EXCLUDE))
    core.index(full=True)
    return base, vault, model, core


def test_embedding_search_finds_a_note_by_a_word_it_does_not_contain(embedded):
    _base, _vault, _model, core = embedded
    assert core.search({"query": "kitten", "mode": "lexical"}).data["results"] == []
    reply = core.search({"query": "kitten", "mode": "embedding", "limit": 3})
    envelope_ok(reply, "SearchData")
    assert reply.data["results"][0]["path"] in ("notes/cats.md", "notes/dogs.md")
    assert reply.data["results"][0]["reason"] == "embedding_match"


def test_with_a_model_search_defaults_to_hybrid_and_related_to_embedding(embedded):
    _base, _vault, _model, core = embedded
    assert core.search({"query": "rain"}).data["usedMode"] == "hybrid"
    related = core.related({"type": "note", "id": note_id("notes/weather.md")})
    assert related.data["usedMode"] == "embedding" and related.warnings == []
    assert all(r["reason"] == "related_embedding" for r in related.data["results"])


def test_related_excludes_the_input_note_or_chunk(embedded):
    _base, _vault, _model, core = embedded
    nid = note_id("notes/cats.md")
    for mode in ("lexical", "embedding", "hybrid"):
        by_note = core.related({"type": "note", "id": nid, "mode": mode, "limit": 50}).data
        assert by_note["input"] == {"type": "note", "id": nid}
        assert all(r["noteId"] != nid for r in by_note["results"])
        by_chunk = core.related({"type": "chunk", "id": f"{nid}:1", "mode": mode, "limit": 50}).data["results"]
        assert all(r["id"] != f"{nid}:1" for r in by_chunk)
    assert code_of(core.related, {"type": "note", "id": "0" * 32}).code == "NOTE_NOT_FOUND"
    assert code_of(core.related, {"type": "chunk", "id": f"{nid}:99"}).code == "CHUNK_NOT_FOUND"


def test_changing_the_embedding_model_makes_the_index_incompatible(tmp_path):
    vault = build_vault(tmp_path)
    model = build_model(tmp_path / "model.json", vault)
    core = Core(settings(vault, tmp_path / "idx", embedding__enabled="true", embedding__model=str(model)))
    core.index(full=True)
    build_model(model, vault, seed=1)  # same path, new vectors: a new model
    assert code_of(core.search, {"query": "cat"}).code == "INDEX_INCOMPATIBLE"
    assert code_of(core.related, {"type": "note", "id": note_id("notes/cats.md")}).code == "INDEX_INCOMPATIBLE"
    status = core.status(port=1).data["index"]
    assert status["freshness"] == "incompatible" and status["reindexRequired"]
    assert status["reindexReasons"] == ["INDEX_EMBEDDINGS_STALE"] and status["embeddingState"] == "incompatible"
    build_model(model, vault, dimension=4)
    assert core.state().reasons == ["INDEX_EMBEDDING_DIMENSION_MISMATCH"]
    core.index(full=True)
    assert core.search({"query": "cat"}).data["freshness"] == "fresh"


def test_get_note_and_get_chunk_resolve_safely_without_the_incompatible_index(tmp_path):
    vault = build_vault(tmp_path)
    model = build_model(tmp_path / "model.json", vault)
    core = Core(settings(vault, tmp_path / "idx", embedding__enabled="true", embedding__model=str(model)))
    core.index(full=True)
    build_model(model, vault, seed=2)
    nid = note_id("notes/cats.md")
    note = core.get_note({"noteId": nid})
    assert note.data["freshness"] == "incompatible" and [w["code"] for w in note.warnings] == ["INDEX_INCOMPATIBLE"]
    assert note.data["title"] == "Cat care"
    chunk = core.get_chunk({"noteId": nid, "chunkIndex": 1})
    assert chunk.data["heading"] == "Feeding" and chunk.data["freshness"] == "incompatible"
    assert code_of(core.get_note, {"noteId": note_id("notes/escape.md")}).code == "NOTE_NOT_FOUND"


# -- freshness ---------------------------------------------------------------------------------------
def test_a_vault_edit_makes_search_stale_until_reindexed(fresh):
    _base, vault, core = fresh
    cats = vault / "notes/cats.md"
    cats.write_text(cats.read_text() + "\nmore\n")
    reply = core.search({"query": "cat"})
    assert reply.data["freshness"] == "stale" and reply.warnings[0]["code"] == "INDEX_STALE"
    assert core.status(port=1).data["index"]["pendingChangeCount"] == 1
    other = core.get_note({"noteId": note_id("notes/dogs.md")})
    assert other.data["freshness"] == "fresh" and other.warnings == []
    changed = core.get_note({"noteId": note_id("notes/cats.md")})
    assert changed.data["freshness"] == "stale" and changed.warnings[0]["code"] == "INDEX_STALE"
    assert core.index(full=False).data["mode"] == "incremental"
    again = core.search({"query": "cat"})
    assert again.data["freshness"] == "fresh" and again.warnings == []


def test_new_and_deleted_notes_are_stale_then_reflected_after_an_incremental_update(fresh):
    _base, vault, core = fresh
    (vault / "notes/new.md").write_text("# Zebra\nzebra stripes\n")
    (vault / "notes/dogs.md").unlink()
    assert core.search({"query": "zebra"}).data["freshness"] == "stale"
    summary = core.index(full=False).data
    assert summary["notesIndexed"] == 1
    assert core.search({"query": "zebra"}).data["results"][0]["path"] == "notes/new.md"
    assert code_of(core.get_note, {"noteId": note_id("notes/dogs.md")}).code == "NOTE_NOT_FOUND"


@pytest.mark.parametrize("phase", ["pending", "updating"])
def test_a_held_writer_shows_as_pending_or_updating_while_reads_use_the_last_index(fresh, phase):
    base, vault, core = fresh
    gate = base / "gate"
    gate.touch()
    (vault / "notes/new.md").write_text("# Zebra\nzebra stripes\n")
    env = clean_env(**{HOLD_AT: phase, HOLD_FILE: str(gate)})
    proc = subprocess.Popen([*CLI, "index", "--vault-root", str(vault), "--index-dir", str(base / "idx"),
                             "--exclude", "drafts/"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while core.state().freshness != phase and time.monotonic() < deadline:
            time.sleep(0.05)
        reply = core.search({"query": "zebra cat"})
        assert reply.data["freshness"] == phase
        assert [w["code"] for w in reply.warnings] == [f"INDEX_{phase.upper()}"]
        assert all(r["path"] != "notes/new.md" for r in reply.data["results"])
        assert core.get_note({"noteId": note_id("notes/dogs.md")}).data["freshness"] == phase
    finally:
        gate.unlink()
        proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert core.search({"query": "zebra"}).data["freshness"] == "fresh"


def test_a_second_writer_gets_index_busy(fresh):
    base, vault, core = fresh
    gate = base / "gate"
    gate.touch()
    env = clean_env(**{HOLD_AT: "updating", HOLD_FILE: str(gate)})
    proc = subprocess.Popen([*CLI, "reindex", "--vault-root", str(vault), "--index-dir", str(base / "idx"),
                             "--exclude", "drafts/"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        deadline = time.monotonic() + 30
        while core.state().freshness != "updating" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert code_of(core.index, full=False).code == "INDEX_BUSY"
    finally:
        gate.unlink()
        proc.communicate(timeout=30)


def test_a_vanished_vault_gives_unknown_freshness_and_errors_without_absolute_paths(fresh):
    base, vault, core = fresh
    shutil.rmtree(vault)
    reply = core.search({"query": "cat"})
    assert reply.data["freshness"] == "unknown" and reply.warnings[0]["code"] == "INDEX_FRESHNESS_UNKNOWN"
    failures = [code_of(core.get_note, {"noteId": note_id("notes/cats.md")}),
                code_of(core.get_attachment, {"vaultRelativePath": "attachments/pic.png"})]
    assert [f.code for f in failures] == ["NOTE_NOT_FOUND", "ATTACHMENT_NOT_FOUND"]
    for failure in failures:
        assert str(base) not in json.dumps(failure.body()) and "/" not in failure.message.replace("/v1", "")


def test_without_an_index_search_fails_with_index_not_found_and_no_file_is_created(tmp_path):
    vault = build_vault(tmp_path)
    core = Core(settings(vault, tmp_path / "idx"))
    for fn, args in ((core.search, {"query": "cat"}), (core.related, {"type": "note", "id": "0" * 32}),
                     (core.get_note, {"noteId": "0" * 32}), (core.get_chunk, {"noteId": "0" * 32, "chunkIndex": 0})):
        assert code_of(fn, args).code == "INDEX_NOT_FOUND"
    assert core.status(port=1).data["index"]["reindexReasons"] == ["INDEX_NOT_FOUND"]
    assert not (tmp_path / "idx").exists()


# -- size limits ----------------------------------------------------------------------------------
def test_oversized_notes_need_allow_large(built):
    _base, _vault, core, _ = built
    nid = note_id("notes/large.md")
    error = code_of(core.get_note, {"noteId": nid})
    assert error.code == "QUERY_TOO_LARGE" and error.details["limit"] == 200 * 1024
    assert core.get_note({"noteId": nid, "allowLarge": True}).data["size"] > 200 * 1024


def test_attachments_give_metadata_by_default_and_base64_bytes_on_download(built):
    _base, vault, core, _ = built
    meta = core.get_attachment({"vaultRelativePath": "attachments/pic.png"})
    envelope_ok(meta, "AttachmentMetadata")
    assert meta.data == {"path": "attachments/pic.png", "fileName": "pic.png", "contentType": "image/png",
                         "size": (vault / "attachments/pic.png").stat().st_size, "downloadAvailable": True}
    import base64

    down = core.get_attachment({"vaultRelativePath": "attachments/pic.png", "download": True}).data
    assert base64.b64decode(down["content"]) == (vault / "attachments/pic.png").read_bytes()
    assert down["encoding"] == "base64" and down["contentType"] == "image/png"
    unknown = core.get_attachment({"vaultRelativePath": "attachments/blob.unknownext"}).data
    assert unknown["contentType"] == "application/octet-stream"


def test_downloads_over_ten_mib_need_allow_large(built):
    _base, _vault, core, _ = built
    args = {"vaultRelativePath": "attachments/eleven.bin", "download": True}
    assert code_of(core.get_attachment, args).code == "QUERY_TOO_LARGE"
    assert core.get_attachment({**args, "allowLarge": True}).data["size"] == 11 * 1024 * 1024
    assert core.get_attachment({"vaultRelativePath": "attachments/eleven.bin"}).data["downloadAvailable"] is False


def test_a_download_over_fifty_mib_fails_even_with_allow_large_without_reading_the_file(built, monkeypatch):
    _base, _vault, core, _ = built
    real_open = builtins.open

    def guarded(file, *args, **kwargs):
        assert not str(file).endswith("huge.bin"), "the file was opened before the size check"
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)
    error = code_of(core.get_attachment, {"vaultRelativePath": "attachments/huge.bin", "download": True, "allowLarge": True})
    assert error.code == "QUERY_TOO_LARGE" and error.details["limit"] == 50 * 1024 * 1024


# -- path safety ------------------------------------------------------------------------------------
PATHS = [
    ("../outside/secret.txt", "PATH_OUTSIDE_VAULT"), ("attachments/../../outside/secret.txt", "PATH_OUTSIDE_VAULT"),
    ("/etc/passwd", "PATH_OUTSIDE_VAULT"), ("C:/Windows/win.ini", "PATH_OUTSIDE_VAULT"),
    ("attachments/escape.txt", "PATH_OUTSIDE_VAULT"), ("attachments/escape-dir/secret.txt", "PATH_OUTSIDE_VAULT"),
    ("attachments/%2e%2e/x", "ATTACHMENT_NOT_FOUND"), ("attachments\\..\\x", "INVALID_PATH"),
    ("attachments/pic.png\x00.txt", "INVALID_PATH"), ("attachments/", "INVALID_PATH"), ("attachments/sub", "INVALID_PATH"),
    ("notes/cats.md", "ATTACHMENT_NOT_ALLOWED"), ("notes/CATS.MD", "ATTACHMENT_NOT_ALLOWED"),
    (".env", "ATTACHMENT_NOT_ALLOWED"), (".obsidian/app.json", "ATTACHMENT_NOT_ALLOWED"),
    ("attachments/to-hidden.txt", "ATTACHMENT_NOT_ALLOWED"), ("node_modules/pkg/readme.md", "ATTACHMENT_NOT_ALLOWED"),
    ("attachments/missing.png", "ATTACHMENT_NOT_FOUND"),
]


@pytest.mark.parametrize("path,code", PATHS)
def test_attachment_paths_are_checked_by_the_shared_rules(built, path, code):
    base, _vault, core, _ = built
    error = code_of(core.get_attachment, {"vaultRelativePath": path})
    assert error.code == code
    assert str(base) not in json.dumps(error.body())


def test_a_symlink_inside_the_vault_to_an_allowed_file_is_followed(built):
    _base, _vault, core, _ = built
    assert core.get_attachment({"vaultRelativePath": "attachments/inside-link.txt"}).data["fileName"] == "inside-link.txt"


def test_a_note_replaced_by_a_symlink_out_of_the_vault_is_refused(fresh):
    base, vault, core = fresh
    dogs = vault / "notes/dogs.md"
    dogs.unlink()
    os.symlink(base / "outside/secret.md", dogs)
    assert code_of(core.get_note, {"noteId": note_id("notes/dogs.md")}).code == "PATH_OUTSIDE_VAULT"


def test_no_error_carries_content_canaries_queries_or_absolute_paths(built):
    base, _vault, core, _ = built
    calls = [(core.search, {"query": " ", "x": CANARY_QUERY}), (core.search, {"query": CANARY_QUERY * 100}),
             (core.get_note, {"noteId": note_id("notes/large.md")}),
             (core.get_chunk, {"noteId": note_id("notes/cats.md"), "chunkIndex": 9}),
             (core.get_attachment, {"vaultRelativePath": f"attachments/{CANARY_QUERY}.png"}),
             (core.get_attachment, {"vaultRelativePath": f"{base}/vault/attachments/pic.png"})]
    for fn, args in calls:
        text = json.dumps(code_of(fn, args).body())
        for secret in (CANARY_QUERY, CANARY_BODY, CANARY_FRONT, CANARY_ATTACH, str(base)):
            assert secret not in text


# -- the catalogue ------------------------------------------------------------------------------------
def test_the_error_catalogue_matches_the_reference_codes():
    listed = {e["code"]: (e["http_status"], e["jsonrpc_code"]) for e in CATALOGUE["errors"]}
    assert listed == {code: (c.http, c.rpc) for code, c in catalogue_code.ERRORS.items()}
    assert {w["code"] for w in CATALOGUE["warnings"]} == set(catalogue_code.WARNINGS)
    assert set(CATALOGUE["reindex_reasons"]["codes"]) == set(catalogue_code.REINDEX_REASONS)


def test_application_codes_stay_in_the_json_rpc_server_range():
    for code in catalogue_code.ERRORS.values():
        assert code.rpc is None or -32099 <= code.rpc <= -32000


def test_every_catalogued_code_cites_a_source_or_a_profile_reason():
    for entry in CATALOGUE["errors"] + CATALOGUE["warnings"]:
        assert entry.get("source") or entry.get("reason"), entry["code"]
