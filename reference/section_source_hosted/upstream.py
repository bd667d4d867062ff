"""The one canister request a tool call may make, and its sanitised failures.

A fresh httpx client per request: no connection pool, cookie jar or anything else survives
a call. Failure messages are fixed strings plus at most a status code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import anyio
import httpx

from .auth import SessionContext
from .config import Settings

NOTES_PATH = "/api/v1/notes"
UPSTREAM_TIMEOUT_S = 5.0
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
MSG_UNAVAILABLE = "Upstream unavailable"
MSG_INVALID = "Upstream invalid response"
MSG_TOO_LARGE = "Note is too large to outline"
# httpx adds these on its own; the canister gets only the headers the seed lists (and Host).
_CLIENT_DEFAULTS = ("accept-encoding", "connection", "user-agent")
# Trust settings only, built once (about 25 ms each); no request data ever reaches it.
_TLS = httpx.create_ssl_context()


class ToolFailure(Exception):
    """A sanitised failure: outcome class, fixed message, upstream status class."""

    def __init__(self, outcome: str, message: str, upstream: str = "none") -> None:
        super().__init__(message)
        self.outcome, self.message, self.upstream = outcome, message, upstream


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes


def encode_component(path: str) -> str:
    """JavaScript's encodeURIComponent."""
    return quote(path, safe="-_.!~*'()")


def note_url(canister_url: str, path: str) -> str:
    return f"{canister_url}{NOTES_PATH}/{encode_component(path)}"


def effective_user_id(session: SessionContext) -> str:
    return session.canister_user_id or session.user_id


def note_headers(session: SessionContext, settings: Settings) -> dict[str, str]:
    headers = {
        "Authorization": f"Bearer {session.token}",
        "X-Vault-Id": session.vault_id,
        "X-User-Id": effective_user_id(session),
    }
    if settings.gateway_secret:
        headers["X-Gateway-Auth"] = settings.gateway_secret
    headers["Accept"] = "application/json"
    headers["Content-Type"] = "application/json"
    return headers


def status_class(status: int) -> str:
    return f"{status // 100}xx"


async def get(url: str, headers: dict[str, str]) -> Reply:
    """One GET, no redirects, bounded in time and size; ToolFailure on any transport trouble."""
    try:
        with anyio.fail_after(UPSTREAM_TIMEOUT_S):
            async with httpx.AsyncClient(timeout=UPSTREAM_TIMEOUT_S, follow_redirects=False,
                                         trust_env=False, verify=_TLS) as client:
                for name in _CLIENT_DEFAULTS:
                    del client.headers[name]
                async with client.stream("GET", url, headers=headers) as response:
                    body = bytearray()
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > MAX_RESPONSE_BYTES:
                            raise ToolFailure("too_large", MSG_TOO_LARGE, status_class(response.status_code))
                    return Reply(response.status_code, bytes(body))
    except (TimeoutError, httpx.HTTPError, OSError) as exc:
        raise ToolFailure("upstream_unavailable", MSG_UNAVAILABLE, "unavailable") from exc


def check_status(reply: Reply) -> None:
    if reply.status != 200:
        raise ToolFailure("upstream_status", f"Upstream {reply.status}", status_class(reply.status))


def note_payload(reply: Reply) -> dict[str, Any]:
    """The note JSON object, which must carry a string `content`."""
    try:
        payload = json.loads(reply.body)
    except ValueError:
        payload = None
    if not isinstance(payload, dict) or not isinstance(payload.get("content"), str):
        raise ToolFailure("upstream_invalid", MSG_INVALID, status_class(reply.status))
    return payload


async def read_note(session: SessionContext, settings: Settings, path: str) -> dict[str, Any]:
    """GET {canister}/api/v1/notes/{encodeURIComponent(path)}: the note's JSON object."""
    reply = await get(note_url(settings.canister_url, path), note_headers(session, settings))
    check_status(reply)
    return note_payload(reply)
