"""A minimal section-source-hosted server on the SDK's high-level MCPServer.

Run: RC_JWT_SECRET=... RC_CANISTER_URL=... python examples/section-source-hosted/server.py --port 8765 --phase 1L
(Streamable HTTP at /mcp.) It reuses the reference's settings, JWT check, role ACL and tool
body (validate, one canister read, derive, sanitise); everything MCP-facing is here, on
MCPServer's own bearer auth (`token_verifier` + `auth`). README.md lists the pitfalls.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for `reference`
from reference.section_source.server import INPUT_SCHEMA, READ_ONLY  # noqa: E402
from reference.section_source_hosted import acl, auth, tools  # noqa: E402
from reference.section_source_hosted.config import PROG, ConfigError, Settings, load_settings, parse_args  # noqa: E402
from reference.section_source_hosted.server import configure_logging, log_call  # noqa: E402
from reference.section_source_hosted.upstream import ToolFailure  # noqa: E402

NAME = "get_section_source"


class SessionTokens:
    """The SDK's TokenVerifier over the reference's JWT check. An AccessToken is all the SDK
    keeps of a request's credentials, so the session's claims travel in it."""

    def __init__(self, secret: str) -> None:
        self._secret = secret

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            session = auth.session_from_token(token, self._secret)
        except auth.InvalidToken:
            return None  # the SDK answers HTTP 401
        # client_id and subject also bind each Mcp-Session-Id to the principal that opened it.
        return AccessToken(token=token, client_id=session.vault_id, subject=session.user_id, scopes=[],
                           expires_at=session.expires_at,
                           claims={"canister_user_id": session.canister_user_id, "role": session.role})


def current_session() -> auth.SessionContext | None:
    """The verified session of the request being answered (a contextvar the SDK sets per request)."""
    access = get_access_token()
    if access is None or access.subject is None:
        return None
    claims = access.claims or {}
    return auth.SessionContext(user_id=access.subject, vault_id=access.client_id,
                               canister_user_id=claims.get("canister_user_id"), role=claims.get("role"),
                               token=access.token, expires_at=access.expires_at or 0)


def make_server(settings: Settings) -> MCPServer:
    async def get_section_source(path: str) -> CallToolResult:
        session = current_session()
        if session is None or not acl.is_tool_allowed(NAME, session.role, settings.phase):
            return tools.error_result(tools.MSG_RUNTIME)
        started = time.perf_counter()
        # Pitfall 1: the reference's tool body returns its error results itself, never raises.
        outcome = await tools.run(NAME, tools.Call(session, settings), {"path": path})
        log_call(NAME, outcome, (time.perf_counter() - started) * 1000)
        return outcome.result

    tool = Tool.from_function(get_section_source, description=tools.TOOLS[NAME][0], annotations=READ_ONLY,
                              structured_output=False)
    tool.parameters = INPUT_SCHEMA  # pitfall 2: the exact schema, closed to extra arguments
    # Pitfall 8: the phase decides registration; MCPServer lists the same tools to every session, which
    # fits this ACL (one tool set per phase for every role), not one that differs by role.
    granted = any(acl.is_tool_allowed(NAME, role, settings.phase) for role in acl.ROLES)

    async def check_arguments(ctx, call_next):
        """Runs before MCPServer validates (and trims) the arguments: the reference's own check,
        so a missing, non-string or extra argument gets the profile's error, and no read."""
        if granted and ctx.method == "tools/call" and isinstance(ctx.params, dict) and ctx.params.get("name") == NAME:
            try:
                tools.request_path(ctx.params.get("arguments"))
            except ToolFailure as failure:
                return tools.error_result(failure.message)
        return await call_next(ctx)

    # Pitfall 4: the default log level INFO would log each canister URL (a note path) via httpx.
    # Pitfall 5: AuthSettings requires an issuer URL even with no OAuth server in sight; with
    # resource_server_url None it is never published (no metadata route, no WWW-Authenticate link).
    return MCPServer("example-section-source-hosted", tools=[tool] if granted else [], middleware=[check_arguments],
                     log_level="WARNING", token_verifier=SessionTokens(settings.jwt_secret),
                     auth=AuthSettings(issuer_url="http://127.0.0.1", resource_server_url=None))


def main(argv: list[str] | None = None) -> int:
    configure_logging()  # before MCPServer's own basicConfig (pitfall 4)
    args = parse_args(argv)
    try:
        settings = load_settings(args)
    except ConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    make_server(settings).run(transport="streamable-http", host=args.host, port=args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
