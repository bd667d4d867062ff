"""Argument checks shared by the HTTP routes and the MCP tools, in documented field order.

Each check raises VaultError with the field's Phase 1 code; `protocol=True` marks a missing
required argument or a wrong JSON type (MCP answers those with InvalidParams, -32602).
An optional field is omitted only when absent: JSON null is a wrong type, as in the OpenAPI
schemas. Unknown arguments are ignored (mcp-tools.md#tool-definitions).
"""

from __future__ import annotations

import re
from typing import Any

from .errors import VaultError

MODES = ("lexical", "embedding", "hybrid")
MAX_QUERY = 1000
DEFAULT_LIMIT, MAX_LIMIT = 10, 50
NOTE_ID = re.compile(r"[0-9a-f]{32}")
CHUNK_ID = re.compile(r"([0-9a-f]{32}):([0-9]+)")
# Whitespace for "whitespace-only" queries: the union of Python's str.isspace() and ECMAScript's
# WhiteSpace/LineTerminator sets, so the OpenAPI pattern means the same in every regex dialect.
WHITESPACE = frozenset("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
                       + "".join(chr(c) for c in range(0x2000, 0x200B)))


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def query(args: dict[str, Any]) -> str:
    value = args.get("query")
    if not isinstance(value, str):
        raise VaultError("INVALID_QUERY", protocol=True, field="query")
    if len(value) > MAX_QUERY or all(c in WHITESPACE for c in value):
        raise VaultError("INVALID_QUERY", field="query")
    return value


def mode(args: dict[str, Any]) -> str | None:
    if "mode" not in args:
        return None
    value = args["mode"]
    if not isinstance(value, str):
        raise VaultError("INVALID_MODE", protocol=True, field="mode")
    if value not in MODES:
        raise VaultError("INVALID_MODE", field="mode")
    return value


def limit(args: dict[str, Any]) -> int:
    if "limit" not in args:
        return DEFAULT_LIMIT
    value = args["limit"]
    if not _number(value):
        raise VaultError("INVALID_LIMIT", protocol=True, field="limit")
    number = _integer(value)
    if number is None or not 1 <= number <= MAX_LIMIT:
        raise VaultError("INVALID_LIMIT", field="limit", limit=MAX_LIMIT)
    return number


def flag(args: dict[str, Any], name: str) -> bool:
    if name not in args:
        return False
    value = args[name]
    if not isinstance(value, bool):
        raise VaultError("INVALID_PARAMETER", protocol=True, field=name)
    return value


def note_id(args: dict[str, Any], name: str = "noteId") -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise VaultError("INVALID_ID", protocol=True, field=name)
    if not NOTE_ID.fullmatch(value):
        raise VaultError("INVALID_ID", field=name)
    return value


def chunk_index(args: dict[str, Any]) -> int:
    value = args.get("chunkIndex")
    if not _number(value):
        raise VaultError("INVALID_ID", protocol=True, field="chunkIndex")
    number = _integer(value)
    if number is None or number < 0:
        raise VaultError("INVALID_ID", field="chunkIndex")
    return number


def related_input(args: dict[str, Any]) -> tuple[str, str, str, int | None]:
    """(type, id, noteId, chunkIndex or None)."""
    kind = args.get("type")
    if not isinstance(kind, str):
        raise VaultError("INVALID_TYPE", protocol=True, field="type")
    if kind not in ("note", "chunk"):
        raise VaultError("INVALID_TYPE", field="type")
    value = args.get("id")
    if not isinstance(value, str):
        raise VaultError("INVALID_ID", protocol=True, field="id")
    if kind == "note":
        if not NOTE_ID.fullmatch(value):
            raise VaultError("INVALID_ID", field="id")
        return kind, value, value, None
    match = CHUNK_ID.fullmatch(value)
    if not match:
        raise VaultError("INVALID_ID", field="id")
    return kind, value, match.group(1), int(match.group(2))


def http_flag(raw: str | None, name: str) -> bool:
    """allowLarge / download from a query string: true or false (Phase 1 `allowLarge=true`)."""
    if raw is None:
        return False
    if raw in ("true", "false"):
        return raw == "true"
    raise VaultError("INVALID_PARAMETER", field=name)


def http_chunk_index(raw: str) -> int:
    if not re.fullmatch(r"[0-9]+", raw):
        raise VaultError("INVALID_ID", field="chunkIndex")
    return int(raw)
