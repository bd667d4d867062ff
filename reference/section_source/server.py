"""Reference stdio MCP server for the section-source-local profile (seed 000).

Built on the official SDK's low-level Server so the advertised surface is exactly what the
profile allows: tools only, no resources, no prompts.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from jsonschema import Draft202012Validator
from mcp.server.lowlevel import Server

from reference._serve import READ_ONLY, serve_http, serve_stdio

from . import builder
from .config import ConfigError, parse_args, vault_root
from .paths import NoteNotFound, UnsafePath
from .tools import TOOLS

log = logging.getLogger("rc.reference")

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Vault-relative note path, e.g. inbox/example.md"},
    },
    "required": ["path"],
    "additionalProperties": False,
}
_INPUT = Draft202012Validator(INPUT_SCHEMA)

# Error messages are fixed strings: they never carry the request path or note content.
MSG_INPUT = "Invalid input: exactly one string argument `path` is accepted"
MSG_PATH = "Invalid path: must be a vault-relative note path inside the vault"
MSG_MISSING = "Note not found"
MSG_RUNTIME = "Runtime error"


def _error(message: str) -> types.CallToolResult:
    body = json.dumps({"error": message, "code": "RUNTIME_ERROR"})
    return types.CallToolResult(content=[types.TextContent(type="text", text=body)], is_error=True)


def _run_tool(vault: Path, name: str, arguments: dict[str, Any] | None) -> tuple[str, types.CallToolResult, dict]:
    """Return (outcome class, result, log fields)."""
    if not _INPUT.is_valid(arguments if arguments is not None else {}):
        return "invalid_input", _error(MSG_INPUT), {}
    try:
        output = TOOLS[name][1](vault, arguments["path"])
    except UnsafePath:
        return "invalid_path", _error(MSG_PATH), {}
    except NoteNotFound:
        return "not_found", _error(MSG_MISSING), {}
    except builder.InputTooLarge as exc:
        return "too_large", _error(str(exc)), {}
    except builder.InputTooComplex:
        return "too_complex", _error("Note is too deeply nested to outline"), {}
    except Exception:  # noqa: BLE001 - a tool never crashes the server or leaks a traceback
        return "runtime_error", _error(MSG_RUNTIME), {}
    fields = {}
    if "sections" in output:
        fields = {"sections": len(output["sections"]), "truncated": output["truncated"]}
    text = json.dumps(output, ensure_ascii=False)
    return "ok", types.CallToolResult(content=[types.TextContent(type="text", text=text)]), fields


def build_server(vault: Path) -> Server:
    tools = [
        types.Tool(name=name, description=description, input_schema=INPUT_SCHEMA, annotations=READ_ONLY)
        for name, (description, _fn) in TOOLS.items()
    ]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOLS:
            log.info("tool=unknown outcome=unknown_tool elapsed_ms=0.0")
            return _error("Unknown tool")
        started = time.perf_counter()
        outcome, result, fields = _run_tool(vault, params.name, params.arguments)
        elapsed = (time.perf_counter() - started) * 1000
        extra = "".join(f" {k}={str(v).lower()}" for k, v in fields.items())
        log.info("tool=%s outcome=%s elapsed_ms=%.1f%s", params.name, outcome, elapsed, extra)
        return result

    return Server("rc-section-source-local", version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool)



def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s %(message)s")
    log.setLevel(logging.INFO)
    args = parse_args(argv)
    try:
        vault = vault_root(args)
    except ConfigError as exc:
        print(f"rc-section-source-local: {exc}", file=sys.stderr)
        return 2
    if args.http:
        serve_http(build_server(vault), args.host, args.port)
    else:
        anyio.run(serve_stdio, build_server(vault))
    return 0


if __name__ == "__main__":
    sys.exit(main())
