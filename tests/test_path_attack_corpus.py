"""Static checks of the path-attack corpus (policies/path-attacks.yaml).

These tests only check the data file: that it matches its schema and is usable by
the suite's security tests. They do not judge which entries are attacks; they do
not re-implement path validation.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CORPUS_PATH = REPO / "policies" / "path-attacks.yaml"
SCHEMA_PATH = REPO / "schemas" / "path-attacks.schema.json"

PATH_CATEGORIES = (
    "traversal",
    "encoded",
    "backslash",
    "windows",
    "nul-and-control",
    "absolute",
    "overlong",
    "unicode",
    "empty",
    "sibling-prefix",
    "symlink",
    "directory",
    "non-note",
)
EXPECT_VALUES = {"reject", "error"}
PATH_ENTRY_FIELDS = {"id", "category", "path", "repeat", "expect", "no_echo", "note"}
ARGUMENTS_ENTRY_FIELDS = {"id", "category", "arguments", "expect", "no_echo", "note"}
MIN_PATH_ENTRIES = 150
MIN_ARGUMENTS_ENTRIES = 15
MIN_PER_CATEGORY = 3

# Inputs the fixture serves successfully: none of them may appear as an attack.
SAFE_PATHS = {
    "inbox/example.md",
    "notes/alpha.md",
    "links/inside.md",
    "./inbox/example.md",
    "./notes/alpha.md",
    "./links/inside.md",
}
PLACEHOLDER_RE = re.compile(r"\{(?:vault|root)\}")
# Words an honest error message may contain; as no_echo entries they would misfire.
GENERIC_ERROR_WORDS = {
    "path", "paths", "vault", "note", "notes", "error", "invalid", "outside", "absolute",
    "relative", "traversal", "missing", "not found", "runtime_error", "escape", "secret",
}


@pytest.fixture(scope="module")
def corpus() -> dict:
    with CORPUS_PATH.open(encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def expand(entry: dict) -> str:
    """The string the suite sends (before placeholder substitution)."""
    if "path" in entry:
        return entry["path"]
    rep = entry["repeat"]
    return rep["unit"] * rep["times"] + rep.get("suffix", "")


def test_schema_is_valid_draft_2020_12(schema):
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_corpus_validates_against_schema(corpus, schema):
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(corpus), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in errors[:20])


def test_ids_unique(corpus):
    ids = [e["id"] for e in corpus["paths"]] + [e["id"] for e in corpus["arguments"]]
    dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
    assert not dupes, dupes


def test_enough_entries(corpus):
    assert len(corpus["paths"]) >= MIN_PATH_ENTRIES
    assert len(corpus["arguments"]) >= MIN_ARGUMENTS_ENTRIES


@pytest.mark.parametrize("category", PATH_CATEGORIES)
def test_every_category_present(corpus, category):
    count = sum(1 for e in corpus["paths"] if e["category"] == category)
    assert count >= MIN_PER_CATEGORY, f"{category}: {count} entries"


def test_no_unknown_categories(corpus):
    assert {e["category"] for e in corpus["paths"]} <= set(PATH_CATEGORIES)


def test_path_entries_have_fields_and_allowed_expect(corpus):
    for entry in corpus["paths"]:
        assert set(entry) <= PATH_ENTRY_FIELDS, entry["id"]
        assert {"id", "category", "expect"} <= set(entry), entry
        assert ("path" in entry) != ("repeat" in entry), f"{entry['id']}: exactly one of path/repeat"
        assert entry["expect"] in EXPECT_VALUES, entry["id"]


def test_arguments_entries_have_fields_and_allowed_expect(corpus):
    for entry in corpus["arguments"]:
        assert set(entry) <= ARGUMENTS_ENTRY_FIELDS, entry["id"]
        assert {"id", "category", "arguments", "expect"} <= set(entry), entry
        assert isinstance(entry["arguments"], dict), entry["id"]
        assert entry["expect"] in EXPECT_VALUES, entry["id"]


def test_both_expect_values_used(corpus):
    assert {e["expect"] for e in corpus["paths"]} == EXPECT_VALUES


def test_every_path_decodes_to_str(corpus):
    for entry in corpus["paths"]:
        if "path" in entry:
            assert isinstance(entry["path"], str), f"{entry['id']}: {entry['path']!r}"
        else:
            rep = entry["repeat"]
            assert isinstance(rep["unit"], str) and isinstance(rep.get("suffix", ""), str), entry["id"]
            assert isinstance(rep["times"], int) and not isinstance(rep["times"], bool), entry["id"]
        value = expand(entry)
        assert isinstance(value, str), entry["id"]
        # Must be sendable as JSON text over the MCP transport (no lone surrogates).
        value.encode("utf-8", errors="strict")
        json.dumps({"path": value}, ensure_ascii=False).encode("utf-8", errors="strict")


def test_literal_paths_are_double_quoted_in_source():
    """Every `path` value is a YAML double-quoted scalar, so escapes are explicit."""
    root = yaml.compose(CORPUS_PATH.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    top = {k.value: v for k, v in root.value}
    seen = 0
    for item in top["paths"].value:
        fields = {k.value: v for k, v in item.value}
        if "path" in fields:
            seen += 1
            assert fields["path"].style == '"', f"{fields['id'].value}: path is not double-quoted"
    assert seen


def test_placeholders_are_the_only_braces(corpus):
    for entry in corpus["paths"]:
        stripped = PLACEHOLDER_RE.sub("", expand(entry))
        assert "{" not in stripped and "}" not in stripped, entry["id"]
        if "repeat" in entry:
            assert not PLACEHOLDER_RE.search(expand(entry)), f"{entry['id']}: no placeholders in repeat"


def test_no_entry_is_a_safe_path(corpus):
    for entry in corpus["paths"]:
        value = expand(entry)
        assert value not in SAFE_PATHS, f"{entry['id']}: {value!r} is served by the fixture"
    for entry in corpus["arguments"]:
        args = entry["arguments"]
        is_plain_call = set(args) == {"path"} and isinstance(args["path"], str)
        assert not (is_plain_call and args["path"] in SAFE_PATHS), entry["id"]


def test_no_echo_entries_are_distinctive(corpus):
    for entry in corpus["paths"] + corpus["arguments"]:
        for token in entry.get("no_echo", []):
            assert isinstance(token, str) and len(token) >= 4, entry["id"]
            assert not PLACEHOLDER_RE.search(token), entry["id"]
            assert token.strip().lower() not in GENERIC_ERROR_WORDS, f"{entry['id']}: {token!r}"


def test_overlong_covers_required_sizes(corpus):
    lengths = [len(expand(e)) for e in corpus["paths"] if e["category"] == "overlong"]
    assert any(n >= 5_000 for n in lengths)
    assert any(n >= 65_536 for n in lengths)


def test_literal_paths_stay_short(corpus):
    """Long inputs use `repeat`, keeping the YAML readable."""
    for entry in corpus["paths"]:
        if "path" in entry:
            assert len(entry["path"]) <= 512, entry["id"]
