"""Reference stdio MCP server for the retrieval-tools profile (seed 003).

Built on the official SDK's low-level Server so the advertised surface is exactly four
read-only tools: no resources, no prompts. It serves both protocol eras (handshake and
2026-07-28) through the SDK.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from reference._serve import READ_ONLY, serve_stdio

from .config import PROG, ConfigError, Roots, load_roots, parse_args
from .tools import TOOLS, Outcome, call_tool, schema

log = logging.getLogger("rc.retrieval_tools")



def tool_list() -> list[types.Tool]:
    return [
        types.Tool(name=name, description=description, input_schema=schema(f"{name}.input"),
                   output_schema=schema(f"{name}.output"), annotations=READ_ONLY)
        for name, (description, _fn) in TOOLS.items()
    ]


def to_result(outcome: Outcome) -> types.CallToolResult:
    text = json.dumps(outcome.body, ensure_ascii=False)
    content = [types.TextContent(type="text", text=text)]
    if outcome.is_error:
        return types.CallToolResult(content=content, is_error=True)
    return types.CallToolResult(content=content, structured_content=outcome.body)


def log_line(name: str, outcome: Outcome) -> str:
    """tool=NAME repo=REPO duration_ms=X outcome=ok|error [code=CODE]: no paths, queries or
    contents; an unknown tool name or repo value is not echoed."""
    tool = name if name in TOOLS else "unknown"
    line = f"tool={tool} repo={outcome.repo or '-'} duration_ms={outcome.duration_ms:.1f}"
    if outcome.is_error:
        return f"{line} outcome=error code={outcome.code}"
    return f"{line} outcome=ok"


def build_server(roots: Roots) -> Server:
    tools = tool_list()

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments: Any = params.arguments
        # Blocking file I/O runs in a worker thread so pings and other requests keep flowing.
        outcome = await anyio.to_thread.run_sync(call_tool, roots, params.name, arguments)
        log.info(log_line(params.name, outcome))
        return to_result(outcome)

    return Server("rc-retrieval-tools", version="0.1.0", on_list_tools=list_tools, on_call_tool=on_call_tool)



def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        roots = load_roots(args)
    except ConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s %(message)s")
    anyio.run(serve_stdio, build_server(roots))
    return 0


if __name__ == "__main__":
    sys.exit(main())
