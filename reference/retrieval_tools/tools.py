"""The four read-only tools. Each takes the configured Roots and the call's arguments and
returns (result, truncated) or raises ToolError; call_tool() adds the envelope and timing.

Check order, the same in every tool: argument shape (INVALID_ARGUMENT), repo (REPO_INVALID),
the remaining argument-only checks in field order (QUERY_EMPTY, LIMIT_INVALID, PATH_INVALID,
PATH_TRAVERSAL, RANGE_INVALID), then the root (CONFIG_INVALID), then the filesystem.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from . import walk
from .config import Roots, root_problem
from .errors import ToolError
from .paths import JS_WHITESPACE, normalize, relative_to_root, resolve

DEFAULT_LIMIT = 200
MAX_LIMIT = 10000
PREVIEW_CHARS = 240
PREVIEW_BEFORE = 80
FILE_REPOS = ("docs", "code")
SEARCH_REPOS = ("docs", "code", "both")
_CONFIG_REASONS = {"does not exist": "missing", "is not a directory": "not_a_directory",
                   "is not readable": "unreadable"}

Result = dict[str, Any]


# -- arguments -------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    name: str
    kind: type  # str or int
    required: bool
    default: Any = None


FIELDS: dict[str, tuple[Field, ...]] = {
    "search": (Field("query", str, True), Field("repo", str, False, "both"),
               Field("limit", int, False, DEFAULT_LIMIT)),
    "open_file": (Field("repo", str, True), Field("path", str, True)),
    "get_snippet": (Field("repo", str, True), Field("path", str, True),
                    Field("start_line", int, True), Field("end_line", int, True)),
    "list_dir": (Field("repo", str, False, "docs"), Field("path", str, False, "")),
}


def _as_int(value: Any) -> int | None:
    """JSON Schema's integer: a number with no fractional part (so 3.0 counts), never a bool."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def parse_arguments(tool: str, arguments: Any) -> dict[str, Any]:
    """Type-check against FIELDS (the input schemas minus their range keywords, whose
    violations have their own codes) and fill defaults."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolError("INVALID_ARGUMENT", reason="not_an_object")
    fields = FIELDS[tool]
    known = {f.name for f in fields}
    if any(key not in known for key in arguments):
        raise ToolError("INVALID_ARGUMENT", reason="unexpected_field")  # the key is not echoed
    parsed: dict[str, Any] = {}
    for f in fields:
        if f.name not in arguments:
            if f.required:
                raise ToolError("INVALID_ARGUMENT", field=f.name, reason="missing")
            parsed[f.name] = f.default
            continue
        value = arguments[f.name]
        if f.kind is int:
            value = _as_int(value)
            if value is None:
                raise ToolError("INVALID_ARGUMENT", field=f.name, reason="not_an_integer")
        elif not isinstance(value, str):
            raise ToolError("INVALID_ARGUMENT", field=f.name, reason="not_a_string")
        parsed[f.name] = value
    return parsed


def _check_repo(repo: str, allowed: tuple[str, ...]) -> None:
    if repo not in allowed:
        raise ToolError("REPO_INVALID", field="repo", reason="unknown_repo")


def _check_root(roots: Roots, repo: str) -> Path:
    root = roots.get(repo)
    problem = root_problem(root)
    if problem:
        raise ToolError("CONFIG_INVALID", repo=repo, reason=_CONFIG_REASONS.get(problem, "unreadable"))
    return root


def _not_found(code: str, repo: str, exc: OSError | None = None) -> ToolError:
    """Missing, or unreadable (SC-004: the error identifies which): FILE_NOT_FOUND becomes
    FILE_UNREADABLE, DIR_NOT_FOUND becomes DIR_UNREADABLE when the OS refused the read."""
    if isinstance(exc, PermissionError):
        return ToolError(code.replace("NOT_FOUND", "UNREADABLE"), field="path", repo=repo, reason="unreadable")
    return ToolError(code, field="path", repo=repo, reason="missing")


# -- search ----------------------------------------------------------------------------
def preview_of(line: str, index: int) -> str:
    if len(line) <= PREVIEW_CHARS:
        return line
    start = min(max(0, index - PREVIEW_BEFORE), len(line) - PREVIEW_CHARS)
    return line[start:start + PREVIEW_CHARS]


def _matches_in(text: str, query: str, repo: str, rel: str, out: list[Result], need: int) -> None:
    """Append one entry per line containing `query` (the query holds no '\\n')."""
    pos = text.find(query)
    line_no, counted = 1, 0
    end_of_text = len(text)
    while pos != -1 and len(out) < need:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        if end == -1:
            end = end_of_text
        line_no += text.count("\n", counted, start)
        counted = start
        line = text[start:end]
        if line.endswith("\r"):
            line = line[:-1]
        index = line.find(query)  # the raw hit may have used the stripped '\r'
        if index != -1:
            out.append({"repo": repo, "path": rel, "line": line_no, "preview": preview_of(line, index)})
        if end >= end_of_text:
            break
        pos = text.find(query, end + 1)


def search(roots: Roots, args: dict[str, Any]) -> tuple[Result, bool]:
    query, repo, limit = args["query"], args["repo"], args["limit"]
    _check_repo(repo, SEARCH_REPOS)
    if not query.strip(JS_WHITESPACE):
        raise ToolError("QUERY_EMPTY", field="query")
    if limit < 1:
        raise ToolError("LIMIT_INVALID", field="limit", reason="below_minimum")
    if limit > MAX_LIMIT:
        raise ToolError("LIMIT_INVALID", field="limit", reason="above_maximum")
    repos = FILE_REPOS if repo == "both" else (repo,)
    roots_real = [(r, _check_root(roots, r)) for r in repos]
    matches: list[Result] = []
    need = limit + 1  # one more than asked, to know whether the answer is truncated
    if "\n" not in query:  # lines never contain '\n', so such a query never matches
        needle = query.encode("utf-8", "surrogatepass")
        for name, root in roots_real:
            if len(matches) >= need:
                break
            for rel, abs_path in walk.walk_files(root):
                if len(matches) >= need:
                    break
                try:
                    data = walk.read_bytes(abs_path)
                    if needle not in data:
                        continue
                    text = walk.decode_text(data)
                except (OSError, walk.NotRegular, walk.TooLarge, walk.Binary):
                    continue  # binary, oversized and vanished files are skipped silently
                _matches_in(text, query, name, rel, matches, need)
    truncated = len(matches) > limit
    return {"matches": matches[:limit]}, truncated


# -- open_file / get_snippet -----------------------------------------------------------
def _read_lines(roots: Roots, repo: str, relative: str) -> list[str]:
    root = _check_root(roots, repo)
    real = resolve(root, relative, repo)
    try:
        info = os.lstat(real)
    except OSError as exc:
        raise _not_found("FILE_NOT_FOUND", repo, exc) from None
    if stat.S_ISLNK(info.st_mode):  # a symlink loop realpath could not resolve
        raise _not_found("FILE_NOT_FOUND", repo)
    is_dir = stat.S_ISDIR(info.st_mode)
    if not (walk.is_visible(root, relative, is_dir)
            and walk.is_visible(root, relative_to_root(root, real), is_dir)):
        raise _not_found("FILE_NOT_FOUND", repo)  # hidden and ignored files are not visible
    if not stat.S_ISREG(info.st_mode):
        raise ToolError("NOT_A_FILE", field="path", repo=repo)
    if info.st_size > walk.MAX_FILE_BYTES:
        raise ToolError("FILE_TOO_LARGE", field="path", repo=repo, limit=walk.MAX_FILE_BYTES)
    try:
        data = walk.read_bytes(real)
        text = walk.decode_text(data)
    except walk.NotRegular:
        raise ToolError("NOT_A_FILE", field="path", repo=repo) from None
    except walk.TooLarge:
        raise ToolError("FILE_TOO_LARGE", field="path", repo=repo, limit=walk.MAX_FILE_BYTES) from None
    except walk.Binary as exc:
        raise ToolError("FILE_BINARY", field="path", repo=repo, reason=exc.reason) from None
    except OSError as exc:  # vanished, or swapped for a symlink (O_NOFOLLOW: ELOOP)
        raise _not_found("FILE_NOT_FOUND", repo, exc) from None
    return walk.split_lines(text)


def _numbered(lines: list[str], first: int) -> list[Result]:
    return [{"line": first + i, "text": text} for i, text in enumerate(lines)]


def open_file(roots: Roots, args: dict[str, Any]) -> tuple[Result, bool]:
    repo = args["repo"]
    _check_repo(repo, FILE_REPOS)
    relative = normalize(args["path"], repo)
    lines = _read_lines(roots, repo, relative)
    return {"repo": repo, "path": relative, "line_count": len(lines), "lines": _numbered(lines, 1)}, False


def get_snippet(roots: Roots, args: dict[str, Any]) -> tuple[Result, bool]:
    repo, start, end = args["repo"], args["start_line"], args["end_line"]
    _check_repo(repo, FILE_REPOS)
    relative = normalize(args["path"], repo)
    if start < 1:
        raise ToolError("RANGE_INVALID", field="start_line", reason="start_below_one")
    if end < start:
        raise ToolError("RANGE_INVALID", field="end_line", reason="end_before_start")
    lines = _read_lines(roots, repo, relative)
    count = len(lines)
    if start > count:
        raise ToolError("RANGE_INVALID", field="start_line", reason="start_after_last_line", line_count=count)
    effective_end = min(end, count)
    result = {"repo": repo, "path": relative, "start_line": start, "end_line": effective_end,
              "line_count": count, "lines": _numbered(lines[start - 1:effective_end], start)}
    return result, end > count


# -- list_dir --------------------------------------------------------------------------
def list_dir(roots: Roots, args: dict[str, Any]) -> tuple[Result, bool]:
    repo = args["repo"]
    _check_repo(repo, FILE_REPOS)
    relative = normalize(args["path"], repo, allow_root=True)
    root = _check_root(roots, repo)
    real = resolve(root, relative, repo)
    if real != (root / relative if relative else root):
        raise _not_found("DIR_NOT_FOUND", repo)  # list_dir never follows a symlink
    try:
        info = os.lstat(real)
    except OSError as exc:
        raise _not_found("DIR_NOT_FOUND", repo, exc) from None
    is_dir = stat.S_ISDIR(info.st_mode)
    if not walk.is_visible(root, relative, is_dir):
        raise _not_found("DIR_NOT_FOUND", repo)
    if not is_dir:
        raise ToolError("NOT_A_DIRECTORY", field="path", repo=repo)
    if not os.access(real, os.R_OK | os.X_OK):
        raise ToolError("DIR_UNREADABLE", field="path", repo=repo, reason="unreadable")
    return {"repo": repo, "path": relative, "entries": walk.list_entries(root, relative, real)}, False


# -- dispatch --------------------------------------------------------------------------
TOOLS: dict[str, tuple[str, Callable[[Roots, dict[str, Any]], tuple[Result, bool]]]] = {
    "search": (
        "Literal, case-sensitive substring search, line by line, over the docs and/or code "
        "repository. Returns {repo, path, line, preview} per matching line, ordered by repo "
        "(docs, then code), path and line; at most `limit` matches (default 200). Hidden, "
        ".gitignored, binary and symlinked files are skipped.",
        search,
    ),
    "open_file": (
        "Return a whole text file (at most 10 MiB) from the docs or code repository, as "
        "numbered lines. The path is relative to the repository root.",
        open_file,
    ),
    "get_snippet": (
        "Return lines start_line..end_line (1-based, inclusive) of a text file in the docs or "
        "code repository; end_line past the end is clamped and meta.truncated is set.",
        get_snippet,
    ),
    "list_dir": (
        "List the files and directories directly inside a directory of the docs or code "
        "repository (path '' = the root), sorted by name; hidden, .gitignored and symlinked "
        "entries are left out.",
        list_dir,
    ),
}


@dataclass
class Outcome:
    body: dict[str, Any]
    is_error: bool
    repo: str | None  # for the log line: only a validated repo name, never raw input
    code: str | None
    duration_ms: float


def call_tool(roots: Roots, name: str, arguments: Any) -> Outcome:
    started = time.perf_counter()
    repo: str | None = None
    try:
        if name not in TOOLS:
            raise ToolError("INVALID_ARGUMENT", reason="unknown_tool")
        args = parse_arguments(name, arguments)
        allowed = SEARCH_REPOS if name == "search" else FILE_REPOS
        repo = args["repo"] if args["repo"] in allowed else None
        result, truncated = TOOLS[name][1](roots, args)
    except ToolError as exc:
        elapsed = (time.perf_counter() - started) * 1000
        return Outcome(exc.body(), True, repo, exc.code, elapsed)
    except Exception:  # noqa: BLE001 - never a traceback or a crash, never internals
        elapsed = (time.perf_counter() - started) * 1000
        return Outcome(ToolError("INTERNAL_ERROR").body(), True, repo, "INTERNAL_ERROR", elapsed)
    elapsed = (time.perf_counter() - started) * 1000
    meta = {"repo": repo, "duration_ms": round(elapsed, 3), "truncated": truncated}
    return Outcome({"result": result, "meta": meta}, False, repo, None, elapsed)


# -- schemas ---------------------------------------------------------------------------
def _schema_dir() -> Path:
    """The reference's own documented schemas (its contract, beside the code)."""
    return Path(__file__).resolve().parent / "contract" / "schemas"


@cache
def schema(name: str) -> dict[str, Any]:
    """Load e.g. schema('search.input') from contract/schemas/search.input.schema.json."""
    return json.loads((_schema_dir() / f"{name}.schema.json").read_text(encoding="utf-8"))
