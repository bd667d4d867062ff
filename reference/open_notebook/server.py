"""Reference MCP server for the open-notebook profile (seed 004), on the SDK's low-level Server.

Tools only (no resources, no prompts): exactly the seed's eleven. stdio by default,
Streamable HTTP with --http. Each tool result is one JSON text block (and the same object as
structuredContent on success); a failure is an isError result whose text is the seed's
`{"error": {...}}`. The seed's per-tool and per-result `metadata`, which MCP does not define,
travel in `_meta`, and every tool is also annotated readOnlyHint true, destructiveHint false.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from reference._serve import log_to_stderr, serve_http, serve_stdio

from . import world
from .config import PROG, Config, ConfigError, load_config, parse_args
from .layout import LayoutError
from .library import Library
from .session import SessionStore
from .tools import Outcome, Tools

log = logging.getLogger("rc.open_notebook")
SERVER_NAME, SERVER_VERSION = "open-notebook", "1.0.0"  # the seed's Server(...) literals
STDIO_SESSION = "stdio"  # one stdio process serves one session
ANNOTATIONS = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def tool_list() -> list[types.Tool]:
    return [types.Tool(name=name, description=description, input_schema=schema, annotations=ANNOTATIONS,
                       meta=dict(world.TOOL_METADATA))
            for name, (description, schema) in world.TOOLS.items()]


def session_key(ctx: Any) -> str | None:
    """stdio: the process. HTTP: the Mcp-Session-Id the SDK has validated; None without one."""
    request = getattr(ctx, "request", None)
    if request is None:
        return STDIO_SESSION
    headers = getattr(request, "headers", None)
    value = headers.get("mcp-session-id") if headers is not None else None
    return f"http:{value}" if value else None


def to_result(outcome: Outcome) -> types.CallToolResult:
    content = [types.TextContent(type="text", text=json.dumps(outcome.body, ensure_ascii=False))]
    meta = dict(world.RESULT_METADATA)
    if outcome.is_error:
        return types.CallToolResult(content=content, is_error=True, meta=meta)
    return types.CallToolResult(content=content, structured_content=outcome.body, meta=meta)


def build_server(config: Config, library: Library) -> Server:
    tools = Tools(library, config)
    sessions = SessionStore()
    listed = tool_list()

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        session = sessions.get(session_key(ctx))
        started = time.perf_counter()

        def run() -> Outcome:
            with session.lock:  # one call at a time per session: its context and streams change
                return tools.call(session, params.name, params.arguments)

        # File reads and ranking run in a worker thread so pings and other sessions keep flowing.
        outcome = await anyio.to_thread.run_sync(run)
        name = params.name if params.name in world.TOOLS else "unknown"
        log.info("tool=%s outcome=%s elapsed_ms=%.1f", name,
                 f"error type={outcome.error_type}" if outcome.is_error else "ok",
                 (time.perf_counter() - started) * 1000)
        return to_result(outcome)

    return Server(SERVER_NAME, version=SERVER_VERSION, on_list_tools=list_tools, on_call_tool=call_tool)


def configure_logging() -> None:
    """stderr only; one line per call with the tool, outcome and time, never text or ids."""
    log_to_stderr(log)


def main(argv: list[str] | None = None) -> int:
    configure_logging()
    args = parse_args(argv)
    try:
        config = load_config(args)
        library = Library(config.root)
    except (ConfigError, LayoutError) as exc:
        kind = "layout error: " if isinstance(exc, LayoutError) else ""
        print(f"{PROG}: {kind}{exc}", file=sys.stderr)
        return 2
    counts = library.counts()
    log.info("[Open Notebook MCP] Started in SAFE mode")
    log.info("[Open Notebook MCP] No collection context loaded")
    log.info("index built: %s", " ".join(f"{k}={v}" for k, v in counts.items()))
    if counts["artifacts_failing_checksum"]:
        log.warning("artifacts failing their checksum at start-up: %d (never served)",
                    counts["artifacts_failing_checksum"])
    server = build_server(config, library)
    if args.http:
        serve_http(server, args.host, args.port)
    else:
        anyio.run(serve_stdio, server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
