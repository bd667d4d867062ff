"""markdown-it-py, configured and adjusted to parse CommonMark as micromark 4 does.

Block tokens come from `parse_blocks`; a block's inline tokens from `parse_inline` on
demand (only headings always need them, which halves the time for a large note).

Deep nesting: markdown-it recurses once per nested container or image. A note that
exhausts the default recursion limit is parsed again on a worker thread with a large
stack and a high limit, so nesting costs time and memory, not a refusal; only nesting
deeper than MAX_DEPTH levels (far past where upstream's own recursive tree walks overflow
the JavaScript stack) raises InputTooComplex.
"""

from __future__ import annotations

import sys
import threading

from markdown_it import MarkdownIt

from . import micromark_block, micromark_inline

MAX_DEPTH = 100_000
# Each nested image copies its label (markdown-it parses it as a text of its own), so time
# and memory grow with the square of the depth. Upstream needs over two minutes for 8,000.
MAX_IMAGE_DEPTH = 10_000
_FRAMES_PER_LEVEL = 8
_DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP_LOCK = threading.Lock()
_INLINE_DEPTH = "_rc_inline_depth"


class InputTooComplex(ValueError):
    """The note nests deeper than MAX_DEPTH levels."""


_TOO_COMPLEX = "Note outline input nests too deeply to parse."


def _guard_block_depth(tokenize):
    # Plain calls, no *args: Python-to-Python calls then take no C stack.
    def guarded(state, startLine, endLine):  # noqa: N803
        if state.level >= MAX_DEPTH:
            raise InputTooComplex(_TOO_COMPLEX)
        return tokenize(state, startLine, endLine)

    return guarded


def _guard_inline_depth(parse):
    """Nested images each parse their label with a new inline state: count those."""

    def guarded(src, md, env, tokens):
        depth = env.get(_INLINE_DEPTH, 0)
        if depth >= MAX_IMAGE_DEPTH:
            raise InputTooComplex(_TOO_COMPLEX)
        env[_INLINE_DEPTH] = depth + 1
        try:
            return parse(src, md, env, tokens)
        finally:
            env[_INLINE_DEPTH] = depth

    return guarded


def _guard_link_depth(tokenize):
    def guarded(state):
        if state.level >= MAX_DEPTH:
            raise InputTooComplex(_TOO_COMPLEX)
        return tokenize(state)

    return guarded


def _make_parser() -> MarkdownIt:
    # No nesting cut-off of markdown-it's own: it would silently stop parsing.
    md = MarkdownIt("commonmark", {"maxNesting": sys.maxsize})
    md.disable(["inline", "text_join"])
    # micromark keeps every link destination and autolink text as written; markdown-it
    # would turn `javascript:` links into text and percent-decode autolink text.
    md.validateLink = lambda url: True
    md.normalizeLink = lambda url: url
    md.normalizeLinkText = lambda url: url
    micromark_block.install(md)
    micromark_inline.install(md)
    md.block.tokenize = _guard_block_depth(md.block.tokenize)
    md.inline.tokenize = _guard_link_depth(md.inline.tokenize)
    md.inline.parse = _guard_inline_depth(md.inline.parse)
    return md


PARSER = _make_parser()


def _deep(function):
    """function() on a thread whose stack and recursion limit fit MAX_DEPTH levels."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["value"] = function()
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            outcome["error"] = exc

    with _DEEP_LOCK:
        limit = sys.getrecursionlimit()
        stack = threading.stack_size()
        sys.setrecursionlimit(max(limit, MAX_DEPTH * _FRAMES_PER_LEVEL))
        try:
            threading.stack_size(_DEEP_STACK_BYTES)
            worker = threading.Thread(target=run, name="section-source-deep-parse")
            worker.start()
        finally:
            threading.stack_size(stack)
        worker.join()
        sys.setrecursionlimit(limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _with_depth(function):
    try:
        return function()
    except RecursionError:
        pass
    try:
        return _deep(function)
    except RecursionError:
        raise InputTooComplex(_TOO_COMPLEX) from None


def parse_blocks(source: str) -> tuple[list, dict]:
    """Block tokens and the environment (link reference definitions) of a note body."""

    def run() -> tuple[list, dict]:
        env: dict = {}
        return PARSER.parse(source, env), env

    return _with_depth(run)


def parse_inline(content: str, env: dict) -> list:
    def run() -> list:
        children: list = []
        PARSER.inline.parse(content, PARSER, env, children)
        return children

    return _with_depth(run)
