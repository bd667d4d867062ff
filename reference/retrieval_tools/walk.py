"""What the server lists and reads: hidden names, .gitignore rules, symlinks, binary files,
line splitting.

Visibility (search and list_dir; open_file/get_snippet answer FILE_NOT_FOUND for what is not
visible): a name starting with '.' is hidden at any depth; .gitignore files (the root's and
nested ones) apply with git's semantics through pathspec's GitIgnoreSpec, patterns relative to
the directory holding the file, the deepest file with a matching pattern deciding; an ignored
directory hides everything below it (git cannot re-include inside an excluded directory).
.git/info/exclude and global excludes are not read. Symlinks are never followed or listed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

from .paths import round_trips

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_GITIGNORE_BYTES = 1024 * 1024
BINARY_SNIFF_BYTES = 8192
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class TooLarge(Exception):
    """The file exceeds MAX_FILE_BYTES."""


class NotRegular(Exception):
    """The opened path is not a regular file."""


class Binary(Exception):
    """The bytes are not text: reason is 'nul_byte' or 'invalid_utf8'."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# -- reading ---------------------------------------------------------------------------
def read_bytes(path: str | Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """Read a regular file without following a final symlink and without blocking on FIFOs.
    Raises OSError (including ELOOP for a symlink), NotRegular or TooLarge."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular()
        if info.st_size > limit:
            raise TooLarge()
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, max(info.st_size - total, 0) + 65536)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # grew while we read
                raise TooLarge()
            chunks.append(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


def decode_text(data: bytes) -> str:
    """Binary = a NUL byte in the first 8192 bytes, or not valid UTF-8."""
    if data.find(b"\0", 0, BINARY_SNIFF_BYTES) != -1:
        raise Binary("nul_byte")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Binary("invalid_utf8") from None


def split_lines(text: str) -> list[str]:
    """Split on '\\n', drop one trailing '\\r' per line; a final newline adds no empty line."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


# -- ignore rules ----------------------------------------------------------------------
def _load_gitignore(path: str) -> GitIgnoreSpec | None:
    try:
        data = read_bytes(path, MAX_GITIGNORE_BYTES)
    except (OSError, NotRegular, TooLarge):
        return None
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    lines = text.splitlines()
    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except Exception:  # noqa: BLE001 - one bad pattern must not void the file
        good = []
        for line in lines:
            try:
                GitIgnoreSpec.from_lines([line])
            except Exception:  # noqa: BLE001
                continue
            good.append(line)
        spec = GitIgnoreSpec.from_lines(good)
    return spec if spec.patterns else None


@dataclass(frozen=True)
class IgnoreRules:
    """The .gitignore layers in force for one directory: (prefix 'a/b/', spec), root first."""

    layers: tuple[tuple[str, GitIgnoreSpec], ...] = ()

    def descend(self, dir_path: str | Path, prefix: str, has_gitignore: bool = True) -> IgnoreRules:
        """Rules for the directory at `dir_path` (relative prefix '' or 'a/b/')."""
        if not has_gitignore:
            return self
        spec = _load_gitignore(os.path.join(dir_path, ".gitignore"))
        return IgnoreRules(self.layers + ((prefix, spec),)) if spec else self

    def ignored(self, relative: str, is_dir: bool) -> bool:
        for prefix, spec in reversed(self.layers):
            sub = relative[len(prefix):]
            verdict = spec.check_file(sub + "/" if is_dir else sub).include
            if verdict is not None:
                return verdict
        return False


def rules_for_dir(root: Path, relative_dir: str) -> IgnoreRules:
    """Rules in force inside `relative_dir` ('' = the root), reading each ancestor's .gitignore."""
    rules = IgnoreRules().descend(root, "")
    if relative_dir:
        parts = relative_dir.split("/")
        for i in range(len(parts)):
            sub = "/".join(parts[: i + 1])
            rules = rules.descend(root / sub, sub + "/")
    return rules


def is_visible(root: Path, relative: str, is_dir: bool) -> bool:
    """Would search/list_dir show this path? (No hidden segment, no ignored ancestor or self.)"""
    if not relative:
        return True
    parts = relative.split("/")
    if any(p.startswith(".") for p in parts):
        return False
    rules = IgnoreRules().descend(root, "")
    for i in range(len(parts)):
        sub = "/".join(parts[: i + 1])
        last = i == len(parts) - 1
        if rules.ignored(sub, is_dir if last else True):
            return False
        if not last:
            rules = rules.descend(root / sub, sub + "/")
    return True


# -- listing ---------------------------------------------------------------------------
def _scan(path: str | Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def _has_gitignore(entries: list[os.DirEntry]) -> bool:
    return any(e.name == ".gitignore" for e in entries)


def list_entries(root: Path, relative_dir: str, dir_real: Path) -> list[dict[str, str]]:
    """Visible files and directories directly in `dir_real`, sorted by name (code point)."""
    entries = _scan(dir_real)
    rules = rules_for_dir(root, relative_dir)
    prefix = relative_dir + "/" if relative_dir else ""
    out = []
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        rel = prefix + name
        kind = _kind(entry)
        if kind is None or not round_trips(rel) or rules.ignored(rel, kind == "dir"):
            continue
        out.append({"name": name, "path": rel, "type": kind})
    out.sort(key=lambda e: e["name"])
    return out


def _kind(entry: os.DirEntry) -> str | None:
    try:
        if entry.is_symlink():
            return None
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        if entry.is_file(follow_symlinks=False):
            return "file"
    except OSError:
        pass
    return None  # symlinks, sockets, FIFOs, devices are not listed


def walk_files(root: Path) -> list[tuple[str, str]]:
    """Every visible regular file under `root` as (relative path, absolute path), sorted by
    the relative path as a '/'-joined string (code point order)."""
    files: list[tuple[str, str]] = []
    stack: list[tuple[str, str, IgnoreRules]] = [("", str(root), IgnoreRules())]
    while stack:
        prefix, dir_path, parent_rules = stack.pop()
        entries = _scan(dir_path)
        rules = parent_rules.descend(dir_path, prefix, _has_gitignore(entries))
        check = bool(rules.layers)
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            kind = _kind(entry)
            if kind is None:
                continue
            rel = prefix + name
            if not round_trips(rel):
                continue
            if kind == "dir":
                if check and rules.ignored(rel, True):
                    continue
                stack.append((rel + "/", entry.path, rules))
            else:
                if check and rules.ignored(rel, False):
                    continue
                files.append((rel, entry.path))
    files.sort()
    return files
