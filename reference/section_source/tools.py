"""The four body-free tools. Each reads one note through paths.read_note and shapes the
builder's output; nothing here touches the filesystem directly."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import builder
from .paths import normalize_request_path, read_note

Result = dict[str, Any]


def _load(vault: Path, raw_path: object) -> tuple[str, str]:
    relative = normalize_request_path(raw_path)
    return relative, read_note(vault, relative)


def get_section_source(vault: Path, raw_path: object) -> Result:
    relative, text = _load(vault, raw_path)
    return builder.build_section_source(relative, text)


def outline_of(source: Result) -> Result:
    """The flat heading outline of a SectionSource output."""
    headings = [
        {"heading_id": s["heading_id"], "level": s["level"], "text": s["heading_text"]}
        for s in source["sections"]
    ]
    return {"path": source["path"], "title": source["title"], "headings": headings,
            "truncated": source["truncated"]}


def get_note_outline(vault: Path, raw_path: object) -> Result:
    return outline_of(get_section_source(vault, raw_path))


def get_document_tree(vault: Path, raw_path: object) -> Result:
    source = get_section_source(vault, raw_path)
    by_id = {s["section_id"]: s for s in source["sections"]}
    child_ids = {c for s in source["sections"] for c in s["child_section_ids"]}

    def node(section: Result) -> Result:
        return {"heading_id": section["heading_id"], "level": section["level"],
                "text": section["heading_text"],
                "children": [node(by_id[c]) for c in section["child_section_ids"] if c in by_id]}

    roots = [node(s) for s in source["sections"] if s["section_id"] not in child_ids]
    return {"path": source["path"], "title": source["title"], "tree": roots,
            "truncated": source["truncated"]}


def get_metadata_facets(vault: Path, raw_path: object) -> Result:
    relative, text = _load(vault, raw_path)
    frontmatter, _body = builder.split_frontmatter(text)
    source = builder.build_section_source(relative, text)
    levels = Counter(str(s["level"]) for s in source["sections"])
    return {"path": relative, "title": source["title"], "has_frontmatter": bool(frontmatter),
            "heading_count": len(source["sections"]),
            "headings_per_level": dict(sorted(levels.items()))}


TOOLS: dict[str, tuple[str, Callable[[Path, object], Result]]] = {
    "get_section_source": (
        "Return body-free SectionSource v0 metadata (section ids, heading paths, "
        "body_available flags) for one vault-relative Markdown note. Never returns bodies "
        "or snippets.",
        get_section_source,
    ),
    "get_note_outline": (
        "Return the flat heading outline of one vault-relative note (ids, levels, heading "
        "text). Body-free.",
        get_note_outline,
    ),
    "get_document_tree": (
        "Return the heading tree of one vault-relative note. Body-free.",
        get_document_tree,
    ),
    "get_metadata_facets": (
        "Return structural facets of one vault-relative note (title, whether it has "
        "frontmatter, heading counts per level). No frontmatter values, no body.",
        get_metadata_facets,
    ),
}
