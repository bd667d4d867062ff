"""The one enforcement layer both transports go through: path safety, exclusion rules, error
sanitisation and logging (mcp-tools.md#shared-enforcement).

- Path safety: a vault-relative path is checked lexically (no absolute paths, no '..', no
  NUL or control characters, no backslashes), then by visibility (hidden segments, default
  and user excludes), then by real path (symlinks must stay inside the vault root).
- Sanitisation: anything that is not a VaultError becomes INTERNAL_ERROR with no text of its
  own, so no exception message (which may hold a path) ever reaches a client.
- Logging: `log_event` writes one line of allowlisted key=value pairs to stderr; values are
  codes, counts, modes and durations chosen by the server, never client text.
"""

from __future__ import annotations

import logging
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pathspec

from .errors import VaultError

NOTE_SUFFIXES = (".md", ".markdown")
# Common build, cache, output and generated-data directories (indexing.md#vault-file-discovery);
# hidden names (.git, .obsidian, ...) are excluded by the hidden rule.
DEFAULT_EXCLUDES = ("node_modules/", "build/", "dist/", "out/", "target/", "coverage/", "__pycache__/")

log = logging.getLogger("vault_agent")
LOG_FIELDS = frozenset({
    "event", "transport", "tool", "route", "method", "status", "outcome", "code", "duration_ms",
    "results", "requested_mode", "used_mode", "warnings", "freshness", "notes", "chunks",
    "skipped", "mode", "embeddings", "api_key_required", "mcp_enabled", "loopback", "request_id",
})
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}


def configure_logging(level: str) -> None:
    """Our logger to stderr; SDK and server loggers silenced below ERROR (they may print
    request details we do not control)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(LEVELS.get(level, logging.INFO))
    for name in ("mcp", "mcp_types", "httpx", "httpcore", "uvicorn", "uvicorn.error", "uvicorn.access",
                 "sse_starlette", "starlette"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    # Only short identifier-like values (codes, modes, route templates) are ever logged.
    if len(text) > 64 or not all(c.isalnum() or c in "_-./{}:" for c in text):
        return "-"
    return text


def log_event(level: int = logging.INFO, **fields: Any) -> None:
    unknown = set(fields) - LOG_FIELDS
    if unknown:
        raise ValueError(f"log fields outside the allowlist: {sorted(unknown)}")
    if log.isEnabledFor(level):
        log.log(level, " ".join(f"{key}={_value(value)}" for key, value in fields.items() if value is not None))


def sanitize(exc: BaseException) -> VaultError:
    """The error a client may see for any failure: catalogued errors as they are, others as
    INTERNAL_ERROR without their text."""
    return exc if isinstance(exc, VaultError) else VaultError("INTERNAL_ERROR")


# -- visibility ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rules:
    """What discovery and attachment retrieval may see in one vault."""

    root: Path
    spec: pathspec.PathSpec
    skip_dir: Path | None = None  # the index directory, if someone put it inside the vault
    file_patterns: bool = False  # whether any pattern can match a file (the defaults match only directories)

    @classmethod
    def make(cls, root: Path, user_excludes: list[str], index_dir: Path | None = None) -> Rules:
        spec = pathspec.GitIgnoreSpec.from_lines([*DEFAULT_EXCLUDES, *user_excludes])
        return cls(root, spec, index_dir, bool(user_excludes))

    def excluded(self, rel: str, is_dir: bool = False) -> bool:
        """Hidden segments, default and user excludes (gitignore semantics)."""
        parts = rel.split("/")
        if any(part.startswith(".") for part in parts):
            return True
        if is_dir:
            return self.spec.match_file(rel + "/")
        return any(self.spec.match_file("/".join(parts[:i]) + "/") for i in range(1, len(parts))) \
            or self.spec.match_file(rel)


def is_note(rel: str) -> bool:
    return rel.lower().endswith(NOTE_SUFFIXES)


def real_root(root: Path) -> str:
    return os.path.realpath(root)


def inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Entry:
    rel: str
    size: int
    mtime_ns: int


def walk_notes(rules: Rules) -> Iterator[Entry]:
    """Discoverable Markdown notes in sorted path order. Symlinked files are followed when their
    target is a regular file inside the vault; symlinked directories are not followed."""
    root_real = real_root(rules.root)
    try:
        skip = os.stat(rules.skip_dir) if rules.skip_dir is not None else None
    except OSError:
        skip = None

    def walk(directory: str, prefix: str) -> Iterator[Entry]:
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            rel = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name.startswith(".") or rules.spec.match_file(rel + "/") or (
                            skip is not None and entry.inode() == skip.st_ino and entry.stat().st_dev == skip.st_dev):
                        continue
                    yield from walk(entry.path, rel + "/")
                    continue
                # Parent directories were checked on the way down; only the file itself is left.
                if not is_note(rel) or entry.name.startswith(".") or (rules.file_patterns and rules.spec.match_file(rel)):
                    continue
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if not inside(target, root_real):
                        continue
                    st = os.stat(target)
                else:
                    st = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode):
                    yield Entry(rel, st.st_size, st.st_mtime_ns)
            except OSError:
                continue

    yield from walk(str(rules.root), "")


# -- vault-relative paths ------------------------------------------------------------------------
def check_relative(rel: Any) -> str:
    """Lexical checks on a client-supplied vault-relative path; returns it normalised."""
    if not isinstance(rel, str):
        raise VaultError("INVALID_PATH", protocol=True, field="vaultRelativePath")
    if not rel or "\x00" in rel or "\\" in rel or any(ord(c) < 0x20 or ord(c) == 0x7F for c in rel):
        raise VaultError("INVALID_PATH", field="vaultRelativePath")
    if rel.startswith("/") or (len(rel) > 1 and rel[1] == ":" and rel[0].isalpha()):
        raise VaultError("PATH_OUTSIDE_VAULT", field="vaultRelativePath")
    parts = [part for part in rel.split("/") if part not in ("", ".")]
    if any(part == ".." for part in parts):
        raise VaultError("PATH_OUTSIDE_VAULT", field="vaultRelativePath")
    if not parts or rel.endswith("/"):
        raise VaultError("INVALID_PATH", field="vaultRelativePath")
    return "/".join(parts)


def resolve_attachment(rules: Rules, raw: Any) -> tuple[str, Path, os.stat_result]:
    """A client path to (vault-relative path, real file path, stat) or a catalogued error.

    Order: lexical form, then the path as given (Markdown, hidden or excluded: not allowed),
    then the real path (outside: PATH_OUTSIDE_VAULT; missing: ATTACHMENT_NOT_FOUND; a
    directory: INVALID_PATH), then the real target's own relative path by the same rules."""
    rel = check_relative(raw)
    if is_note(rel) or rules.excluded(rel):
        raise VaultError("ATTACHMENT_NOT_ALLOWED", field="vaultRelativePath")
    root_real = real_root(rules.root)
    real = os.path.realpath(os.path.join(root_real, rel))
    if not inside(real, root_real):
        raise VaultError("PATH_OUTSIDE_VAULT", field="vaultRelativePath")
    try:
        st = os.stat(real)
    except OSError:
        raise VaultError("ATTACHMENT_NOT_FOUND", field="vaultRelativePath") from None
    if stat.S_ISDIR(st.st_mode):
        raise VaultError("INVALID_PATH", field="vaultRelativePath")
    target_rel = os.path.relpath(real, root_real).replace(os.sep, "/")
    if not stat.S_ISREG(st.st_mode) or is_note(target_rel) or rules.excluded(target_rel):
        raise VaultError("ATTACHMENT_NOT_ALLOWED", field="vaultRelativePath")
    return rel, Path(real), st


def resolve_note_file(rules: Rules, rel: str) -> tuple[Path, os.stat_result]:
    """The real file of an indexed note path, checked again at read time: a note replaced by a
    symlink out of the vault is PATH_OUTSIDE_VAULT, a vanished one NOTE_NOT_FOUND."""
    root_real = real_root(rules.root)
    real = os.path.realpath(os.path.join(root_real, rel))
    if not inside(real, root_real):
        raise VaultError("PATH_OUTSIDE_VAULT")
    try:
        st = os.stat(real)
    except OSError:
        raise VaultError("NOTE_NOT_FOUND") from None
    if not stat.S_ISREG(st.st_mode):
        raise VaultError("NOTE_NOT_FOUND")
    return Path(real), st
