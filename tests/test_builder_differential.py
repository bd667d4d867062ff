"""The builder against the upstream parser stack (remark-parse 11 on micromark 4, js-yaml 4,
through node): the golden vectors, and a few thousand generated notes side by side.

Every difference is put in a class. The documented divergences (builder docstring, docs page
"Known divergences") are allowed; a difference in no documented class fails the test. Needs
node and npm; the npm packages install themselves into a cache directory on first use.
Run `python -m tests.test_builder_differential` for the table of classes.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from reference.section_source import _make_vectors, upstream_js
from reference.section_source.builder import build_section_source
from tests.markdown_fragments import all_notes

ROOT = Path(__file__).resolve().parent.parent
VECTORS_FILE = ROOT / "specs" / "vectors" / "section-source-v0.json"

# A line that is only a complete HTML open or close tag (an HTML block of kind 7).
_TAG_LINE = re.compile(r"^([ \t]*)(<(?:[A-Za-z][A-Za-z0-9-]*(?:[ \t]+[A-Za-z_:][\w.:-]*(?:[ \t]*=[ \t]*"
                       r"(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*[ \t]*/?|/[A-Za-z][A-Za-z0-9-]*[ \t]*)>[ \t]*)$",
                       re.MULTILINE)

DIVERGENCES = {
    "lazy-html-tag": "a lazy line that is a complete HTML tag, in a block quote or list item",
    "yaml-scalars": "js-yaml and ruamel.yaml disagree on a frontmatter title (number-like plain "
                    "scalars, tabs, merge keys)",
}


def _comparable(output: dict, ignored: list[str]) -> dict:
    return {k: v for k, v in output.items() if k not in ignored}


def _ours(path: str, markdown: str) -> dict:
    try:
        return build_section_source(path, markdown)
    except ValueError as exc:
        return {"error": str(exc)}


def _theirs(answer: dict) -> tuple[dict, list[str]]:
    return answer.get("output", {"error": answer.get("error")}), answer.get("implementation_defined") or []


def differences(notes: list[tuple[str, str]]) -> list[dict]:
    """Notes whose outputs differ, each with its class (None: undocumented)."""
    answers = upstream_js.run([{"id": i, "path": p, "markdown": m} for i, (p, m) in enumerate(notes)])
    found = []
    for (path, markdown), answer in zip(notes, answers):
        theirs, ignored = _theirs(answer)
        ours = _ours(path, markdown)
        if _comparable(ours, ignored) != _comparable(theirs, ignored):
            found.append({"path": path, "markdown": markdown, "ours": ours, "theirs": theirs, "class": None})
    _classify(found)
    return found


def _classify(found: list[dict]) -> None:
    for diff in found:
        ours, theirs = diff["ours"], diff["theirs"]
        if ("error" not in ours and "error" not in theirs and diff["markdown"].startswith("---")
                and _comparable(ours, ["title"]) == _comparable(theirs, ["title"])):
            diff["class"] = "yaml-scalars"
    # Counterfactual: with the tag lines escaped, do both sides agree?
    tagged = [d for d in found if d["class"] is None and _TAG_LINE.search(d["markdown"])]
    if not tagged:
        return
    escaped = [(d["path"], _TAG_LINE.sub(r"\1&lt;\2", d["markdown"])[:]) for d in tagged]
    answers = upstream_js.run([{"id": i, "path": p, "markdown": m} for i, (p, m) in enumerate(escaped)])
    for diff, (path, markdown), answer in zip(tagged, escaped, answers):
        theirs, ignored = _theirs(answer)
        if _comparable(_ours(path, markdown), ignored) == _comparable(theirs, ignored):
            diff["class"] = "lazy-html-tag"


def summary(notes: int, found: list[dict]) -> str:
    counts = Counter(d["class"] or "UNDOCUMENTED" for d in found)
    classes = ", ".join(f"{name} {count}" for name, count in sorted(counts.items())) or "none"
    return f"{notes} notes, {len(found)} differences: {classes}"


@pytest.fixture(scope="module")
def upstream() -> None:
    missing = upstream_js.missing_tools()
    if missing:
        pytest.skip(f"the upstream parser runs on node: not on PATH: {', '.join(missing)}")
    upstream_js.install()


def test_the_golden_vectors_are_what_the_upstream_stack_gives(upstream):
    document = json.loads(VECTORS_FILE.read_text(encoding="utf-8"))
    assert _make_vectors.build_vectors() == document, (
        "stale vectors: run python -m reference.section_source._make_vectors and review the diff")


def test_generated_notes_differ_from_upstream_only_in_documented_divergences(upstream, record_property):
    notes = all_notes()
    found = differences(notes)
    text = summary(len(notes), found)
    record_property("differential", text)
    print(f"\ndifferential: {text}")
    assert len(notes) >= 3000
    undocumented = [d for d in found if d["class"] is None]
    assert not undocumented, text + "\n" + "\n".join(
        f"{d['path']} {d['markdown']!r}\n  ours:     {_brief(d['ours'])}\n  upstream: {_brief(d['theirs'])}"
        for d in undocumented[:10])


def test_the_classifier_recognizes_each_documented_divergence(upstream):
    notes = [("gen/a.md", "1. ## oh\n   text\n<custom-tag x=1>\n"), ("gen/a.md", "---\ntitle: -.5\n---\n# h\n")]
    assert sorted(d["class"] for d in differences(notes)) == ["lazy-html-tag", "yaml-scalars"]


def _brief(output: dict) -> str:
    if "error" in output:
        return output["error"]
    return json.dumps([output["title"]] + [[s["heading_text"], s["level"], s["body_available"]]
                                           for s in output["sections"]], ensure_ascii=False)[:300]


if __name__ == "__main__":
    generated = all_notes()
    differing = differences(generated)
    print(summary(len(generated), differing))
    for item in differing:
        print(f"[{item['class'] or 'UNDOCUMENTED'}] {item['markdown']!r}")
    sys.exit(1 if any(d["class"] is None for d in differing) else 0)
