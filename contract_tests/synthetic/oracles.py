"""Which outcomes of a path a seed allows: the oracles the shared path-attack checks consult.

An oracle answers, for one requested path, whether the call must be rejected before anything
is read (`reject`), must fail (`fail`), or may succeed (`may-succeed`) reading only `allowed`
(root-relative paths; None: anything inside the root).
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any

# JavaScript's String.prototype.trim() removes these; Python's str.strip() a slightly different
# set (it also removes U+0085 and U+001C..U+001F, keeps U+FEFF). A server may follow either.
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009" \
           "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Outcome:
    kind: str                      # reject, fail, may-succeed
    allowed: frozenset[str] | None = None


def has_dotdot(path: str) -> bool:
    return ".." in re.split(r"[/\\]", path)


def corpus(entry: dict[str, Any], path: str, *, before_read: bool) -> Outcome:
    """The corpus's own expectation: `reject` entries with a `..` segment are refused before any
    read where the seed says so (`before_read`); everything else must fail."""
    if before_read and entry.get("expect") == "reject" and has_dotdot(path):
        return Outcome("reject")
    return Outcome("fail")


def trimmed(entry: dict[str, Any], path: str, items: set[str], *, before_read: bool,
            declared: bool | None) -> Outcome:
    """A seed silent on whitespace: a server that trims may serve the note the trimmed path
    names (Python's or JavaScript's idea of whitespace); one declared not to trim must fail."""
    if declared is not False:
        for variant in {path.strip(), path.strip(JS_SPACE)} - {path}:
            if variant in items:
                return Outcome("may-succeed", frozenset({variant}))
    return corpus(entry, path, before_read=before_read)


def seed_normalize(raw: Any) -> tuple[bool, set[str]]:
    """The seed's normalization: (must be rejected, the normalized paths a server may read).

    Where the seed's wording leaves room (which characters `trim` removes, whether `.`
    segments are dropped, `C:name` without a slash), every reasonable reading is accepted. A
    path of only `.` segments is kept by the seed's algorithm: reading the literal note `.` is
    allowed; what is not is the list route (`GET /api/v1/notes/`) a URL client may make of it.
    """
    if not isinstance(raw, str):
        return True, set()
    reads: set[str] = set()
    must_reject = True
    for trimmed in {raw.strip(JS_SPACE), raw.strip()}:
        text = trimmed.replace("\\", "/")
        if not text or text.startswith("/") or re.match(r"^[A-Za-z]:/", text):
            continue
        segments = [s for s in text.split("/") if s]
        if not segments or ".." in segments:
            continue
        must_reject = False
        reads.add("/".join(segments))
        dotless = [s for s in segments if s != "."]
        if dotless:
            reads.add("/".join(dotless))
    if not reads:
        return True, set()
    if any(_DRIVE.match(p) for p in reads):
        must_reject = False  # "C:name" may be read as a literal name or refused as a drive path
    return must_reject, reads


def hosted(path: Any) -> Outcome:
    """Seed 001's normalization: rejected before any upstream read, or read exactly as normalized."""
    must_reject, reads = seed_normalize(path)
    return Outcome("reject") if must_reject else Outcome("may-succeed", frozenset(reads))


def absolute_inside(entry: dict[str, Any], path: Any, root_dir: str, items: set[str], *, before_read: bool) -> Outcome:
    """A seed that refuses only paths outside the root (seed 003: "reject paths outside the
    configured repo root"): an absolute path without `..` that names the root, or an item inside
    it, through no symbolic link, may be served (reading nothing outside the root) or refused.
    Every other path keeps the corpus's expectation."""
    if isinstance(path, str) and path.startswith("/") and not has_dotdot(path) and "\\" not in path:
        norm = posixpath.normpath(path)
        root = posixpath.normpath(root_dir)
        if norm == root or norm.startswith(root + "/"):
            relative = posixpath.relpath(norm, root)
            steps = [] if relative == "." else relative.split("/")
            through_link = any(os.path.islink(os.path.join(root, *steps[:n + 1])) for n in range(len(steps)))
            # What else inside the root the server may read to serve it (a `.gitignore`, say)
            # is its business: only reads outside the root are judged.
            if not through_link and (relative == "." or relative in items):
                return Outcome("may-succeed")
    return corpus(entry, path, before_read=before_read)
