"""Bearer JWTs for the hosted profile's MCP sessions (HS256, PyJWT).

Seed 001 names the session context the hosted gateway works from -- `ctx.userId`,
`ctx.vaultId`, `ctx.canisterUserId` (effective canister user, falling back to `ctx.userId`),
`ctx.token` and the role checked by `isToolAllowed(tool, role)` -- but it does NOT name the
JWT claims that carry them. ASSUMPTION, documented here and in CLAIMS: the user id is the
standard `sub`, and the others are `vault_id`, `canister_user_id` and `role`; `iat` and `exp`
are standard. `canister_user_id` is omitted from the token when not given, so the server's
fallback to the actor user id can be exercised. A profile whose gateway expects other claim
names can add them through `extra=`, which is merged last and overrides the defaults.

Every "bad" token variant takes the same arguments as `mint` so tests can swap them:
`wrong_signature` (same claims, another random secret), `expired` (exp in the past, beyond
any reasonable leeway), `unsigned` (alg "none", empty signature; the secret is ignored) and
`malformed()` (three base64url segments that are not a JWT). Secrets come from
`new_secret()`, which is random each time; there is no fixed secret anywhere.
"""

from __future__ import annotations

import base64
import secrets
import time
from typing import Any

import jwt

ALGORITHM = "HS256"
CLAIMS = {
    "user": "sub",                           # ctx.userId (actor)
    "vault": "vault_id",                     # ctx.vaultId (active hosted vault)
    "canister_user": "canister_user_id",     # ctx.canisterUserId (effective canister user)
    "role": "role",                          # role for isToolAllowed(tool, role)
}
EXPIRED_BY_S = 3600


def new_secret() -> str:
    """A fresh random HS256 secret (256 bits of entropy, URL-safe text)."""
    return secrets.token_urlsafe(32)


def claims(*, sub: str, vault_id: str, role: str, canister_user_id: str | None = None,
           ttl_s: int = 300, extra: dict[str, Any] | None = None,
           now: int | None = None) -> dict[str, Any]:
    """The claim set `mint` signs."""
    issued = int(time.time()) if now is None else now
    out: dict[str, Any] = {
        CLAIMS["user"]: sub,
        CLAIMS["vault"]: vault_id,
        CLAIMS["role"]: role,
        "iat": issued,
        "exp": issued + int(ttl_s),
    }
    if canister_user_id is not None:
        out[CLAIMS["canister_user"]] = canister_user_id
    if extra:
        out.update(extra)
    return out


def mint(secret: str, *, sub: str, vault_id: str, role: str,
         canister_user_id: str | None = None, ttl_s: int = 300,
         extra: dict[str, Any] | None = None) -> str:
    """A valid HS256 session token."""
    payload = claims(sub=sub, vault_id=vault_id, role=role, canister_user_id=canister_user_id,
                     ttl_s=ttl_s, extra=extra)
    return jwt.encode(payload, secret, algorithm=ALGORITHM)


def decode(token: str, secret: str, **options: Any) -> dict[str, Any]:
    """Verify and decode a token the way a strict gateway would (HS256 only)."""
    return jwt.decode(token, secret, algorithms=[ALGORITHM], **options)


def wrong_signature(secret: str, *, sub: str, vault_id: str, role: str,
                    canister_user_id: str | None = None, ttl_s: int = 300,
                    extra: dict[str, Any] | None = None) -> str:
    """The same claims as `mint(secret, ...)`, signed with another random secret."""
    other = new_secret()
    while other == secret:  # pragma: no cover - 256 random bits
        other = new_secret()
    return mint(other, sub=sub, vault_id=vault_id, role=role,
                canister_user_id=canister_user_id, ttl_s=ttl_s, extra=extra)


def expired(secret: str, *, sub: str, vault_id: str, role: str,
            canister_user_id: str | None = None, ttl_s: int = 300,
            extra: dict[str, Any] | None = None) -> str:
    """Correctly signed, but `exp` lies EXPIRED_BY_S seconds in the past."""
    issued = int(time.time()) - EXPIRED_BY_S - int(ttl_s)
    payload = claims(sub=sub, vault_id=vault_id, role=role, canister_user_id=canister_user_id,
                     ttl_s=ttl_s, extra=extra, now=issued)
    return jwt.encode(payload, secret, algorithm=ALGORITHM)


def unsigned(secret: str | None = None, *, sub: str, vault_id: str, role: str,
             canister_user_id: str | None = None, ttl_s: int = 300,
             extra: dict[str, Any] | None = None) -> str:
    """The same claims with header alg "none" and an empty signature (`secret` is ignored)."""
    payload = claims(sub=sub, vault_id=vault_id, role=role, canister_user_id=canister_user_id,
                     ttl_s=ttl_s, extra=extra)
    return jwt.encode(payload, None, algorithm="none")


def malformed() -> str:
    """Three dot-separated base64url segments that do not decode to a JWT header or claims."""
    def seg(raw: bytes) -> str:
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    return ".".join((seg(b"\xff\xfe not json " + secrets.token_bytes(6)),
                     seg(b"{truncated" + secrets.token_bytes(6)),
                     seg(secrets.token_bytes(16))))
