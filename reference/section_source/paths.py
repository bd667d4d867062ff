"""Vault path safety, written once and shared by every tool.

Order matters: the request path is normalised and judged as text first, so an unsafe path
is rejected before the filesystem is touched; only then is the real path resolved (lstat and
readlink, never open) and required to stay inside the vault's real path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

MAX_PATH_CHARS = 1024
MAX_SEGMENT_BYTES = 255
_DRIVE = re.compile(r"^[A-Za-z]:")
# JavaScript's String.prototype.trim set, which upstream uses (Python's strip also takes U+0085
# and U+001C-001F, which JavaScript keeps).
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


class UnsafePath(ValueError):
    """The request path is not a safe vault-relative path. Messages never echo it."""


class NoteNotFound(LookupError):
    """No readable note at a safe path."""


def normalize_request_path(raw: object) -> str:
    """Return the canonical vault-relative form of `raw`, or raise UnsafePath."""
    if not isinstance(raw, str):
        raise UnsafePath("path must be a string")
    text = raw.strip(JS_WHITESPACE)
    if not text:
        raise UnsafePath("path is required")
    if len(text) > MAX_PATH_CHARS:
        raise UnsafePath("path is too long")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise UnsafePath("path contains control characters")
    text = text.replace("\\", "/")
    if text.startswith(("/", "~")) or _DRIVE.match(text):
        raise UnsafePath("path must be vault-relative")
    segments = [seg for seg in text.split("/") if seg not in ("", ".")]
    if ".." in segments:
        raise UnsafePath("path must not contain '..' segments")
    if not segments:
        raise UnsafePath("path is required")
    if any(len(seg.encode("utf-8", "surrogatepass")) > MAX_SEGMENT_BYTES for seg in segments):
        raise UnsafePath("path is too long")
    return "/".join(segments)


def resolve_note(vault_real: Path, relative: str) -> Path:
    """Resolve a normalised path to a real file inside the vault, without opening anything."""
    real = Path(os.path.realpath(vault_real.joinpath(relative)))
    if real != vault_real and vault_real not in real.parents:
        raise UnsafePath("path is outside the vault")
    # Any regular file is a note, whatever its extension (upstream reads `notes/readme.txt`
    # or `メモ` alike); the name only shapes the title.
    if not real.is_file():
        raise NoteNotFound("note not found")
    return real


def read_note(vault_real: Path, relative: str) -> str:
    """Read one note as UTF-8 text (a BOM is kept: the builder decides what it means)."""
    real = resolve_note(vault_real, relative)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError as exc:
        raise NoteNotFound("note not found") from exc
    except OSError as exc:
        raise NoteNotFound("note is not readable") from exc
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NoteNotFound("note is not valid UTF-8") from exc
