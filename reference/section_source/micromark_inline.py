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


class _ShiftedCache:
    """A view of the enclosing inline state's skip cache, for an image label parsed on its
    own: positions are shifted by where the label starts in the enclosing text."""

    __slots__ = ("root", "base")

    def __init__(self, root: dict, base: int) -> None:
        self.root, self.base = root, base

    def __contains__(self, pos: int) -> bool:
        return pos + self.base in self.root

    def __getitem__(self, pos: int) -> int:
        return self.root[pos + self.base] - self.base

    def __setitem__(self, pos: int, value: int) -> None:
        self.root[pos + self.base] = value + self.base


class MicromarkStateInline(StateInline):
    rc_base = 0  # where src starts in the outermost inline text of this parse
    rc_labels: dict  # link-label memo, in outermost positions

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

    __slots__ = ("marker", "indices", "lo", "hi", "open", "close")

    def __init__(self, marker: int, first: int, delimiter: Delimiter) -> None:
        self.marker, self.indices = marker, [first]
        self.lo, self.hi = 0, 0
        self.open, self.close = delimiter.open, delimiter.close

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
    opener delimiter gets `end` = its closer's index, for markdown-it's emphasis rule.

    Each closer takes the nearest earlier opener of its marker that the rule of 3 (on the
    remaining sizes) allows; the runs between them are dropped. Whether an opener is allowed
    depends only on its `close` flag and remaining size modulo 3, so the open runs wait on
    one stack per (marker, close flag, size % 3): the nearest allowed opener is the highest
    of a few stack tops, and dropping the runs between pops stack tops. Linear time, where
    micromark's own backward scan is quadratic."""
    runs = _runs(delimiters)
    stacks: dict[tuple[int, bool, int], list[int]] = {}

    def push(index: int) -> None:
        run = runs[index]
        stacks.setdefault((run.marker, run.close, run.size % 3), []).append(index)

    for closer_index, closer in enumerate(runs):
        while closer.close and closer.size > 0:
            best = -1
            for (marker, opener_close, remainder), stack in stacks.items():
                if marker != closer.marker or not stack or stack[-1] <= best:
                    continue
                if ((opener_close or closer.open) and closer.size % 3
                        and (remainder + closer.size) % 3 == 0):
                    continue
                best = stack[-1]
            if best < 0:
                break
            opener = runs[best]
            for stack in stacks.values():  # drop the runs between, and lift the opener
                while stack and stack[-1] >= best:
                    stack.pop()
            use = 2 if opener.size > 1 and closer.size > 1 else 1
            for step in range(use):
                delimiters[opener.indices[opener.hi - step]].end = closer.indices[closer.lo + step]
            opener.hi -= use
            closer.lo += use
            if opener.size > 0:
                push(best)
        if closer.open and closer.size > 0:
            push(closer_index)


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
    memo, base = state.rc_labels, state.rc_base
    key = (start + base, state.posMax + base, disableNested)
    if key in memo:
        found = memo[key]
        return found - base if found >= 0 else -1
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
        inner = memo.get((before + base, state.posMax + base, disableNested))
        if inner is not None:
            if inner < 0:
                break
            state.pos = inner - base  # the inner label's `]`, handled by the next turn
        level += 1
    state.pos = old_pos
    memo[key] = end + base if end >= 0 else -1
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


_OUTER = "_rc_image_label"  # env key: (skip cache, label memo, start) of an image label


def parse_inline(self, src: str, md: MarkdownIt, env: dict, tokens: list) -> list:
    """Replaces ParserInline.parse: the same steps on a MicromarkStateInline. An image's
    label reuses the enclosing text's caches (else nested images cost quadratic time)."""
    state = MicromarkStateInline(src, md, env, tokens)
    outer = env.pop(_OUTER, None)
    if outer is None:
        state.rc_labels = {}
        _warm_label_cache(state)
    else:
        root, state.rc_labels, state.rc_base = outer
        state.cache = _ShiftedCache(root, state.rc_base)
    self.tokenize(state)
    for rule in self.ruler2.getRules(""):
        rule(state)
    return state.tokens


# --- Reference-link fallbacks --------------------------------------------------------------


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
        if bang and not silent:
            cache = state.cache
            root = cache.root if isinstance(cache, _ShiftedCache) else cache
            state.env[_OUTER] = (root, state.rc_labels, state.rc_base + start + 1)
        try:
            if original(state, silent):
                return True
        finally:
            state.env.pop(_OUTER, None)
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
