"""Per-request bearer authentication in front of the SDK's Streamable HTTP app.

`BearerGate` checks Host/Origin, then verifies the request's JWT, and puts the resulting
`SessionContext` into that request's ASGI scope. The SDK hands the same scope to the tool
handlers as `ctx.request`, so `session_of(ctx)` always sees the credentials of the request
being answered; nothing is remembered between requests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import jwt
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

ALGORITHMS = ["HS256"]
SCOPE_KEY = "rc.hosted.session"
_UNAUTHORIZED = json.dumps({"error": "Unauthorized"}).encode("utf-8")


@dataclass(frozen=True)
class SessionContext:
    """The hosted session context of one request (the seed's ctx.*)."""

    user_id: str
    vault_id: str
    canister_user_id: str | None
    role: str | None
    token: str = field(repr=False)
    expires_at: int = 0


class InvalidToken(Exception):
    pass


def decode_claims(token: str, secret: str) -> dict[str, Any]:
    """Verify signature (HS256 only) and expiry; raise jwt.PyJWTError otherwise."""
    return jwt.decode(token, secret, algorithms=ALGORITHMS, options={"require": ["exp"]})


def _optional_string(claims: dict[str, Any], name: str) -> str | None:
    value = claims.get(name)
    if value is not None and not isinstance(value, str):
        raise InvalidToken(name)
    return value or None


def session_from_token(token: str, secret: str) -> SessionContext:
    try:
        claims = decode_claims(token, secret)
    except jwt.PyJWTError as exc:
        raise InvalidToken("rejected") from exc
    for name in ("sub", "vault_id"):
        if not isinstance(claims.get(name), str) or not claims[name]:
            raise InvalidToken(name)
    return SessionContext(user_id=claims["sub"], vault_id=claims["vault_id"],
                   canister_user_id=_optional_string(claims, "canister_user_id"),
                   role=_optional_string(claims, "role"), token=token,
                   expires_at=int(claims.get("exp", 0)))


def bearer_token(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token and " " not in token else None


def session_of(ctx: Any) -> SessionContext | None:
    """The verified session of the request `ctx` answers (None off HTTP)."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    return scope.get(SCOPE_KEY) if isinstance(scope, dict) else None


class BearerGate:
    """ASGI middleware: Host/Origin first (403/421), then the bearer token (401)."""

    def __init__(self, app: ASGIApp, secret: str, security: TransportSecuritySettings | None) -> None:
        self.app = app
        self._secret = secret
        self._origin_check = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refused = await self._origin_check.validate_request(request, is_post=False)
        if refused is not None:
            await refused(scope, receive, send)
            return
        token = bearer_token(request)
        try:
            session = session_from_token(token, self._secret) if token else None
        except InvalidToken:
            session = None
        if session is None:
            await _unauthorized(send)
            return
        scope[SCOPE_KEY] = session
        # Lets the SDK bind each Mcp-Session-Id to the principal that opened it.
        scope["user"] = AuthenticatedUser(AccessToken(
            token=token, client_id=session.vault_id, scopes=[], expires_at=session.expires_at,
            subject=session.user_id))
        await self.app(scope, receive, send)


async def _unauthorized(send: Send) -> None:
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(_UNAUTHORIZED)).encode("ascii")),
        (b"www-authenticate", b"Bearer"),
    ]})
    await send({"type": "http.response.body", "body": _UNAUTHORIZED})
