"""The hosted tools: validate, normalise, read one note upstream, derive in memory.

TOOLS is the registry the server lists and calls from (after the ACL guard); each tool is
an async function of (call, arguments) that returns its output or raises ToolFailure.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

from reference.section_source import builder

from . import upstream
from .auth import SessionContext
from .config import Settings
from .paths import InvalidPath, normalize_path
from .upstream import ToolFailure

ERROR_CODE = "UPSTREAM_ERROR"
MSG_PATH = "Invalid path"
MSG_INPUT = "Invalid input"
MSG_TOO_COMPLEX = "Note is too deeply nested to outline"
MSG_RUNTIME = "Runtime error"


@dataclass(frozen=True)
class Call:
    """What one tools/call works with: the request's session and the server's settings."""

    session: SessionContext
    settings: Settings


@dataclass(frozen=True)
class Outcome:
    result: types.CallToolResult
    outcome: str                                   # sanitised class for the log
    upstream: str                                  # 2xx|4xx|5xx|none|unavailable
    fields: dict[str, Any] = field(default_factory=dict)


ToolFn = Callable[[Call, dict[str, Any] | None], Awaitable[dict[str, Any]]]


def request_path(arguments: dict[str, Any] | None) -> str:
    """The normalised `path` argument, or ToolFailure before anything goes upstream."""
    arguments = arguments or {}
    if set(arguments) - {"path"}:
        raise ToolFailure("invalid_input", MSG_INPUT)
    try:
        return normalize_path(arguments.get("path"))
    except InvalidPath:
        raise ToolFailure("invalid_path", MSG_PATH) from None


def derive(path: str, payload: dict[str, Any]) -> dict[str, Any]:
    """SectionSource v0 of the note's content; `path` is always the normalised request path."""
    return builder.build_section_source(path, payload["content"])


async def get_section_source(call: Call, arguments: dict[str, Any] | None) -> dict[str, Any]:
    path = request_path(arguments)
    payload = await upstream.read_note(call.session, call.settings, path)
    return derive(path, payload)


TOOLS: dict[str, tuple[str, ToolFn]] = {
    "get_section_source": (
        "Return body-free SectionSource v0 metadata (section ids, heading paths, body_available "
        "flags) for one vault-relative Markdown note of the active hosted vault. Never returns "
        "bodies or snippets.",
        get_section_source,
    ),
}


def error_result(message: str) -> types.CallToolResult:
    body = json.dumps({"error": message, "code": ERROR_CODE})
    return types.CallToolResult(content=[types.TextContent(type="text", text=body)], is_error=True)


async def run(name: str, call: Call, arguments: dict[str, Any] | None) -> Outcome:
    """Run one allowed tool; every failure becomes a fixed-message error result."""
    try:
        output = await TOOLS[name][1](call, arguments)
    except ToolFailure as failure:
        return Outcome(error_result(failure.message), failure.outcome, failure.upstream)
    except builder.InputTooLarge:
        return Outcome(error_result(upstream.MSG_TOO_LARGE), "too_large", "2xx")
    except builder.InputTooComplex:
        return Outcome(error_result(MSG_TOO_COMPLEX), "too_complex", "2xx")
    except Exception:  # noqa: BLE001 - a tool never crashes the server or leaks a traceback
        return Outcome(error_result(MSG_RUNTIME), "runtime_error", "none")
    fields = {}
    if "sections" in output:
        fields = {"sections": len(output["sections"]), "truncated": output["truncated"]}
    text = json.dumps(output, ensure_ascii=False)
    return Outcome(types.CallToolResult(content=[types.TextContent(type="text", text=text)]),
                   "ok", "2xx", fields)
