"""Reference hosted MCP server for the section-source-hosted profile (seed 001).

Streamable HTTP at /mcp (the SDK's app under uvicorn) behind `auth.BearerGate`. Built on the
low-level Server so the advertised surface is tools only. Every handler works from the
session of the request it answers; the ACL guard `acl.is_tool_allowed` decides both what
tools/list shows and what tools/call runs, and a refused tool is answered like an unknown one.
"""

from __future__ import annotations

import logging
import sys
import time

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.types import ASGIApp

from reference._serve import READ_ONLY, log_to_stderr, serve_app
from reference.section_source.server import INPUT_SCHEMA

from . import acl, auth, tools
from .config import PROG, ConfigError, Settings, load_settings, parse_args

log = logging.getLogger("rc.hosted")
# Sessions with Mcp-Session-Id (the SDK's default); stateless serving conforms too.
STATELESS_HTTP = False
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
UNKNOWN_TOOL = "Unknown tool"


def transport_security(host: str) -> TransportSecuritySettings | None:
    """The SDK's own loopback default, made explicit so BearerGate can check Origin first."""
    if host not in LOOPBACK_HOSTS:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def log_call(name: str, outcome: tools.Outcome, elapsed_ms: float) -> None:
    extra = "".join(f" {key}={str(value).lower() if isinstance(value, bool) else value}"
                    for key, value in outcome.fields.items())
    log.info("tool=%s outcome=%s upstream=%s elapsed_ms=%d%s",
             name, outcome.outcome, outcome.upstream, round(elapsed_ms), extra)


def refuse_tool() -> types.CallToolResult:
    """A tool this session may not use answers exactly like a tool that does not exist."""
    raise MCPError(code=types.INVALID_PARAMS, message=UNKNOWN_TOOL)


def _allowed(session: auth.SessionContext | None, name: str, phase: str) -> bool:
    return session is not None and name in tools.TOOLS and acl.is_tool_allowed(name, session.role, phase)


def build_server(settings: Settings) -> Server:
    async def list_tools(ctx, params) -> types.ListToolsResult:
        session = auth.session_of(ctx)
        return types.ListToolsResult(tools=[
            types.Tool(name=name, description=description, input_schema=INPUT_SCHEMA, annotations=READ_ONLY)
            for name, (description, _fn) in tools.TOOLS.items() if _allowed(session, name, settings.phase)
        ])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        session = auth.session_of(ctx)
        if not _allowed(session, params.name, settings.phase):
            log.info("tool=unknown outcome=unknown_tool upstream=none elapsed_ms=0")
            return refuse_tool()
        started = time.perf_counter()
        outcome = await tools.run(params.name, tools.Call(session, settings), params.arguments)
        log_call(params.name, outcome, (time.perf_counter() - started) * 1000)
        return outcome.result

    return Server(PROG, version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool)


def build_app(settings: Settings, host: str) -> ASGIApp:
    security = transport_security(host)
    app = build_server(settings).streamable_http_app(host=host, transport_security=security,
                                                     stateless_http=STATELESS_HTTP)
    return auth.BearerGate(app, settings.jwt_secret, security)


def configure_logging() -> None:
    """stderr only; httpx and uvicorn would log every request URL (a note path)."""
    log_to_stderr(log)


def main(argv: list[str] | None = None) -> int:
    configure_logging()
    args = parse_args(argv)
    try:
        settings = load_settings(args)
    except ConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    serve_app(build_app(settings, args.host), args.host, args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
