"""Block adjustments that make markdown-it-py split blocks the way micromark 4 does.

- micromark decides whether a new list "interrupts" from the state at the start of the
  line: the flow inside the innermost container that continues is still open when its
  last block is a paragraph or link reference definitions running up to this line, or an
  indented code block (micromark keeps it open across blank lines while it looks ahead).
  Then a list whose first item is empty or starts at a number other than 1 cannot start,
  also when it follows a block quote or list item opened earlier on the same line; the
  line is paragraph text instead. markdown-it applies the rule only after a paragraph.
- A line after link reference definitions that cannot interrupt a paragraph (indented
  code, an empty or non-1 list item, a complete HTML tag) continues them as paragraph
  text (which may become a setext heading); markdown-it starts a new block there.
- HTML blocks start only with space, tab or line ending as whitespace in the opening tag.
- Tight lists are not marked (markdown-it's marking is quadratic in the nesting depth and
  changes only rendering).
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_block.state_block import StateBlock

from .micromark_inline import _rebound, strict_whitespace, wrap_rule

_DEFINITIONS = "_rc_definition_ends"  # env key: line after definitions -> token count then
_RULE_LINES = "_rc_rule_lines"  # env key: (line, marker) -> (start, end of markers and spaces)
_OPENED = "_rc_opened_on_line"  # env key: (line, token count, first container opened on it)
_CONTAINER_CLOSE = ("blockquote_close", "bullet_list_close", "ordered_list_close", "list_item_close")
_CONTAINER_OPEN = ("blockquote_open", "bullet_list_open", "ordered_list_open", "list_item_open")


def _after_definitions(state: StateBlock, line: int) -> bool:
    """Whether link reference definitions run up to `line` in the current container."""
    return state.env.get(_DEFINITIONS, {}).get(line) == len(state.tokens)


def _flow_open_at(state: StateBlock, line: int) -> bool:
    """micromark's `interrupt` for a container starting on `line`: whether the flow of the
    container that continues on this line was left open by the line before."""
    tokens = state.tokens
    # Containers opened earlier on this line, remembered per line: a deep nest of them
    # would otherwise be walked once per level.
    memo_line, memo_count, memo_first = state.env.get(_OPENED, (-1, 0, 0))
    known = memo_line == line and memo_count <= len(tokens)
    stop = memo_count if known else 0
    first_new = len(tokens)
    while (first_new > stop and tokens[first_new - 1].type in _CONTAINER_OPEN
           and tokens[first_new - 1].map and tokens[first_new - 1].map[0] == line):
        first_new -= 1
    if known and first_new == stop:
        first_new = memo_first
    state.env[_OPENED] = (line, len(tokens), first_new)
    if first_new < len(tokens) and tokens[first_new].type == "list_item_open":
        return False  # a sibling item: micromark closed the flow to continue the list
    if state.env.get(_DEFINITIONS, {}).get(line) == first_new:
        return True
    previous = tokens[first_new - 1] if first_new else None
    if previous is None:
        return False
    if previous.type == "paragraph_close":
        return tokens[first_new - 3].map[1] == line
    if previous.type != "code_block":
        return False
    # Not when the code starts on the line right after a container ended: micromark
    # then runs it in a new flow, which has no look-ahead pending.
    before = tokens[first_new - 2] if first_new >= 2 else None
    code_start = previous.map[0]
    return not (before is not None and before.type in _CONTAINER_CLOSE
                and code_start > 0 and not state.isEmpty(code_start - 1))


def _guard_list(original):
    def list_rule(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:  # noqa: N803
        if not silent and _flow_open_at(state, startLine):
            saved = state.parentType
            state.parentType = "paragraph"
            try:
                can_interrupt = original(state, startLine, endLine, True)
            finally:
                state.parentType = saved
            if not can_interrupt:
                return False
        return original(state, startLine, endLine, silent)

    return list_rule


def _guard_html_block(original):
    def html_block(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:  # noqa: N803
        if not silent and _after_definitions(state, startLine):
            # Only what can interrupt a paragraph ends the definitions' paragraph.
            if not original(state, startLine, endLine, True):
                return False
        return original(state, startLine, endLine, silent)

    return html_block


def _guard_code(original):
    def code(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:  # noqa: N803
        if state.is_code_block(startLine) and _after_definitions(state, startLine):
            # Indented code cannot interrupt: the line is paragraph text.
            return not silent and _as_paragraph_text(state, startLine, endLine, ("lheading", "paragraph"))
        return original(state, startLine, endLine, silent)

    return code


def _lazy_continuation(state: StateBlock, line: int, endLine: int) -> bool:  # noqa: N803
    """A lazy line right after definitions in a container: micromark continues the
    definitions' paragraph with it, as it would a paragraph; markdown-it ends the container
    there. Parse it as the tokenizer would a normal line of the container."""
    if (line >= min(endLine, state.lineMax) or state.isEmpty(line)
            or state.sCount[line] >= state.blkIndent):
        return False
    saved_parent = state.parentType
    state.parentType = "paragraph"
    try:
        if any(rule(state, line, endLine, True) for rule in state.md.block.ruler.getRules("paragraph")):
            return False  # the line starts a block that ends the container
    finally:
        state.parentType = saved_parent
    return _as_paragraph_text(state, line, endLine, ("reference", "lheading", "paragraph"))


def _as_paragraph_text(state: StateBlock, line: int, endLine: int, rules: tuple[str, ...]) -> bool:  # noqa: N803
    """Run `rules` at `line` as if it had the container's own indentation."""
    ruler = state.md.block.ruler
    saved_indent = state.sCount[line]
    state.sCount[line] = state.blkIndent
    try:
        return any(ruler.__rules__[ruler.__find__(name)].fn(state, line, endLine, False) for name in rules)
    finally:
        state.sCount[line] = saved_indent


def _record_definitions(original):
    def reference(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:  # noqa: N803
        if not original(state, startLine, endLine, silent):
            return False
        if not silent:
            state.env.setdefault(_DEFINITIONS, {})[state.line] = len(state.tokens)
            _lazy_continuation(state, state.line, endLine)
        return True

    return reference


def _strict_html_block(html_block):
    sequences = [(re.compile(strict_whitespace(start.pattern), start.flags), end, can_terminate)
                 for start, end, can_terminate in html_block.__globals__["HTML_SEQUENCES"]]
    return _rebound(html_block, HTML_SEQUENCES=sequences)


def _quick_hr(original):
    """markdown-it's thematic-break rule scans the rest of the line each time it is asked;
    on a line of deeply nested list markers (`- - - … x`) that is once per level. Remember,
    per line, where the markers and spaces end."""

    def hr(state: StateBlock, startLine: int, endLine: int, silent: bool) -> bool:  # noqa: N803
        start = state.bMarks[startLine] + state.tShift[startLine]
        end = state.eMarks[startLine]
        if start < end and state.src[start] in "*-_":
            memo = state.env.setdefault(_RULE_LINES, {})
            key = (startLine, state.src[start])
            known = memo.get(key)
            if known is None or not known[0] <= start <= known[1]:
                stop = start
                while stop < end and state.src[stop] in (state.src[start], " ", "\t"):
                    stop += 1
                known = memo[key] = (start, stop)
            if known[1] < end:
                return False
        return original(state, startLine, endLine, silent)

    return hr


def install(md: MarkdownIt) -> None:
    ruler = md.block.ruler
    wrap_rule(ruler, "hr", _quick_hr)
    wrap_rule(ruler, "reference", _record_definitions)
    wrap_rule(ruler, "code", _guard_code)
    wrap_rule(ruler, "list", lambda fn: _guard_list(_rebound(fn, markTightParagraphs=lambda *_: None)))
    wrap_rule(ruler, "html_block", lambda fn: _guard_html_block(_strict_html_block(fn)))
