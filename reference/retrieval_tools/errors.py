"""Structured tool errors: one code, one fixed message per code, details from an allowlist.

Messages are constants so an error can never echo a requested path, a query or file content;
details carry only the keys in DETAIL_KEYS, and only values the server chose (argument names,
repo names, reason tokens, numbers). contract/errors.yaml documents the same
table; a unit test keeps the two equal.
"""

from __future__ import annotations

import json
from typing import Any

MESSAGES: dict[str, str] = {
    "INVALID_ARGUMENT": "Invalid arguments: a required field is missing, a field has the wrong type, or a field is not accepted",
    "REPO_INVALID": "Invalid repo: must be docs or code (search also accepts both)",
    "QUERY_EMPTY": "Invalid query: must not be empty or whitespace only",
    "LIMIT_INVALID": "Invalid limit: must be an integer from 1 to 10000",
    "PATH_INVALID": "Invalid path: must be a path relative to the repository root",
    "PATH_TRAVERSAL": "Invalid path: '..' segments are not allowed",
    "PATH_OUTSIDE_ROOT": "Invalid path: it resolves outside the repository root",
    "FILE_NOT_FOUND": "File not found",
    "DIR_NOT_FOUND": "Directory not found",
    "FILE_UNREADABLE": "File cannot be read (permission denied)",
    "DIR_UNREADABLE": "Directory cannot be read (permission denied)",
    "NOT_A_FILE": "Not a file: the path names a directory or a special file",
    "NOT_A_DIRECTORY": "Not a directory",
    "FILE_BINARY": "File is binary or not valid UTF-8 text",
    "FILE_TOO_LARGE": "File is larger than the 10 MiB limit",
    "RANGE_INVALID": "Invalid line range: need 1 <= start_line <= line count and end_line >= start_line",
    "CONFIG_INVALID": "Repository root is missing or unreadable: check DOCS_ROOT and CODE_ROOT",
    "INTERNAL_ERROR": "Internal error",
}
CODES = tuple(MESSAGES)
DETAIL_KEYS = frozenset({"field", "repo", "reason", "limit", "line_count"})


class ToolError(Exception):
    """A tool call failed with a catalogued code."""

    def __init__(self, code: str, **details: Any) -> None:
        if code not in MESSAGES:
            raise ValueError(f"uncatalogued error code {code}")
        unknown = set(details) - DETAIL_KEYS
        if unknown:
            raise ValueError(f"detail keys outside the allowlist: {sorted(unknown)}")
        super().__init__(code)
        self.code = code
        self.details = {k: v for k, v in details.items() if v is not None}

    @property
    def message(self) -> str:
        return MESSAGES[self.code]

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": dict(self.details)}}

    def to_json(self) -> str:
        return json.dumps(self.body(), ensure_ascii=False)
