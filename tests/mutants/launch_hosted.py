"""Start the hosted reference with one deliberate defect:
`python launch_hosted.py MUTANT [server args]` (secrets from RC_JWT_SECRET / RC_GATEWAY_SECRET).

Each mutant patches one module-level function or table of reference.section_source_hosted
from the outside, then runs the server's main as usual.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import urllib.parse

import jwt
import mcp_types as types
from mcp.server.transport_security import TransportSecuritySettings

try:
    from tests.mutants._dispatch import mutant, run, variant
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run, variant  # type: ignore[no-redef]

from reference.section_source.tools import outline_of
from reference.section_source_hosted import acl, auth, paths, server, tools, upstream


def _patch_headers(change):
    original = upstream.note_headers

    def headers(session, settings):
        out = original(session, settings)
        change(out)
        return out
    upstream.note_headers = headers


def _wrap_tool(name, wrapper):
    description, original = tools.TOOLS[name]
    tools.TOOLS[name] = (description, wrapper(original))


@mutant("SSH-UP-004", profile="section-source-hosted")
def hosted_gateway_header_missing():
    """Never sends X-Gateway-Auth, even when configured."""
    _patch_headers(lambda headers: headers.pop("X-Gateway-Auth", None))


@mutant("SSH-UP-002", profile="section-source-hosted")
def hosted_wrong_vault_header():
    """Sends a constant X-Vault-Id instead of the session's vault."""
    _patch_headers(lambda headers: headers.update({"X-Vault-Id": "default"}))


@mutant("SSH-UP-003", "SSH-ERR-004", profile="section-source-hosted")
def hosted_actor_user_id():
    """Sends the actor user id as X-User-Id despite a canister user id."""
    upstream.effective_user_id = lambda session: session.user_id


@mutant("SSH-IN-003", profile="section-source-hosted")
def hosted_fetch_before_validation():
    """Reads the raw request path upstream first, then validates as usual."""
    def wrapper(original):
        async def eager(call, arguments):
            raw = (arguments or {}).get("path")
            if isinstance(raw, str):
                try:
                    await upstream.get(upstream.note_url(call.settings.canister_url, raw),
                                       upstream.note_headers(call.session, call.settings))
                except upstream.ToolFailure:
                    pass
            return await original(call, arguments)
        return eager
    _wrap_tool("get_section_source", wrapper)


@mutant("SSH-ERR-003", profile="section-source-hosted")
def hosted_raw_upstream_body():
    """Puts the upstream response body into the error."""
    def check(reply):
        if reply.status != 200:
            raise upstream.ToolFailure("upstream_status",
                                       f"Upstream {reply.status}: {reply.body.decode('utf-8', 'replace')}",
                                       upstream.status_class(reply.status))
    upstream.check_status = check


@mutant("SSH-ACL-002", profile="section-source-hosted")
def hosted_unknown_role_gets_editor():
    """Editor gets a second (body-free) tool, and unknown roles resolve to editor."""
    async def get_note_outline(call, arguments):
        path = tools.request_path(arguments)
        return outline_of(tools.derive(path, await upstream.read_note(call.session, call.settings, path)))

    tools.TOOLS["get_note_outline"] = ("Return the flat heading outline of one note. Body-free.",
                                       get_note_outline)
    acl.ROLE_TOOLS["1L"]["editor"] = acl.ROLE_TOOLS["1L"]["editor"] | {"get_note_outline"}
    acl.FALLBACK_ROLE = "editor"


@mutant("SSH-LOG-001", profile="section-source-hosted")
def hosted_token_logged():
    """Writes the bearer token into each log line."""
    original = tools.run

    async def run(name, call, arguments):
        outcome = await original(name, call, arguments)
        return dataclasses.replace(outcome, fields={**outcome.fields, "token": call.session.token})
    tools.run = run


@mutant("SSH-LOG-002", profile="section-source-hosted")
def hosted_path_logged():
    """An 'audit' log line with the note path and the session's vault and user: not on the allowed list."""
    original = tools.run

    async def run(name, call, arguments):
        outcome = await original(name, call, arguments)
        path = arguments.get("path") if isinstance(arguments, dict) and isinstance(arguments.get("path"), str) else ""
        fields = {**outcome.fields, "vault": call.session.vault_id, "user": call.session.user_id}
        if outcome.outcome == "ok":
            fields["path"] = path
        return dataclasses.replace(outcome, fields=fields)
    tools.run = run


@mutant("SSH-STR-003", "SSH-DI-002", profile="section-source-hosted")
def hosted_cross_session_state():
    """Outputs memoised by normalised path only: across vaults, users and upstream edits."""
    cache = {}

    def wrapper(original):
        async def cached(call, arguments):
            try:
                key = paths.normalize_path((arguments or {}).get("path"))
            except paths.InvalidPath:
                return await original(call, arguments)
            if key not in cache:
                cache[key] = await original(call, arguments)
            return cache[key]
        return cached
    _wrap_tool("get_section_source", wrapper)


@mutant("SSH-UP-001", "SSH-UP-006", profile="section-source-hosted")
def hosted_list_scan():
    """Lists the vault (`GET /api/v1/notes`) before each read."""
    original = upstream.read_note

    async def read(session, settings, path):
        await upstream.get(settings.canister_url + upstream.NOTES_PATH, upstream.note_headers(session, settings))
        return await original(session, settings, path)
    upstream.read_note = read


@mutant("MCP-HTTP-004", profile="section-source-hosted")
def hosted_foreign_origin():
    """Serves requests with a foreign Origin."""
    server.transport_security = lambda host: TransportSecuritySettings(enable_dns_rebinding_protection=False)


@mutant("SSH-ACL-003", "SSH-ACL-004", profile="section-source-hosted", phases=("1K",))
def hosted_tool_in_1k():
    """Registers get_section_source for the four roles in phase 1K."""
    acl.ROLE_TOOLS["1K"] = {role: frozenset({"get_section_source"}) for role in acl.ROLES}


@mutant("SSH-OUT-003", profile="section-source-hosted")
def hosted_canister_path_used():
    """Returns the canister payload's path as the output path."""
    original = tools.derive

    def derive(path, payload):
        foreign = payload.get("path")
        return original(foreign if isinstance(foreign, str) else path, payload)
    tools.derive = derive


@mutant("SSH-AUTH-001", profile="section-source-hosted")
def hosted_anonymous_session():
    """A request without a bearer token gets a viewer session in a default vault."""
    original_token, original_session = auth.bearer_token, auth.session_from_token
    anonymous = "rc-anonymous"

    def bearer_token(request):
        return original_token(request) or anonymous

    def session_from_token(token, secret):
        if token == anonymous:
            return auth.SessionContext(user_id="anonymous", vault_id="default", canister_user_id=None,
                                       role="viewer", token=token, expires_at=2**31)
        return original_session(token, secret)
    auth.bearer_token, auth.session_from_token = bearer_token, session_from_token


@mutant("SSH-AUTH-002", profile="section-source-hosted")
def hosted_signature_unchecked():
    """Accepts tokens without checking their signature."""
    auth.decode_claims = lambda token, secret: jwt.decode(
        token, options={"verify_signature": False, "verify_exp": True, "require": ["exp"]})


@mutant("SSH-AUTH-002", profile="section-source-hosted")
def hosted_expired_accepted():
    """Accepts expired tokens."""
    auth.decode_claims = lambda token, secret: jwt.decode(
        token, secret, algorithms=auth.ALGORITHMS, options={"verify_exp": False})


def _add_blocked_tool(name: str, field: str, size: int, roles) -> None:
    """Adds tool `name`, returning `size` characters of the note's content as `field`, for `roles`."""
    async def blocked_tool(call, arguments):
        path = tools.request_path(arguments)
        payload = await upstream.read_note(call.session, call.settings, path)
        return {"path": path, field: payload["content"][:size]}

    tools.TOOLS[name] = (f"Return a section's {field}.", blocked_tool)
    for phase in acl.ROLE_TOOLS:
        for role in roles:
            acl.ROLE_TOOLS[phase][role] = acl.ROLE_TOOLS[phase][role] | {name}


@mutant("SSH-BLK-001", profile="section-source-hosted")
def hosted_blocked_tool():
    """Adds a get_section_body tool (a blocked SectionSource surface) for every role."""
    _add_blocked_tool("get_section_body", "body", 200, acl.ROLES)


@mutant("SSH-BLK-001", profile="section-source-hosted")
def hosted_blocked_tool_for_admin():
    """Adds a get_section_snippet tool (a blocked SectionSource surface) for admin only: only a
    session with an admin token can see it."""
    _add_blocked_tool("get_section_snippet", "snippet", 80, ["admin"])


@mutant("SSH-ACL-005", profile="section-source-hosted")
def hosted_prompt_for_editor():
    """Declares prompts and lists a section-summary prompt to editor sessions only."""
    original = server.Server

    async def list_prompts(ctx, params):
        session = auth.session_of(ctx)
        offered = [types.Prompt(name="summarize_section", description="Summarize one section of a note.")]
        return types.ListPromptsResult(prompts=offered if session is not None and session.role == "editor" else [])

    server.Server = lambda *args, **kwargs: original(*args, on_list_prompts=list_prompts, **kwargs)


@mutant("SSH-SEC-003", profile="section-source-hosted")
def hosted_secret_in_error():
    """Upstream failures name the gateway secret they were sent with ("for debugging")."""
    original = upstream.read_note

    async def read(session, settings, path):
        try:
            return await original(session, settings, path)
        except upstream.ToolFailure as failure:
            failure.message = f"{failure.message} (gateway auth {settings.gateway_secret})"
            raise
    upstream.read_note = read


@mutant("SSH-UP-007", profile="section-source-hosted", fresh=True)
def hosted_provider_connection():
    """Keeps a connection to a 'provider' open (an in-process listener stands in for it)."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    kept = []
    threading.Thread(target=lambda: kept.append(listener.accept()), daemon=True).start()
    original = tools.run

    async def run(name, call, arguments):
        if len(kept) < 2:
            kept.append(socket.create_connection(listener.getsockname()))
        return await original(name, call, arguments)
    tools.run = run


@mutant("SSH-ERR-005", profile="section-source-hosted")
def hosted_cap_error_names_heading():
    """The error for a note over the input cap names the note's first heading."""
    original = tools.derive

    def derive(path, payload):
        try:
            return original(path, payload)
        except tools.builder.InputTooLarge:
            first = next((line.lstrip("#").strip() for line in payload["content"].splitlines()
                          if line.startswith("#")), "")
            raise upstream.ToolFailure("too_large", f"{upstream.MSG_TOO_LARGE} (from heading {first!r})",
                                       "2xx") from None
    tools.derive = derive


@mutant("SSH-DI-003", profile="section-source-hosted")
def hosted_cache_file():
    """Writes each output to a cache file under XDG_CACHE_HOME (a persisted derived record)."""
    import json
    import os
    from pathlib import Path

    original = tools.derive

    def derive(path, payload):
        out = original(path, payload)
        cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rc-hosted"
        cache.mkdir(parents=True, exist_ok=True)
        (cache / f"{abs(hash(path))}.json").write_text(json.dumps(out))
        return out
    tools.derive = derive


def _log_to_file():
    """The bounded operational log lines also go to a file under XDG_STATE_HOME, created on
    the first call."""
    import logging
    import os
    from pathlib import Path
    original = server.configure_logging

    def configure_logging():
        original()  # sets the log's handlers; the file's is added after
        state = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state")) / "rc-hosted"
        state.mkdir(parents=True, exist_ok=True)
        server.log.addHandler(logging.FileHandler(state / "server.log", delay=True))
    server.configure_logging = configure_logging


def _refuse_in_jsonrpc():
    """A request without a valid token gets HTTP 200 with a JSON-RPC error (-32001) for its id,
    instead of the reference's HTTP 401."""
    import json
    original = auth.BearerGate.__call__

    async def call(self, scope, receive, send):
        if scope["type"] != "http":
            return await original(self, scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body, replayed = b"".join(chunks), []

        async def replay():
            if not replayed:
                replayed.append(True)
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()
        refused = []

        async def answer(message):
            if message["type"] == "http.response.start" and message["status"] == 401:
                refused.append(True)
                return
            if refused and message["type"] == "http.response.body":
                try:
                    request_id = json.loads(body).get("id")
                except (ValueError, AttributeError):
                    request_id = None
                data = json.dumps({"jsonrpc": "2.0", "id": request_id,
                                   "error": {"code": -32001, "message": "Unauthenticated"}}).encode("utf-8")
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(data)).encode("ascii"))]})
                await send({"type": "http.response.body", "body": data})
                return
            await send(message)
        await original(self, scope, replay, answer)
    auth.BearerGate.__call__ = call


@mutant("SSH-AUTH-003", profile="section-source-hosted")
def hosted_refusal_in_jsonrpc():
    """Refuses a missing or bad token with HTTP 200 and a JSON-RPC error, not 401 or 403: the
    advisory only (seed 001 asks for an authenticated session, not a status)."""
    _refuse_in_jsonrpc()


@mutant("SSH-DI-004", profile="section-source-hosted")
def hosted_log_file():
    """Writes its bounded operational log to a file under XDG_STATE_HOME (no note data): the
    advisory only, as seed 001 allows operational logs and forbids records."""
    _log_to_file()


# --- a correct variant: every choice the profile leaves open, taken the other way -----------

@variant(profile="section-source-hosted", phases=("1L", "1K"))
def hosted_variant_open_choices():
    """Not a mutant: a conforming server the suite must pass (tests/test_variants.py).

    - lists an existing adjacent read tool (get_note_outline) to every role in both phases,
      through the same one-note read and headers;
    - a denied or unknown tool is an isError result, not a JSON-RPC error;
    - upstream failures have other wording;
    - paths: Python's strip, `.` segments dropped, `C:name`, NUL and control characters refused;
    - `!*'()` percent-encoded too;
    - stateless Streamable HTTP (no Mcp-Session-Id);
    - a missing or bad token is refused with HTTP 200 and a JSON-RPC error (SSH-AUTH-003 is an
      advisory);
    - the operational log also goes to a file under XDG_STATE_HOME (SSH-DI-004 is an advisory).
    """
    _refuse_in_jsonrpc()
    _log_to_file()
    async def get_note_outline(call, arguments):
        path = tools.request_path(arguments)
        return outline_of(tools.derive(path, await upstream.read_note(call.session, call.settings, path)))

    tools.TOOLS["get_note_outline"] = ("Return the flat heading outline of one note. Body-free.", get_note_outline)
    for phase in acl.ROLE_TOOLS:
        for role in acl.ROLES:
            acl.ROLE_TOOLS[phase][role] = acl.ROLE_TOOLS[phase][role] | {"get_note_outline"}

    def normalize(raw):
        if not isinstance(raw, str):
            raise paths.InvalidPath("bad")
        text = raw.strip().replace("\\", "/")
        if re.search(r"[\x00-\x1f\x7f]", text) or not text or text.startswith("/") or re.match(r"^[A-Za-z]:", text):
            raise paths.InvalidPath("bad")
        segments = [s for s in text.split("/") if s and s != "."]
        if not segments or ".." in segments:
            raise paths.InvalidPath("bad")
        return "/".join(segments)
    paths.normalize_path = normalize
    tools.normalize_path = normalize

    upstream.encode_component = lambda path: urllib.parse.quote(path, safe="-_.~")

    def check(reply):
        if reply.status != 200:
            raise upstream.ToolFailure("upstream_status", "The note could not be read", upstream.status_class(reply.status))
    upstream.check_status = check

    def refuse():
        body = '{"error": "Unknown tool", "code": "UPSTREAM_ERROR"}'
        return types.CallToolResult(content=[types.TextContent(type="text", text=body)], is_error=True)
    server.refuse_tool = refuse
    server.STATELESS_HTTP = True





@variant(profile="section-source-hosted", phases=("1L",))
def hosted_variant_literal_dot():
    """Not a mutant: seed 001's normalization keeps a path of only `.`, so this server reads the
    literal note `.` (percent-encoded, so no URL client turns it into the list route) and
    answers the upstream 404 like any missing note."""
    original_normalize, original_encode = paths.normalize_path, upstream.encode_component

    def normalize(raw):
        if isinstance(raw, str):
            text = raw.strip(paths.JS_WHITESPACE).replace("\\", "/")
            segments = [s for s in text.split("/") if s]
            if segments and all(s == "." for s in segments) and not text.startswith("/"):
                return "/".join(segments)
        return original_normalize(raw)

    def encode(path):
        return "%2E" if path == "." else original_encode(path)
    paths.normalize_path = normalize
    tools.normalize_path = normalize
    upstream.encode_component = encode

if __name__ == "__main__":
    sys.exit(run("launch_hosted.py", server.main))
