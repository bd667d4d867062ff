"""SectionSource v0 builder: one note's text in, body-free section metadata out.

Pure functions, no I/O. The behaviour is the upstream builder's (remark-parse 11 on
micromark 4, js-yaml 4) as docs/section-source/ describes it. Markdown is parsed by
markdown-it-py ("commonmark" preset) with the adjustments of micromark_block.py and
micromark_inline.py (markdown_parser.py puts them together); the golden vectors come from the
upstream stack itself (_make_vectors.py, upstream_js.py) and tests/test_builder_differential.py
compares the two on thousands of generated notes.

Known divergences from upstream (each also on the docs page "Known divergences"):
- A lazy line that is a complete HTML tag, in a block quote or list item: micromark lets it
  end the container and open an HTML block; here it stays paragraph text. Example:
  `1. ## oh\n   text\n<custom-tag x=1>` gives `oh` body_available true upstream, false here.
- YAML: ruamel.yaml and js-yaml disagree on a few plain scalars and layouts, which only
  change the title: `title: -.5` and `title: 1_000` are numbers here (so the file name is the
  title) but strings upstream; a tab after `title:` or a line of only a tab makes ruamel
  reject the frontmatter (title from the file name) where js-yaml reads it; a mapping with a
  merge key (`<<`) accepts duplicate keys here and rejects a repeated `<<`, and upstream the
  other way round.
- A non-string frontmatter title (number, boolean, date, list): upstream prints JavaScript's
  String() of it, time-zone dependent for dates; here it counts as absent and the file name
  is the title. The algorithm leaves this implementation-defined.
- Beyond upstream's reach: more than MAX_DEPTH (100,000) nested containers or links, or more
  than MAX_IMAGE_DEPTH (10,000) nested images, raise InputTooComplex. Upstream's recursive
  walks overflow the JavaScript stack thousands of levels earlier, and it needs over two
  minutes for 8,000 nested images; below those depths this builder answers in seconds.
"""

from __future__ import annotations

import bisect
import re
import unicodedata

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor

from .markdown_parser import InputTooComplex, parse_blocks, parse_inline

SCHEMA_ID = "knowtation.section_source/v0"
MAX_INPUT_CHARS = 1_000_000
MAX_SECTIONS = 500

__all__ = ["MAX_INPUT_CHARS", "MAX_SECTIONS", "SCHEMA_ID", "InputTooComplex", "InputTooLarge",
           "build_section_source", "note_title", "slug", "split_frontmatter"]


class InputTooLarge(ValueError):
    """The note body is over MAX_INPUT_CHARS UTF-16 code units."""


_TOO_LARGE = (
    f"Note outline input exceeds {MAX_INPUT_CHARS} characters; "
    "refusing to parse unbounded Markdown."
)

# JavaScript's whitespace set (\s, trim): unlike Python's, it includes U+FEFF and
# excludes U+001C-U+001F and U+0085.
_JS_SPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_SPACE_RUN = re.compile(f"[{_JS_SPACE}]+")
_NOT_JS_SPACE = re.compile(f"[^{_JS_SPACE}]")

_FRONTMATTER = re.compile(r"---\r?\n(.*?)\r?\n---\r?\n(.*)", re.DOTALL)
# ASCII-only: under Unicode case folding the Kelvin sign would match "k".
_NOTE_EXTENSION = re.compile(r"\.(?:md|markdown)\Z", re.IGNORECASE | re.ASCII)
_DASHES_UNDERSCORES = re.compile(r"[-_]+")
_NON_SLUG_RUN = re.compile(r"[^a-z0-9-]+")
_DASH_RUN = re.compile(r"-{2,}")


def _js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)


def _is_blank(text: str) -> bool:
    return _NOT_JS_SPACE.search(text) is None


def slug(text: str) -> str:
    lowered = _NON_SLUG_RUN.sub("-", text.lower())
    collapsed = _DASH_RUN.sub("-", lowered)
    return collapsed.removeprefix("-").removesuffix("-")


class _CoreConstructor(SafeConstructor):
    """ruamel still reads a plain `=` as YAML 1.1's value tag, and then fails on it."""


_CoreConstructor.add_constructor("tag:yaml.org,2002:value", SafeConstructor.construct_yaml_str)


def _load_yaml_mapping(source: str) -> dict:
    # YAML 1.2 core like js-yaml 4 (`yes`, `on`, `1:30` stay strings). Anything
    # js-yaml would reject (bad syntax, duplicate keys, several documents) or a
    # non-mapping document gives no frontmatter; so does a nesting overflow.
    yaml = YAML(typ="safe", pure=True)
    yaml.Constructor = _CoreConstructor
    try:
        value = yaml.load(source)
    except Exception:
        return {}
    return value if isinstance(value, dict) else {}


def split_frontmatter(text: str) -> tuple[dict, str]:
    match = _FRONTMATTER.fullmatch(text)
    if match is None:
        return {}, text.rstrip(_JS_SPACE)
    return _load_yaml_mapping(match.group(1)), match.group(2).rstrip(_JS_SPACE)


def note_title(path: str, frontmatter: dict) -> str | None:
    # A non-string title is implementation-defined upstream (JavaScript's String()
    # of it); this builder treats it, like null, as absent and uses the file name.
    title = frontmatter.get("title")
    if isinstance(title, str) and _js_trim(title):
        return _js_trim(title)
    name = _NOTE_EXTENSION.sub("", path.rsplit("/", 1)[-1])
    return _js_trim(_DASHES_UNDERSCORES.sub(" ", name)) or None


def _utf16_length(text: str) -> int:
    if len(text) * 2 <= MAX_INPUT_CHARS:
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _inline_tokens(token, env: dict) -> list:
    return parse_inline(token.content, env)


_LEAF_TYPES = ("text", "text_special", "code_inline", "html_inline")


def _inline_leaves(tokens: list) -> list:
    """Leaf tokens of an inline tree, image alt trees included, without recursion."""
    leaves, pending = [], [iter(tokens)]
    while pending:
        for token in pending[-1]:
            if token.type == "image":
                pending.append(iter(token.children or ()))
                break
            leaves.append(token)
        else:
            pending.pop()
    return leaves


def _alt_text(image) -> str:
    # mdast's image alt is the plain concatenation of its label (mdast-util-to-string).
    parts = []
    for leaf in _inline_leaves(image.children or []):
        if leaf.type == "softbreak":
            parts.append("\n")
        elif leaf.type in _LEAF_TYPES:
            parts.append(leaf.content)
    return "".join(parts)


def _flatten_heading(children: list) -> str:
    # Shapes micromark's tree: a run of text, escapes, references and soft breaks is one
    # text node; the parts of every child list are joined with one space.
    levels: list[list[str]] = [[]]
    run: list[str] = []

    def end_run() -> None:
        if run:
            levels[-1].append("".join(run))
            run.clear()

    for token in children:
        kind = token.type
        if kind in ("text", "text_special"):
            run.append(token.content)
            continue
        if kind == "softbreak":
            run.append("\n")
            continue
        end_run()
        if kind == "hardbreak":
            levels[-1].append(" ")
        elif kind in ("code_inline", "html_inline"):
            levels[-1].append(token.content)
        elif kind == "image":
            levels[-1].append(_alt_text(token))
        elif token.nesting == 1:
            levels.append([])
        elif token.nesting == -1:
            closed = levels.pop()
            levels[-1].append(" ".join(closed))
    end_run()
    joined = " ".join(levels[0])
    return _js_trim(_JS_SPACE_RUN.sub(" ", unicodedata.normalize("NFC", joined)))


def _is_substantive(token, env: dict) -> bool:
    kind = token.type
    if kind == "hr":
        return True
    if kind in ("fence", "code_block", "html_block"):
        return not _is_blank(token.content)
    if kind != "inline":
        return False
    # A letter or digit opening the content can only be text.
    first = _NOT_JS_SPACE.search(token.content)
    if first is None:
        return False
    if first.group().isalnum():
        return True
    return any(
        leaf.type in _LEAF_TYPES and not _is_blank(leaf.content)
        for leaf in _inline_leaves(_inline_tokens(token, env))
    )


def _scan(body: str) -> tuple[list, list[int]]:
    """Headings as (level, first line, line after, text) and the first lines of the
    substantive top-level non-heading blocks. Headings past the section cap matter
    only for body_available windows, so their text is not built."""
    # micromark drops one leading byte order mark before parsing.
    source = body[1:] if body.startswith("\ufeff") else body
    tokens, env = parse_blocks(source)
    headings, substantive_starts = [], []
    block_start, block_substantive = None, False
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            text = None
            if len(headings) < MAX_SECTIONS:
                text = _flatten_heading(_inline_tokens(tokens[index + 1], env))
            headings.append((int(token.tag[1]), token.map[0], token.map[1], text))
        if token.level == 0 and token.nesting >= 0:
            is_heading = token.type == "heading_open"
            block_start = None if is_heading else token.map[0]
            block_substantive = False
        if (
            block_start is not None
            and not block_substantive
            and _is_substantive(token, env)
        ):
            block_substantive = True
            substantive_starts.append(block_start)
    return headings, substantive_starts


def _body_available(headings: list, substantive_starts: list[int]) -> list[bool]:
    # Window of heading i: from its last line to the first line of the next heading of
    # the same or a lower level. A top-level block starting on that first line is the
    # container of that next heading, so it starts before it: the window includes it.
    result = [False] * len(headings)
    later: list[int] = []
    for i in range(len(headings) - 1, -1, -1):
        level, _, line_after, _ = headings[i]
        while later and headings[later[-1]][0] > level:
            later.pop()
        window_end = headings[later[-1]][1] if later else float("inf")
        first = bisect.bisect_left(substantive_starts, line_after)
        result[i] = (
            first < len(substantive_starts) and substantive_starts[first] <= window_end
        )
        later.append(i)
    return result


def build_section_source(path: str, text: str) -> dict:
    frontmatter, body = split_frontmatter(text)
    if _utf16_length(body) > MAX_INPUT_CHARS:
        raise InputTooLarge(_TOO_LARGE)
    headings, substantive_starts = _scan(body)
    available = _body_available(headings, substantive_starts)
    path_slug = slug(path) or "note"

    # The tree is built over the returned sections, so every child id names one of them.
    sections, ancestors = [], []
    for ordinal, (level, _, _, heading_text) in enumerate(headings[:MAX_SECTIONS], 1):
        heading_id = f"h{level}-{slug(heading_text) or 'heading'}-{ordinal:04d}"
        while ancestors and ancestors[-1]["level"] >= level:
            ancestors.pop()
        parent = ancestors[-1] if ancestors else None
        section = {
            "section_id": f"{path_slug}:{heading_id}",
            "heading_id": heading_id,
            "level": level,
            "heading_path": (parent["heading_path"] if parent else []) + [heading_text],
            "heading_text": heading_text,
            "child_section_ids": [],
            "body_available": available[ordinal - 1],
            "body_returned": False,
            "snippet_returned": False,
        }
        if parent:
            parent["child_section_ids"].append(section["section_id"])
        ancestors.append(section)
        sections.append(section)

    return {
        "schema": SCHEMA_ID,
        "path": path,
        "title": note_title(path, frontmatter),
        "sections": sections,
        "truncated": len(headings) > MAX_SECTIONS,
    }
