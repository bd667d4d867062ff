"""The hosted profile's fixture: notes served by the upstream double, and the session tokens.

The notes are the self-hosted fixture's (the same synthetic vault, golden vectors and stress
notes), loaded into an UpstreamDouble under the session's vault id instead of being read
from disk. A second vault and a second user hold notes of their own, so a server that reads
with the wrong vault or user header, or mixes sessions, shows a canary it must not.

Canary classes: the vault fixture's (body, code, frontmatter, outside, path, title) plus
`heading` (heading text: fine in results, never in logs), `upstream` (the double's payload
marker, present in every failure body), `bearer` (the default session token's signature),
`jwtsecret` and `gateway` (the two secrets the server is given), and the identifiers a log may
not carry: `notepath` (a segment of a valid note's path), `vaultid`, `userid` and
`canisteruser` (the default session's ids). All are lower case, as the scanner expects.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt

from contract_tests.synthetic import tokens, vault
from contract_tests.synthetic.adapter import ContractFixture, Reads, register
from contract_tests.synthetic.upstream import UpstreamDouble, note_payload, read_path

ROLES = ("viewer", "editor", "evaluator", "admin")
_UNSET: Any = object()


@register
@dataclass
class CanisterFixture(ContractFixture):
    kind = "canister"
    injection_texts = vault.PROMPT_INJECTION_HEADINGS
    root: Path
    canaries: dict[str, str]
    upstream: UpstreamDouble
    jwt_secret: str
    gateway_secret: str
    vault_id: str
    other_vault_id: str
    user: str
    canister_user: str
    notes: list[str] = field(default_factory=list)       # readable notes of the session's vault
    texts: dict[str, str] = field(default_factory=dict)  # path -> Markdown, session's vault
    stress: dict[str, str] = field(default_factory=dict)
    other_vault_only: str = "private/other-vault-only.md"
    other_user_only: str = "private/other-user-only.md"
    default_token: str = ""

    @property
    def fake_vault_path(self) -> str:
        """What `{vault}` stands for in the path-attack corpus: an absolute path with a canary."""
        return f"/srv/rc-{self.canaries['path']}/vault"

    def placeholders(self) -> dict[str, str]:
        return {"canister_url": self.upstream.url, "jwt_secret": self.jwt_secret,
                "gateway_secret": self.gateway_secret, "root": str(self.root)}

    def corpus_placeholders(self) -> dict[str, str]:
        return {"vault": self.fake_vault_path, "root": self.fake_vault_path.rsplit("/", 1)[0]}

    def token(self, role: str | None = "viewer", *, user: str | None = None, vault_id: str | None = None,
              canister_user: str | None = _UNSET, kind: str = "valid") -> str:
        """A session token; `kind` is valid, wrong_signature, expired or unsigned.

        `role=None` gives a valid token with no role claim at all.
        """
        cu = self.canister_user if canister_user is _UNSET else canister_user
        identity = dict(sub=user or self.user, vault_id=vault_id or self.vault_id, canister_user_id=cu)
        if role is None:
            claims = tokens.claims(role="", **identity)
            claims.pop(tokens.CLAIMS["role"])
            return jwt.encode(claims, self.jwt_secret, algorithm=tokens.ALGORITHM)
        mint = {"valid": tokens.mint, "wrong_signature": tokens.wrong_signature,
                "expired": tokens.expired, "unsigned": tokens.unsigned}[kind]
        return mint(self.jwt_secret, role=role, **identity)

    def session_headers(self, token: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.default_token}"}

    def put(self, path: str, text: str, *, vault_id: str | None = None, user_id: str | None = None) -> None:
        self.upstream.put_note(vault_id or self.vault_id, path,
                               note_payload(path, text, {"owner": f"{self.canaries['frontmatter']} owner"}),
                               user_id=user_id)

    def close(self) -> None:
        self.upstream.stop()

    @classmethod
    def build(cls, profile: Any, base: Path, settings: dict[str, Any]) -> "CanisterFixture":
        return build_canister(base, profile.vectors(), profile.limits, **settings)

    # -- ContractFixture ----------------------------------------------------------------
    @classmethod
    def running_server_problem(cls, options: dict[str, Any], environ: Any) -> str | None:
        if not environ.get("RC_JWT_SECRET"):
            return "set RC_JWT_SECRET to the secret the running server verifies tokens with"
        if not options.get("canister_port"):
            return "give --canister-port, the loopback port of the canister URL the running server was configured with"
        if options.get("workers") not in (None, 0):
            return "run without -n (one canister double on --canister-port)"
        return None

    @classmethod
    def running_server_settings(cls, options: dict[str, Any], environ: Any) -> dict[str, Any]:
        return {"port": options["canister_port"], "jwt_secret": environ.get("RC_JWT_SECRET"),
                "gateway_secret": environ.get("RC_GATEWAY_SECRET", "")}

    def items(self) -> list[str]:
        return list(self.notes)

    def write(self, relative: str, text: str) -> None:
        self.texts[relative] = text
        self.put(relative, text)

    def remove(self, relative: str) -> None:
        self.texts.pop(relative, None)
        self.upstream.delete_note(self.vault_id, relative)

    @contextlib.contextmanager
    def reading(self) -> Iterator[Reads]:
        """Reads are the double's requests: `vault/<note>` for a one-note GET of the session's
        vault, the request line for anything else."""
        before = len(self.upstream.requests)
        reads = Reads()
        yield reads
        for request in self.upstream.requests[before:]:
            path = read_path(request)
            if path is not None and request.headers.get("x-vault-id") == self.vault_id:
                reads.locations.append(f"vault/{path}")
            else:
                reads.locations.append(f"request {request.method} {request.path}")

    def allowed_ports(self) -> tuple[int, ...]:
        return (self.upstream.address[1],)

    def snapshot(self) -> Any:
        return len(self.upstream.requests)

    def changes(self, before: Any) -> list[str]:
        """Requests that could change the store: anything but GET."""
        return [f"{r.method} {r.path}" for r in self.upstream.requests[before:] if r.method != "GET"]

    def attack_roots(self) -> list[str]:
        return ["vault"]

    def attack_placeholders(self, root: str) -> dict[str, str]:
        return self.corpus_placeholders()

    def derived_attacks(self, root: str) -> list[dict[str, Any]]:
        base = self.fake_vault_path
        return [
            {"id": "derived-back-in-vault", "category": "traversal", "path": "../vault/inbox/example.md",
             "expect": "reject"},
            {"id": "derived-down-up-vault", "category": "traversal", "path": "inbox/..", "expect": "reject"},
            {"id": "derived-down-up-back-vault", "category": "traversal", "path": "inbox/../inbox/example.md",
             "expect": "reject"},
            {"id": "derived-other-vault", "category": "traversal", "path": f"../{self.other_vault_id}/"
             f"{self.other_vault_only}", "expect": "reject"},
            {"id": "derived-absolute-inside-vault", "category": "absolute-inside",
             "path": f"{base}/inbox/example.md", "expect": "reject"},
        ]


def build_canister(base: Path, vectors: list[dict[str, Any]], limits: dict[str, Any], *,
                   port: int = 0, jwt_secret: str | None = None,
                   gateway_secret: str | None = None) -> CanisterFixture:
    source = vault.build_fixture(base, vectors, limits)  # generates the notes; read back below
    c = dict(source.canaries)
    c["heading"] = f"rcheading{secrets.token_hex(6)}"
    c["jwtsecret"] = f"rcjwtsecret{secrets.token_hex(16)}"
    c["gateway"] = f"rcgateway{secrets.token_hex(12)}"
    for cls in ("notepath", "vaultid", "userid", "canisteruser"):  # identifiers logs may not carry
        c[cls] = f"rc{cls}{secrets.token_hex(6)}"
    double = UpstreamDouble(port=port, timeout_delay_s=float(limits.get("upstream_hold_s", 3))).start()
    c["upstream"] = double.payload_marker().lower()
    fx = CanisterFixture(
        root=source.root, canaries=c, upstream=double,
        jwt_secret=jwt_secret or c["jwtsecret"],
        gateway_secret=c["gateway"] if gateway_secret is None else gateway_secret,
        vault_id=c["vaultid"], other_vault_id=f"vault-other-{secrets.token_hex(4)}",
        user=c["userid"], canister_user=c["canisteruser"])
    if jwt_secret:
        c["jwtsecret"] = jwt_secret.lower()
    if gateway_secret:
        c["gateway"] = gateway_secret.lower()

    readable = set(source.notes) | set(source.stress.values())
    for dirpath, _dirs, files in os.walk(source.vault):
        for name in files:
            path = Path(dirpath) / name
            rel = path.relative_to(source.vault).as_posix()
            if path.is_symlink() or rel not in readable:
                continue
            text = path.read_text(encoding="utf-8")
            fx.texts[rel] = text
            fx.put(rel, text)
    fx.notes = [n for n in source.notes if n in fx.texts]
    fx.stress = dict(source.stress)
    headings = "notes/headings.md"
    fx.texts[headings] = (f"# Heading {c['heading']}\n\n{c['body']} text\n\n"
                          f"## Sub heading {c['heading']}\n\nmore {c['body']}\n")
    fx.put(headings, fx.texts[headings])
    fx.notes.append(headings)
    # Over the input cap, with headings no successful response ever showed: its error may not
    # name them (seed 001: no "heading paths beyond what was already authorized").
    c["capheading"] = f"rccapheading{secrets.token_hex(6)}"
    cap = int(limits.get("max_input_chars", 1_000_000))
    head = f"# Restricted {c['capheading']}\n\n## Inner {c['capheading']}\n\n"
    filler = f"{c['body']} filler text.\n\n"
    over = (head + filler * ((cap - len(head)) // len(filler) + 2))[:cap + 1]
    fx.stress["cap_over_headings"] = "stress/cap-over-headings.md"
    fx.texts[fx.stress["cap_over_headings"]] = over[:-1] + "x"  # the cap counts the right-trimmed body
    fx.put(fx.stress["cap_over_headings"], fx.texts[fx.stress["cap_over_headings"]])
    named = f"notes/{c['notepath']}/leaf.md"  # a valid request path a log may not carry
    fx.texts[named] = "# Leaf\n\n## Twig\n"
    fx.put(named, fx.texts[named])
    fx.notes.append(named)

    outside = f"# Outside {c['outside']}\n\n{c['outside']} belongs to someone else\n"
    fx.put(fx.other_vault_only, outside, vault_id=fx.other_vault_id)
    for rel in fx.notes[:3]:  # same paths, another vault's content
        fx.put(rel, outside, vault_id=fx.other_vault_id)
    # Readable only with X-User-Id = the actor: a session with a canister user must not see it.
    fx.put(fx.other_user_only, outside, user_id=fx.user)

    fx.default_token = fx.token("viewer")
    c["bearer"] = fx.default_token.rsplit(".", 1)[1].lower()
    return fx

