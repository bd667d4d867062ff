"""Request-path rules, shared by every tool.

Order matters: the path is normalised and judged as text first (PATH_INVALID, then
PATH_TRAVERSAL), so an unsafe path is rejected before the filesystem is touched; only then is
the real path resolved (lstat/readlink via realpath, never open) and required to lie inside
the repo root's real path, compared by path parents so a sibling such as `code_evil/` never
passes for `code/`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import ToolError

# JavaScript's String.prototype.trim set (the seed targets a Node.js server); Python's
# str.strip() would also drop U+0085 and U+001C-001F.
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_C0 = re.compile(r"[\x00-\x1f]")
_DRIVE = re.compile(r"^[A-Za-z]:")
# Linux's PATH_MAX (4,096 bytes with the terminating NUL): a relative path this long names no file
# under any root, so it is refused as text; resolving it would cost a lookup per segment.
PATH_MAX = 4096


def normalize(raw: str, repo: str, *, allow_root: bool = False) -> str:
    """Return the canonical relative form ('a/b.md', or '' for the root when allowed)."""
    text = raw.strip(JS_WHITESPACE)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, e.g. from a JSON "\\ud800" escape
        raise ToolError("PATH_INVALID", field="path", repo=repo, reason="invalid_unicode") from None
    if _C0.search(text):
        raise ToolError("PATH_INVALID", field="path", repo=repo, reason="control_character")
    text = text.replace("\\", "/")
    if text.startswith("//"):
        raise ToolError("PATH_INVALID", field="path", repo=repo, reason="unc_path")
    if text.startswith("/"):
        raise ToolError("PATH_INVALID", field="path", repo=repo, reason="absolute_path")
    if _DRIVE.match(text):
        raise ToolError("PATH_INVALID", field="path", repo=repo, reason="drive_path")
    if text.startswith("~"):
        raise ToolError("PATH_INVALID", field="path", repo=repo, reason="home_path")
    segments = [seg for seg in text.split("/") if seg not in ("", ".")]
    if ".." in segments:
        raise ToolError("PATH_TRAVERSAL", field="path", repo=repo, reason="dot_dot_segment")
    if not segments and not allow_root:
        raise ToolError("PATH_INVALID", field="path", repo=repo, reason="empty")
    relative = "/".join(segments)
    if len(relative.encode("utf-8")) >= PATH_MAX:  # no file has such a path: refused before any lookup
        raise ToolError("PATH_INVALID", field="path", repo=repo, reason="too_long")
    return relative


def round_trips(relative: str) -> bool:
    """True when a path found on disk is exactly what normalize() would return for it, so
    every path search or list_dir reports can be passed back to open_file or list_dir."""
    try:  # names that are not UTF-8 arrive with lone surrogates and fail here too
        return normalize(relative, "docs") == relative
    except ToolError:
        return False


def inside(root_real: Path, real: Path) -> bool:
    return real == root_real or root_real in real.parents


def resolve(root_real: Path, relative: str, repo: str) -> Path:
    """Resolve symlinks (no open) and require the result inside the root."""
    real = Path(os.path.realpath(root_real.joinpath(relative) if relative else root_real))
    if not inside(root_real, real):
        raise ToolError("PATH_OUTSIDE_ROOT", field="path", repo=repo, reason="outside_root")
    return real


def relative_to_root(root_real: Path, real: Path) -> str:
    return "" if real == root_real else real.relative_to(root_real).as_posix()
