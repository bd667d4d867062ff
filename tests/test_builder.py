"""The SectionSource v0 builder: golden vectors, their schema, and the rules around them.
(tests/test_builder_differential.py checks the vectors and the builder against upstream.)"""

from __future__ import annotations

import datetime
import json
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from reference.section_source import _make_vectors
from reference.section_source.builder import (
    MAX_INPUT_CHARS,
    MAX_SECTIONS,
    SCHEMA_ID,
    InputTooComplex,
    InputTooLarge,
    build_section_source,
    note_title,
    slug,
    split_frontmatter,
)
from reference.section_source.markdown_parser import MAX_DEPTH, MAX_IMAGE_DEPTH

ROOT = Path(__file__).resolve().parent.parent
VECTORS_FILE = ROOT / "specs" / "vectors" / "section-source-v0.json"
VECTOR_SCHEMA = ROOT / "schemas" / "golden-vector.schema.json"
OUTPUT_SCHEMA = ROOT / "schemas" / "section-source-v0.schema.json"
DOCUMENT = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))
VECTORS = DOCUMENT["vectors"]
TOO_LARGE = "Note outline input exceeds 1000000 characters; refusing to parse unbounded Markdown."
TOP_KEYS = ["schema", "path", "title", "sections", "truncated"]
SECTION_KEYS = ["section_id", "heading_id", "level", "heading_path", "heading_text",
                "child_section_ids", "body_available", "body_returned", "snippet_returned"]


def _load_schema(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _without(output: dict, fields: list[str]) -> dict:
    return {k: v for k, v in output.items() if k not in fields}


# --- Golden vectors ----------------------------------------------------------------------


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_every_vector_builds_to_its_expected_output(vector):
    ignored = vector.get("implementation_defined", [])
    actual = build_section_source(vector["path"], vector["markdown"])
    assert _without(actual, ignored) == _without(vector["expected"], ignored)


def test_the_vectors_file_validates_against_its_schema():
    schema = _load_schema(VECTOR_SCHEMA)
    Draft202012Validator.check_schema(schema)
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(DOCUMENT)]
    assert not errors, errors[:5]


def test_the_vector_schema_rejects_unnormalized_paths_and_unknown_fields():
    validator = Draft202012Validator(_load_schema(VECTOR_SCHEMA))
    vector = dict(VECTORS[0])
    for bad_path in ["/abs.md", "a//b.md", "./a.md", "a/../b.md", " a.md", "a\\b.md", "a/", "a/."]:
        assert not validator.is_valid({**DOCUMENT, "vectors": [{**vector, "path": bad_path}]}), bad_path
    assert not validator.is_valid({**DOCUMENT, "vectors": [{**vector, "extra": 1}]})
    assert not validator.is_valid({**DOCUMENT, "vectors": [{**vector, "rules": ["no-such-rule"]}]})


def test_every_expected_output_validates_against_the_section_source_schema():
    if not OUTPUT_SCHEMA.is_file():
        pytest.skip("schemas/section-source-v0.schema.json is not there yet")
    validator = Draft202012Validator(_load_schema(OUTPUT_SCHEMA))
    for vector in VECTORS:
        errors = [e.message for e in validator.iter_errors(vector["expected"])]
        assert not errors, (vector["id"], errors[:3])


def test_vector_ids_and_paths_are_unique_and_the_expected_path_is_the_vector_path():
    assert len({v["id"] for v in VECTORS}) == len(VECTORS)
    assert len({v["path"] for v in VECTORS}) == len(VECTORS)
    assert all(v["expected"]["path"] == v["path"] for v in VECTORS)


def test_there_are_enough_vectors_and_every_rule_has_one():
    assert len(VECTORS) >= 48
    rules = set(_load_schema(VECTOR_SCHEMA)["$defs"]["rule"]["enum"])
    covered = {rule for v in VECTORS for rule in v["rules"]}
    assert rules == covered, rules ^ covered


def test_only_the_non_string_title_vector_is_implementation_defined():
    marked = {v["id"]: v["implementation_defined"] for v in VECTORS if "implementation_defined" in v}
    assert marked == {"title-non-string": ["title"]}


def test_the_generator_holds_the_same_inputs_as_the_vectors_file():
    generated = _make_vectors.build_inputs()
    inputs = [(v["id"], v["path"], v["markdown"], v.get("implementation_defined")) for v in generated]
    assert inputs == [(v["id"], v["path"], v["markdown"], v.get("implementation_defined")) for v in VECTORS]


# --- Output shape ---------------------------------------------------------------------------


def test_output_keys_come_in_the_contract_order():
    out = build_section_source("inbox/example.md", "---\ntitle: Example\n---\n# Example\n\nText.\n")
    assert list(out) == TOP_KEYS
    assert [list(s) for s in out["sections"]] == [SECTION_KEYS]
    assert out["sections"][0]["section_id"] == "inbox-example-md:h1-example-0001"
    assert out["schema"] == SCHEMA_ID


def test_body_text_and_frontmatter_values_never_reach_the_output():
    out = build_section_source("a.md", "---\ntitle: T\nsecret: fm-canary\n---\n# H\n\nbody-canary\n")
    assert "canary" not in json.dumps(out)


def test_the_section_id_prefix_falls_back_to_note_when_the_path_slug_is_empty():
    out = build_section_source("\u30e1\u30e2/\u65e5\u672c\u8a9e", "# A\n")
    assert out["sections"][0]["section_id"] == "note:h1-a-0001"
    assert out["title"] == "\u65e5\u672c\u8a9e"


def test_the_same_input_gives_the_same_output():
    text = "# A\n\n> ## B\n\ntext\n" * 50
    assert build_section_source("a.md", text) == build_section_source("a.md", text)


# --- Slugs, frontmatter, titles --------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("Caf\u00e9 Cr\u00e8me", "caf-cr-me"),
    ("\u65e5\u672c\u8a9e", ""),
    ("", ""),
    ("--a--", "a"),
    ("---", ""),
    ("A  B", "a-b"),
    ("Deep/Nested Dir/Note Name.markdown", "deep-nested-dir-note-name-markdown"),
    ("inbox/example.md", "inbox-example-md"),
    ("\u212a", "k"),  # Kelvin sign lower-cases to ASCII k, as in JavaScript
    ("\u0130x", "i-x"),  # dotted capital I lower-cases to i plus a combining dot
])
def test_slug(text, expected):
    assert slug(text) == expected


@pytest.mark.parametrize(("text", "frontmatter", "body"), [
    ("---\ntitle: A\n---\nbody\n", {"title": "A"}, "body"),
    ("---\r\ntitle: A\r\n---\r\nbody\r\n", {"title": "A"}, "body"),
    ("---\ntitle: A\n---", {}, "---\ntitle: A\n---"),
    ("\ufeff---\ntitle: A\n---\n", {}, "\ufeff---\ntitle: A\n---"),
    ("---\n---\nx", {}, "---\n---\nx"),
    ("---\n\n---\nx", {}, "x"),
    ("---\ntitle: [\n---\nx", {}, "x"),
    ("---\na: 1\na: 2\n---\nx", {}, "x"),
    ("---\n- a\n---\nx", {}, "x"),
    ("---\nk: yes\nt: 1:30\nn: =\n---\n", {"k": "yes", "t": "1:30", "n": "="}, ""),
    ("x \u00a0\ufeff\u3000\n", {}, "x"),
    ("x\u0085", {}, "x\u0085"),  # U+0085 is not JavaScript whitespace
])
def test_split_frontmatter(text, frontmatter, body):
    assert split_frontmatter(text) == (frontmatter, body)


@pytest.mark.parametrize(("path", "frontmatter", "expected"), [
    ("a/b.md", {"title": "  T  "}, "T"),
    ("a/my_note--draft.md", {}, "my note draft"),
    ("a/x.MARKDOWN", {}, "x"),
    ("a/x.md.md", {}, "x.md"),
    ("a/__.md", {}, None),
    ("a/x.mar\u212adown", {}, "x.mar\u212adown"),  # no Unicode case folding of the extension
    ("a/b.md", {"title": " \t"}, "b"),
    ("a/b.md", {"title": None}, "b"),
])
def test_note_title(path, frontmatter, expected):
    assert note_title(path, frontmatter) == expected


@pytest.mark.parametrize("value", [2024, 1.5, True, ["a"], {"a": 1}, datetime.date(2024, 1, 2)])
def test_a_non_string_title_falls_back_to_the_file_name(value):
    """Upstream leaves this implementation-defined; this builder documents the fallback."""
    assert note_title("notes/my_note.md", {"title": value}) == "my note"


def test_a_bom_after_the_frontmatter_is_dropped_like_a_leading_one():
    out = build_section_source("a.md", "---\ntitle: t\n---\n\ufeff# A\n")
    assert [s["heading_text"] for s in out["sections"]] == ["A"]


# --- Caps --------------------------------------------------------------------------------------


def test_a_body_of_exactly_the_cap_is_built():
    assert build_section_source("a.md", "# H\n" + "x" * (MAX_INPUT_CHARS - 4))["sections"]


def test_one_character_over_the_cap_is_refused_with_the_upstream_message():
    with pytest.raises(InputTooLarge) as caught:
        build_section_source("a.md", "# H\n" + "x" * (MAX_INPUT_CHARS - 3))
    assert str(caught.value) == TOO_LARGE
    assert isinstance(caught.value, ValueError)


def test_an_astral_character_counts_two_units():
    emoji = "\U0001F600"
    assert build_section_source("a.md", emoji * (MAX_INPUT_CHARS // 2))["sections"] == []
    with pytest.raises(InputTooLarge):
        build_section_source("a.md", emoji * (MAX_INPUT_CHARS // 2) + "x")


def test_frontmatter_and_trailing_whitespace_do_not_count_toward_the_cap():
    body = "x" * MAX_INPUT_CHARS
    assert build_section_source("a.md", "---\ntitle: T\n---\n" + body + " \n\t\u00a0\n")["title"] == "T"


def test_sections_stop_at_the_cap_and_truncated_is_set_only_past_it():
    exact = build_section_source("a.md", "# s\n" * MAX_SECTIONS)
    over = build_section_source("a.md", "# s\n" * (MAX_SECTIONS + 1))
    assert (len(exact["sections"]), exact["truncated"]) == (MAX_SECTIONS, False)
    assert (len(over["sections"]), over["truncated"]) == (MAX_SECTIONS, True)
    assert over["sections"][-1]["heading_id"] == "h1-s-0500"


def test_a_large_note_builds_well_under_two_seconds():
    block = "## Heading {}\n\nSome *body* text with `code` and a [link](https://example.com) here.\n\n"
    text = "".join(block.format(i) for i in range(10_000))
    text = (text + "x" * MAX_INPUT_CHARS)[:MAX_INPUT_CHARS]
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        out = build_section_source("big.md", text)
        best = min(best, time.perf_counter() - start)
    assert out["truncated"] and len(out["sections"]) == MAX_SECTIONS
    assert best < 2.0, f"{best:.2f} s"


# --- Deep nesting --------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "headings"), [
    (">" * 1_000 + " # deep\n", ["deep"]),
    ("- " * 100 + "# deep\n", ["deep"]),
    ("1. " * 100 + "# deep\n", ["deep"]),
    ("# " + "[" * 200 + "x" + "](u)" * 200 + "\n", ["[" * 199 + " x " + "](u)" * 199]),
], ids=["quotes-1000", "bullets-100", "ordered-100", "links-200"])
def test_nesting_that_upstream_outlines_is_outlined(text, headings):
    """The issue's cases, which an older builder refused as too deeply nested."""
    assert [s["heading_text"] for s in build_section_source("deep.md", text)["sections"]] == headings


@pytest.mark.parametrize("text", [
    ">" * 20_000 + " # deep",
    "> " * 20_000 + "# deep",
    "1. " * 20_000 + "# deep",
    "- " * 20_000 + "# deep",
    "[" * 20_000 + "x" + "]" * 20_000,
    "# " + "[" * 20_000 + "x" + "](u)" * 20_000,
    "![" * 5_000 + "x" + "](u)" * 5_000,
    "[" * 300_000,
    "# " + "<a>" * 100_000,
    "# " + "*a " * 20_000 + "x" + " a*" * 20_000,
], ids=["quote-markers", "quotes", "ordered-lists", "bullet-lists", "brackets", "links", "images",
        "open-brackets", "html", "emphasis"])
def test_deep_nesting_is_outlined_in_seconds(text):
    start = time.perf_counter()
    out = build_section_source("deep.md", text)
    assert out["schema"] == SCHEMA_ID
    assert time.perf_counter() - start < 20


def test_deeply_nested_emphasis_in_a_heading_flattens_to_its_text():
    out = build_section_source("a.md", "# " + "*" * 100_000 + "deep" + "*" * 100_000)
    assert [s["heading_text"] for s in out["sections"]] == ["deep"]


@pytest.mark.parametrize("text", [">" * (MAX_DEPTH + 1) + " x", "# " + "![" * MAX_IMAGE_DEPTH + "x" + "](u)" * MAX_IMAGE_DEPTH],
                         ids=["containers", "images"])
def test_nesting_past_the_documented_depth_is_a_clean_error(text):
    with pytest.raises(InputTooComplex) as caught:
        build_section_source("deep.md", text)
    assert isinstance(caught.value, ValueError)


def test_a_recursion_error_on_the_first_try_is_retried_on_a_deep_stack():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(_stack()) + 80)
    try:
        out = build_section_source("a.md", "> " * 300 + "# x")
    finally:
        sys.setrecursionlimit(limit)
    assert [s["heading_text"] for s in out["sections"]] == ["x"]
    assert sys.getrecursionlimit() == limit


def _stack() -> list:
    frame, frames = sys._getframe(), []
    while frame:
        frames.append(frame)
        frame = frame.f_back
    return frames


# --- Invariants on generated notes ----------------------------------------------------------

LINE = st.sampled_from([
    "# A", "## B b", "### C", "#### *D*", "###### F", "#", "Text", "", "", "===", "---", "> # Q",
    "- ## L", "1. ### O", "```", "    # code", "<div>", "[r]: /u", "![](x)", "&nbsp;", "***",
    "Caf\u00e9 **x**", "\t# T", "> text", "- ", "  # indented",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINE, max_size=30), st.sampled_from(["\n", "\r\n"]))
def test_generated_notes_give_a_consistent_tree(lines, newline):
    out = build_section_source("gen/note.md", newline.join(lines))
    sections = out["sections"]
    by_id = {s["section_id"]: s for s in sections}
    assert len(by_id) == len(sections)
    for ordinal, section in enumerate(sections, 1):
        assert list(section) == SECTION_KEYS
        assert section["section_id"] == f"gen-note-md:{section['heading_id']}"
        assert section["heading_id"].startswith(f"h{section['level']}-")
        assert section["heading_id"].endswith(f"-{ordinal:04d}")
        assert section["heading_path"][-1] == section["heading_text"]
        for child_id in section["child_section_ids"]:
            child = by_id[child_id]
            assert child["level"] > section["level"]
            assert child["heading_path"][:-1] == section["heading_path"]
    roots = [s for s in sections if len(s["heading_path"]) == 1]
    children = [c for s in sections for c in s["child_section_ids"]]
    assert len(roots) + len(children) == len(sections)
