"""Inline adjustments that make markdown-it-py parse spans the way micromark 4 does.

markdown-it-py stays the parser; each function here replaces or wraps one of its inline
pieces where micromark decides differently (shared/section-source-algorithm.md, "parser
corners"), or where markdown-it would take quadratic time on deep bracket nesting:
- emphasis flanking classifies characters as micromark does: JavaScript's whitespace set
  (U+2028, U+2029 and U+FEFF included) and, for an astral character, its UTF-16 surrogate,
  which is neither whitespace nor punctuation (so an emoji acts as a letter);
- emphasis pairing follows micromark's resolver: the rule of 3 looks at the remaining
  sizes of partly consumed delimiter runs, and runs between a matched pair are dropped;
- HTML tags take only space, tab and line endings as whitespace;
- reference-link fallbacks: `[a][` followed by something that is not a label is no link at
  all, and a resource that cannot start (`[a](` at the end) falls back to a shortcut
  reference, for links and images alike;
- link labels: results are memoized per start position and the skip cache is filled from
  right to left, so nested or unclosed brackets cost linear time and shallow recursion.
"""

from __future__ import annotations

import re
import types
import unicodedata

from markdown_it import MarkdownIt
from markdown_it.common import html_re
from markdown_it.rules_inline.state_inline import Delimiter, Scanned, StateInline

# JavaScript's \s, which micromark uses for "Unicode whitespace".
JS_WHITESPACE = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WHITESPACE, _PUNCTUATION, _OTHER = 1, 2, 0


def _classify(char: str) -> int:
    """micromark's character groups; '' stands for the edge of the text."""
    if not char or char in JS_WHITESPACE:
        return _WHITESPACE
    if ord(char) > 0xFFFF:  # micromark sees a lone surrogate
        return _OTHER
    return _PUNCTUATION if unicodedata.category(char)[0] in "PS" else _OTHER


class MicromarkStateInline(StateInline):
    def scanDelims(self, start: int, canSplitWord: bool) -> Scanned:  # noqa: N802 - markdown-it's name
        marker = self.src[start]
        end = start
        while end < self.posMax and self.src[end] == marker:
            end += 1
        before = _classify(self.src[start - 1] if start > 0 else "")
        after = _classify(self.src[end] if end < self.posMax else "")
        can_open = after == _OTHER or (after == _PUNCTUATION and before != _OTHER)
        can_close = before == _OTHER or (before == _PUNCTUATION and after != _OTHER)
        if marker == "_":
            can_open, can_close = (can_open and (before != _OTHER or not can_close),
                                   can_close and (after != _OTHER or not can_open))
        return Scanned(can_open, can_close, end - start)


# --- Emphasis pairing --------------------------------------------------------------------


class _Run:
    """One delimiter run: consumed from the left as a closer, from the right as an opener."""

    __slots__ = ("marker", "indices", "lo", "hi", "open", "close", "live")

    def __init__(self, marker: int, first: int, delimiter: Delimiter) -> None:
        self.marker, self.indices = marker, [first]
        self.lo, self.hi = 0, 0
        self.open, self.close, self.live = delimiter.open, delimiter.close, True

    @property
    def size(self) -> int:
        return self.hi - self.lo + 1


def _runs(delimiters: list[Delimiter]) -> list[_Run]:
    runs: list[_Run] = []
    for index, delimiter in enumerate(delimiters):
        if delimiter.marker not in (0x2A, 0x5F):
            continue
        last = runs[-1] if runs else None
        if (last and last.marker == delimiter.marker
                and delimiters[last.indices[-1]].token == delimiter.token - 1):
            last.indices.append(index)
            last.hi += 1
        else:
            runs.append(_Run(delimiter.marker, index, delimiter))
    return runs


def _pair_emphasis(delimiters: list[Delimiter]) -> None:
    """micromark's attention resolver over markdown-it's delimiter list: every matched
    opener delimiter gets `end` = its closer's index, for markdown-it's emphasis rule."""
    runs = _runs(delimiters)
    for closer_index, closer in enumerate(runs):
        while closer.close and closer.live and closer.size > 0:
            opener_index = closer_index - 1
            while opener_index >= 0:
                opener = runs[opener_index]
                if (opener.live and opener.open and opener.size > 0 and opener.marker == closer.marker
                        and not ((opener.close or closer.open) and closer.size % 3
                                 and (opener.size + closer.size) % 3 == 0)):
                    break
                opener_index -= 1
            if opener_index < 0:
                break
            use = 2 if opener.size > 1 and closer.size > 1 else 1
            for step in range(use):
                delimiters[opener.indices[opener.hi - step]].end = closer.indices[closer.lo + step]
            opener.hi -= use
            closer.lo += use
            for inner in runs[opener_index + 1:closer_index]:
                inner.live = False


def pair_delimiters(state: StateInline) -> None:
    """Replaces markdown-it's balance_pairs rule."""
    _pair_emphasis(state.delimiters)
    for meta in state.tokens_meta:
        if meta and "delimiters" in meta:
            _pair_emphasis(meta["delimiters"])


# --- Link labels ------------------------------------------------------------------------


def parse_link_label(state: StateInline, start: int, disableNested: bool = False) -> int:  # noqa: N803
    """markdown-it's parseLinkLabel, memoized: a plain `[` met inside a label whose own
    label is known is skipped in one step (its scan would see the same tokens)."""
    memo = state.__dict__.setdefault("_rc_labels", {})
    key = (start, state.posMax, disableNested)
    if key in memo:
        return memo[key]
    old_pos, src, skip = state.pos, state.src, state.md.inline.skipToken
    state.pos, level, end = start + 1, 1, -1
    while state.pos < state.posMax:
        marker = src[state.pos]
        if marker == "]":
            level -= 1
            if level == 0:
                end = state.pos
                break
        before = state.pos
        skip(state)
        if marker != "[":
            continue
        if state.pos != before + 1:  # a link or image token inside the label
            if disableNested:
                break
            continue
        inner = memo.get((before, state.posMax, disableNested))
        if inner is not None:
            if inner < 0:
                break
            state.pos = inner  # the inner label's `]`, handled by the next turn
        level += 1
    state.pos = old_pos
    memo[key] = end
    return end


def _warm_label_cache(state: StateInline) -> None:
    """Fill the skip cache from the last bracket to the first, so that no label scan
    recurses into the labels nested in it."""
    src = state.src
    if src.count("[") < 16:
        return
    skip = state.md.inline.skipToken
    for match in reversed(list(re.finditer(r"!?\[", src))):
        state.pos = match.start()
        skip(state)
    state.pos = 0


def parse_inline(self, src: str, md: MarkdownIt, env: dict, tokens: list) -> list:
    """Replaces ParserInline.parse: the same steps on a MicromarkStateInline."""
    state = MicromarkStateInline(src, md, env, tokens)
    _warm_label_cache(state)
    self.tokenize(state)
    for rule in self.ruler2.getRules(""):
        rule(state)
    return state.tokens


# --- Reference-link fallbacks --------------------------------------------------------------


def _blank_to_end(src: str, start: int, end: int) -> bool:
    return all(ch in " \t\n" for ch in src[start:end])


def micromark_link_rule(original, bang: bool):
    """Wrap markdown-it's link (bang False) or image (bang True) rule."""
    offset = 1 if bang else 0

    def rule(state: StateInline, silent: bool) -> bool:
        src, start = state.src, state.pos + offset
        if src[state.pos] != ("!" if bang else "[") or start >= state.posMax or src[start] != "[":
            return False
        label_end = parse_link_label(state, start, not bang)
        if label_end < 0:
            return False
        after = label_end + 1
        if after < state.posMax and src[after] == "[" and parse_link_label(state, after) < 0:
            return False  # `[a][` then no label: micromark makes no link of `[a]`
        if original(state, silent):
            return True
        if after < state.posMax and src[after] == "(":
            # The resource failed; micromark falls back to a shortcut reference.
            saved = state.posMax
            state.posMax = after
            try:
                return original(state, silent)
            finally:
                state.posMax = saved
        return False

    return rule


# --- HTML tags ---------------------------------------------------------------------------


def strict_whitespace(pattern: str) -> str:
    """A markdown-it HTML regex whose `\\s` means only space, tab and line ending."""
    return (pattern.replace("[\\s\\S]", "\0").replace("\\s", "[ \\t\\n]").replace("\0", "[\\s\\S]"))


STRICT_HTML_TAG_RE = re.compile(strict_whitespace(html_re.HTML_TAG_RE.pattern))


def _rebound(function, **names):
    """`function` reading some of its module globals from `names` instead."""
    return types.FunctionType(function.__code__, {**function.__globals__, **names}, function.__name__,
                              function.__defaults__, function.__closure__)


def wrap_rule(ruler, name: str, make) -> None:
    """Replace rule `name` by make(its current function), keeping its alt chains."""
    rule = ruler.__rules__[ruler.__find__(name)]
    ruler.at(name, make(rule.fn), {"alt": list(rule.alt)})


def install(md: MarkdownIt) -> None:
    md.inline.parse = types.MethodType(parse_inline, md.inline)
    md.inline.ruler2.at("balance_pairs", pair_delimiters)
    wrap_rule(md.inline.ruler, "link", lambda fn: micromark_link_rule(fn, bang=False))
    wrap_rule(md.inline.ruler, "image", lambda fn: micromark_link_rule(fn, bang=True))
    wrap_rule(md.inline.ruler, "html_inline", lambda fn: _rebound(fn, HTML_TAG_RE=STRICT_HTML_TAG_RE))
    helpers = types.SimpleNamespace(**vars(md.helpers))
    helpers.parseLinkLabel = parse_link_label
    md.helpers = helpers
