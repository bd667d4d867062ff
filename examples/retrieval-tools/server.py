"""A minimal retrieval-tools server on the SDK's high-level MCPServer.

Run: DOCS_ROOT=... CODE_ROOT=... python examples/retrieval-tools/server.py  (stdio)
It reuses the reference's tool bodies (search, open_file, get_snippet, list_dir over the two
roots); the MCP side is here. README.md lists the MCPServer pitfalls this file works around.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for `reference`
from reference.retrieval_tools.config import ConfigError, load_roots, parse_args  # noqa: E402
from reference.retrieval_tools.errors import ToolError  # noqa: E402
from reference.retrieval_tools.server import log_line  # noqa: E402
from reference.retrieval_tools.tools import TOOLS, Outcome, call_tool, parse_arguments, schema  # noqa: E402

log = logging.getLogger("example.retrieval-tools")
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def to_result(outcome: Outcome) -> CallToolResult:
    """Pitfall 1: a raised ToolError would come back as "Error executing tool …" text, not as
    the profile's JSON error body; build the result yourself."""
    content = [TextContent(type="text", text=json.dumps(outcome.body, ensure_ascii=False))]
    if outcome.is_error:
        return CallToolResult(content=content, is_error=True)
    return CallToolResult(content=content, structured_content=outcome.body)


def make_server(roots) -> MCPServer:
    def run(name: str, arguments: dict[str, Any]) -> CallToolResult:
        outcome = call_tool(roots, name, {k: v for k, v in arguments.items() if v is not None})
        log.info(log_line(name, outcome))
        return to_result(outcome)

    def search(query: str, repo: str | None = None, limit: int | None = None) -> CallToolResult:
        return run("search", {"query": query, "repo": repo, "limit": limit})

    def open_file(repo: str, path: str) -> CallToolResult:
        return run("open_file", {"repo": repo, "path": path})

    def get_snippet(repo: str, path: str, start_line: int, end_line: int) -> CallToolResult:
        return run("get_snippet", {"repo": repo, "path": path, "start_line": start_line, "end_line": end_line})

    def list_dir(repo: str | None = None, path: str | None = None) -> CallToolResult:
        return run("list_dir", {"repo": repo, "path": path})

    tools = []
    for fn in (search, open_file, get_snippet, list_dir):
        tool = Tool.from_function(fn, description=TOOLS[fn.__name__][0], annotations=READ_ONLY,
                                  structured_output=False)
        # Pitfall 2: the generated schemas allow extra arguments and know no ranges; publish
        # the profile's own schemas instead (and check calls against them, below).
        tool.parameters = schema(f"{fn.__name__}.input")
        tool.output_schema = schema(f"{fn.__name__}.output")
        tools.append(tool)

    async def check_arguments(ctx, call_next):
        """Runs before MCPServer validates the arguments, which would drop extra ones and
        answer type errors with its own text."""
        if ctx.method == "tools/call" and isinstance(ctx.params, dict) and ctx.params.get("name") in TOOLS:
            try:
                parse_arguments(ctx.params["name"], ctx.params.get("arguments") or {})
            except ToolError as exc:
                return to_result(Outcome(exc.body(), True, None, exc.code, 0.0))
        return await call_next(ctx)

    # Pitfall 3: MCPServer advertises resources and prompts even with none registered.
    return MCPServer("example-retrieval-tools", tools=tools, middleware=[check_arguments])


def main() -> int:
    try:
        roots = load_roots(parse_args(sys.argv[1:]))
    except ConfigError as exc:
        print(f"example-retrieval-tools: {exc}", file=sys.stderr)
        return 2
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    make_server(roots).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
