"""A note's frontmatter metadata, title, heading-aware chunks and attachment references
(indexing.md#markdown-parsing, #chunking), parsed with markdown-it-py and PyYAML.

Chunks follow heading sections; a section over MAX_CHUNK characters is split at block
boundaries into pieces of at most TARGET_CHUNK characters where possible, and a single block
over MAX_CHUNK is cut every MAX_CHUNK characters. Chunk content never includes frontmatter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml
from markdown_it import MarkdownIt

TARGET_CHUNK = 2000
MAX_CHUNK = 4000
DATE_FIELDS = ("date", "created", "updated")
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n|#]+)(?:#[^\[\]\n|]*)?(?:\|[^\[\]\n]*)?\]\]")
_MD = MarkdownIt("commonmark")


class _Loader(yaml.SafeLoader):
    """SafeLoader without the timestamp resolver: date-like values stay strings (indexing.md)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass
class Chunk:
    heading: str | None
    heading_path: list[str]
    content: str


@dataclass
class ParsedNote:
    title: str
    metadata: dict[str, Any]
    chunks: list[Chunk]
    attachment_count: int
    frontmatter_failed: bool = False
    body: str = ""
    warnings: list[str] = field(default_factory=list)


def empty_metadata() -> dict[str, Any]:
    return {"aliases": [], "tags": [], "date": None, "created": None, "updated": None}


def split_frontmatter(text: str) -> tuple[dict[str, Any] | None, str, bool]:
    """(frontmatter mapping or None, body, parse failed)."""
    match = _FRONTMATTER.match(text)
    if not match:
        return None, text, False
    body = text[match.end():]
    try:
        data = yaml.load(match.group(1) or "", Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError:
        return None, body, True
    if data is None:
        return {}, body, False
    if not isinstance(data, dict):
        return None, body, True
    return data, body, False


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def metadata_of(front: dict[str, Any] | None) -> dict[str, Any]:
    meta = empty_metadata()
    if not front:
        return meta
    meta["aliases"] = _strings(front.get("aliases"))
    tags: list[str] = []
    for raw in _strings(front.get("tags")):
        for tag in raw.split() if " " in raw.strip() else [raw]:
            tag = tag.strip().lstrip("#")
            if tag and tag not in tags:
                tags.append(tag)
    meta["tags"] = tags
    for name in DATE_FIELDS:
        value = front.get(name)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            meta[name] = str(value)
    return meta


def _inline_text(token) -> str:
    return "".join(child.content for child in (token.children or []) if child.type in ("text", "code_inline")).strip() \
        or token.content.strip()


def _attachment_targets(tokens) -> set[str]:
    """Relative non-Markdown link and image targets, and ![[embeds]] (not in code)."""
    targets: set[str] = set()

    def consider(raw: str) -> None:
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            return
        parts = urlsplit(raw)
        if parts.scheme or parts.netloc:
            return
        path = unquote(parts.path)
        if path and not path.lower().endswith((".md", ".markdown")) and "." in path.rsplit("/", 1)[-1]:
            targets.add(path)

    for token in tokens:
        if token.type != "inline":
            continue
        for child in token.children or []:
            if child.type == "image":
                consider(child.attrGet("src") or "")
            elif child.type == "link_open":
                consider(child.attrGet("href") or "")
            elif child.type == "text":
                for bang, target, in _WIKILINK.findall(child.content):
                    if bang:
                        consider(target)
    return targets


def _split_section(lines: list[str], blocks: list[tuple[int, int]], start: int, end: int) -> list[str]:
    """Pieces of lines[start:end] at block boundaries, each at most TARGET_CHUNK where it can be."""
    bounds = sorted({start, end, *[b for b, _e in blocks if start < b < end]})
    pieces: list[str] = []
    current = ""
    for a, b in zip(bounds, bounds[1:]):
        block = "".join(lines[a:b])
        if current and len(current) + len(block) > TARGET_CHUNK:
            pieces.append(current)
            current = ""
        current += block
    if current:
        pieces.append(current)
    out: list[str] = []
    for piece in pieces:
        while len(piece) > MAX_CHUNK:
            out.append(piece[:MAX_CHUNK])
            piece = piece[MAX_CHUNK:]
        out.append(piece)
    return [piece for piece in out if piece.strip()]


def chunk_body(body: str, tokens) -> list[Chunk]:
    lines = body.splitlines(keepends=True)
    headings: list[tuple[int, int, str]] = []  # (line, level, text)
    blocks: list[tuple[int, int]] = []
    for index, token in enumerate(tokens):
        if token.level == 0 and token.map and token.nesting != -1:
            blocks.append((token.map[0], token.map[1]))
        if token.type == "heading_open" and token.map:
            headings.append((token.map[0], int(token.tag[1]), _inline_text(tokens[index + 1])))
    sections: list[tuple[int, int, str | None, list[str]]] = []
    stack: list[tuple[int, str]] = []
    first = headings[0][0] if headings else len(lines)
    if first > 0:
        sections.append((0, first, None, []))
    for number, (line, level, text) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        end = headings[number + 1][0] if number + 1 < len(headings) else len(lines)
        sections.append((line, end, text, [t for _l, t in stack]))
    chunks: list[Chunk] = []
    for start, end, heading, path in sections:
        text = "".join(lines[start:end])
        if not text.strip():
            continue
        pieces = [text] if len(text) <= MAX_CHUNK else _split_section(lines, blocks, start, end)
        chunks.extend(Chunk(heading, list(path), piece) for piece in pieces)
    return chunks


def parse_note(text: str, stem: str, *, chunked: bool = True) -> ParsedNote:
    """Parse one note; `chunked=False` registers it without chunks (too large to index)."""
    front, body, failed = split_frontmatter(text)
    meta = metadata_of(front)
    tokens = _MD.parse(body)
    title = front.get("title") if front and isinstance(front.get("title"), str) and front["title"].strip() else None
    if title is None:
        for index, token in enumerate(tokens):
            if token.type == "heading_open" and token.tag == "h1":
                title = _inline_text(tokens[index + 1]) or None
                break
    chunks = chunk_body(body, tokens) if chunked else []
    return ParsedNote(title=(title or stem).strip(), metadata=meta, chunks=chunks,
                      attachment_count=len(_attachment_targets(tokens)), frontmatter_failed=failed, body=body)
