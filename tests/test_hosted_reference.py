"""The hosted reference server's own behaviour: settings, bearer auth, the role ACL, the one
canister read, sanitised errors and logs. Mostly in-process (the SDK's Starlette app behind
the bearer gate, driven through httpx's ASGI transport) against the upstream double."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import jwt
import pytest

from contract_tests.synthetic import tokens
from contract_tests.synthetic.upstream import UpstreamDouble, note_payload, note_url_path
from contract_tests.transport.http import free_port, messages_of
from reference.section_source.markdown_parser import MAX_DEPTH
from reference.section_source_hosted import acl, config, server, upstream
from reference.section_source_hosted.config import load_settings, parse_args

ROOT = Path(__file__).resolve().parent.parent
LAUNCH_HOSTED = ROOT / "tests" / "mutants" / "launch_hosted.py"
HANDSHAKE = "2025-11-25"
VAULT, OTHER_VAULT = "vault-main", "vault-other"
USER, CANISTER_USER = "user-actor", "user-canister"
NOTE = "inbox/example.md"
HEADING = "Quarterly Heading Zeta"
TEXT = f"# {HEADING}\n\nprivate body text\n\n## Second\n"
LOG_LINE = re.compile(r"tool=[a-z_]+ outcome=[a-z_]+ upstream=(?:[1-5]xx|none|unavailable) elapsed_ms=\d+"
                      r"(?: sections=\d+ truncated=(?:true|false))?")


@dataclass
class Env:
    double: UpstreamDouble
    secret: str
    gateway: str

    def settings(self, phase: str = "1L", gateway: bool = True) -> config.Settings:
        return config.Settings(canister_url=self.double.url, phase=phase, jwt_secret=self.secret,
                               gateway_secret=self.gateway if gateway else None)

    def token(self, role: str | None = "viewer", *, kind: str = "valid", user: str = USER,
              vault_id: str = VAULT, canister_user: str | None = None) -> str:
        if role is None:
            claims = tokens.claims(sub=user, vault_id=vault_id, role="", canister_user_id=canister_user)
            del claims["role"]
            return jwt.encode(claims, self.secret, algorithm=tokens.ALGORITHM)
        mint = {"valid": tokens.mint, "wrong_signature": tokens.wrong_signature,
                "expired": tokens.expired, "unsigned": tokens.unsigned}[kind]
        return mint(self.secret, sub=user, vault_id=vault_id, role=role, canister_user_id=canister_user)


@pytest.fixture
def env():
    with UpstreamDouble(timeout_delay_s=3.0) as double:
        double.put_note(VAULT, NOTE, note_payload(NOTE, TEXT))
        yield Env(double, tokens.new_secret(), "gw-" + tokens.new_secret())


@pytest.fixture
def log_lines():
    """The rc.hosted log records of the test, as formatted lines."""
    records: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: records.append(record.getMessage())
    logger = logging.getLogger("rc.hosted")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield records
    logger.removeHandler(handler)
    logger.setLevel(level)


# -- an MCP client speaking raw JSON-RPC over any httpx.AsyncClient ----------------------------

class Client:
    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url = http, url

    async def post(self, token: str | None, message: dict, *, session_id: str | None = None,
                   headers: dict | None = None) -> httpx.Response:
        sent = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                "MCP-Protocol-Version": HANDSHAKE, **(headers or {})}
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if session_id:
            sent["Mcp-Session-Id"] = session_id
        return await self.http.post(self.url, content=json.dumps(message), headers=sent)

    async def open(self, token: str) -> Session:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        response = await self.post(token, init)
        assert response.status_code == 200, response.text
        session = Session(self, token, response.headers["mcp-session-id"], _message(response)["result"])
        await self.post(token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id=session.id)
        return session


def _message(response: httpx.Response) -> dict:
    (text,) = messages_of(response)
    return json.loads(text)


@dataclass
class Session:
    client: Client
    token: str
    id: str
    init: dict

    async def request(self, method: str, params: dict | None = None, token: str | None = None) -> dict:
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        response = await self.client.post(token or self.token, message, session_id=self.id)
        assert response.status_code == 200, response.text
        return _message(response)

    async def tool_names(self) -> list[str]:
        return [tool["name"] for tool in (await self.request("tools/list"))["result"]["tools"]]

    async def call(self, arguments: dict | None, name: str = "get_section_source") -> dict:
        params = {"name": name} if arguments is None else {"name": name, "arguments": arguments}
        return await self.request("tools/call", params)


def output(message: dict) -> dict:
    """The SectionSource output of a successful call."""
    result = message["result"]
    assert result.get("isError") is not True, result
    return json.loads(result["content"][0]["text"])


def error_of(message: dict) -> str:
    """The fixed message of an error result, after checking the envelope."""
    result = message["result"]
    assert result["isError"] is True and len(result["content"]) == 1
    body = json.loads(result["content"][0]["text"])
    assert set(body) == {"error", "code"} and body["code"] == "UPSTREAM_ERROR"
    return body["error"]


@asynccontextmanager
async def in_process(settings: config.Settings):
    app = server.build_app(settings, "127.0.0.1")
    inner = app.app
    async with inner.router.lifespan_context(inner):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
            yield Client(http, "/mcp")


def serve(settings: config.Settings, scenario) -> None:
    """Run `scenario(client)` against a fresh in-process server."""
    async def main():
        async with in_process(settings) as client:
            await scenario(client)
    anyio.run(main)


def one_session(env: Env, scenario, *, token: str | None = None, **settings) -> None:
    """Run `scenario(session)` in one viewer session (or the given token's)."""
    async def with_session(client: Client):
        await scenario(await client.open(token or env.token()))
    serve(env.settings(**settings), with_session)


# -- settings -----------------------------------------------------------------------------

def test_flags_win_over_the_environment_which_wins_over_the_config_file(tmp_path, monkeypatch):
    toml = tmp_path / "hosted.toml"
    toml.write_text('canister_url = "http://file.invalid:1"\nphase = "1K"\n')
    monkeypatch.setenv("RC_JWT_SECRET", "s3cret-value")
    monkeypatch.delenv("RC_GATEWAY_SECRET", raising=False)
    monkeypatch.delenv("RC_CANISTER_URL", raising=False)
    monkeypatch.delenv("RC_PHASE", raising=False)
    settings = load_settings(parse_args(["--config", str(toml)]))
    assert (settings.canister_url, settings.phase, settings.gateway_secret) == ("http://file.invalid:1", "1K", None)
    monkeypatch.setenv("RC_CANISTER_URL", "http://env.invalid:2/")
    monkeypatch.setenv("RC_PHASE", "1L")
    monkeypatch.setenv("RC_GATEWAY_SECRET", "gw-value-9")
    settings = load_settings(parse_args(["--config", str(toml)]))
    assert (settings.canister_url, settings.phase) == ("http://env.invalid:2", "1L")
    assert settings.gateway_secret == "gw-value-9"
    settings = load_settings(parse_args(["--config", str(toml), "--canister-url", "https://flag.invalid",
                                         "--phase", "1K"]))
    assert (settings.canister_url, settings.phase) == ("https://flag.invalid", "1K")
    assert "s3cret" not in repr(settings) and "gw-value" not in repr(settings)
    monkeypatch.delenv("RC_PHASE")
    monkeypatch.delenv("RC_CANISTER_URL")
    toml.write_text('canister_url = "http://file.invalid:1"\n')
    assert load_settings(parse_args(["--config", str(toml)])).phase == "1L"


@pytest.mark.parametrize("args,environ,file_text,expected", [
    ([], {"RC_JWT_SECRET": "SECRET-A"}, None, "no canister URL"),
    (["--canister-url", "http://x.invalid"], {}, None, "RC_JWT_SECRET is not set"),
    (["--canister-url", "http://x.invalid"], {"RC_JWT_SECRET": ""}, None, "RC_JWT_SECRET is not set"),
    (["--canister-url", "ftp://x.invalid"], {"RC_JWT_SECRET": "SECRET-A"}, None, "http(s) URL"),
    (["--canister-url", "http://u:SECRET-B@x.invalid"], {"RC_JWT_SECRET": "SECRET-A"}, None, "credentials"),
    (["--canister-url", "http://x.invalid", "--phase", "2A"], {"RC_JWT_SECRET": "SECRET-A"}, None, "phase"),
    ([], {"RC_JWT_SECRET": "SECRET-A"}, 'canister_url = "http://x.invalid"\njwt_secret = "SECRET-C"\n',
     "must not hold secrets"),
    ([], {"RC_JWT_SECRET": "SECRET-A"}, "canister_url = [", "not valid TOML"),
])
def test_bad_settings_are_one_line_without_secrets(tmp_path, monkeypatch, capsys, args, environ, file_text,
                                                   expected):
    for name in ("RC_JWT_SECRET", "RC_GATEWAY_SECRET", "RC_CANISTER_URL", "RC_PHASE", "RC_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    if file_text is not None:
        (tmp_path / "c.toml").write_text(file_text)
        args = [*args, "--config", str(tmp_path / "c.toml")]
    monkeypatch.setattr(server, "configure_logging", lambda: None)
    assert server.main(args) == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1
    assert "SECRET-" not in err and "Traceback" not in err


def test_the_server_process_exits_2_before_listening_without_a_secret(tmp_path):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("RC_")}
    environ["RC_GATEWAY_SECRET"] = "gateway-SECRET-D"
    proc = subprocess.run([sys.executable, "-m", "reference.section_source_hosted.server", "--port",
                           str(free_port()), "--canister-url", "http://127.0.0.1:9"],
                          capture_output=True, text=True, timeout=30, cwd=tmp_path, env=environ)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == ("rc-section-source-hosted: RC_JWT_SECRET is not set "
                                   "(the JWT secret comes from the environment only)")


# -- bearer auth --------------------------------------------------------------------------

def _bad_tokens(env: Env) -> dict[str, str | None]:
    def signed(**changes):
        claims = tokens.claims(sub=USER, vault_id=VAULT, role="viewer")
        claims.update(changes)
        return jwt.encode({k: v for k, v in claims.items() if v is not None}, env.secret, algorithm="HS256")
    return {
        "missing": None, "malformed": tokens.malformed(), "wrong_signature": env.token(kind="wrong_signature"),
        "expired": env.token(kind="expired"), "unsigned": env.token(kind="unsigned"),
        "hs512": jwt.encode(tokens.claims(sub=USER, vault_id=VAULT, role="viewer"), env.secret, algorithm="HS512"),
        "no_exp": signed(exp=None), "no_sub": signed(sub=None), "empty_sub": signed(sub=""),
        "no_vault": signed(vault_id=None), "vault_not_string": signed(vault_id=7),
        "role_not_string": signed(role=["admin"]), "garbage": "not-a-jwt",
    }


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")  # the HS512 token
def test_every_bad_token_gets_401_and_nothing_else(env):
    bad = _bad_tokens(env)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}

    async def scenario(client: Client):
        session = await client.open(env.token())
        for kind, token in bad.items():
            for response in (
                await client.post(token, init),
                await client.post(token, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session_id=session.id),
                await client.http.get("/mcp", headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session.id,
                                                       "Accept": "text/event-stream"}),
                await client.http.delete("/mcp", headers={"Authorization": f"Bearer {token}",
                                                          "Mcp-Session-Id": session.id}),
            ):
                assert response.status_code == 401, (kind, response.status_code)
                assert response.headers["www-authenticate"] == "Bearer"
                assert response.json() == {"error": "Unauthorized"}
        basic = await client.http.post("/mcp", content=json.dumps(init),
                                       headers={"Authorization": "Basic dXNlcjpwYXNz"})
        assert basic.status_code == 401
        assert await session.tool_names() == ["get_section_source"]  # the session itself still works
    serve(env.settings(), scenario)
    assert env.double.requests == []


def test_a_foreign_origin_is_refused_before_the_token_is_looked_at(env):
    async def scenario(client: Client):
        for token in (env.token(), None):
            response = await client.post(token, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                         headers={"Origin": "http://evil.example"})
            assert response.status_code == 403
    serve(env.settings(), scenario)


def test_a_session_opened_by_one_principal_is_not_found_for_another(env):
    async def scenario(session: Session):
        stranger = env.token(user="someone-else", vault_id=OTHER_VAULT)
        response = await session.client.post(stranger, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                             session_id=session.id)
        assert response.status_code == 404
    one_session(env, scenario)


# -- the role ACL -------------------------------------------------------------------------

@pytest.mark.parametrize("phase", ["1K", "1L"])
def test_tools_list_follows_role_and_phase_and_unknown_roles_are_viewers(env, phase):
    roles = [*acl.ROLES, "superuser", "", None]

    async def scenario(client: Client):
        for role in roles:
            session = await client.open(env.token(role))
            assert "tools" in session.init["capabilities"]
            assert not {"resources", "prompts"} & set(session.init["capabilities"])
            assert session.init["serverInfo"] == {"name": "rc-section-source-hosted", "version": "0.1.0"}
            names = await session.tool_names()
            assert names == ([] if phase == "1K" else ["get_section_source"]), role
            refused = await session.call({"path": NOTE}) if phase == "1K" else None
            unknown = await session.call({"path": NOTE}, name="get_note_body")
            assert unknown["error"] == {"code": -32602, "message": "Unknown tool"}
            if refused is not None:
                assert refused["error"] == unknown["error"] and "result" not in refused
    serve(env.settings(phase=phase), scenario)
    assert env.double.requests == []


def test_the_acl_table_falls_back_to_viewer_and_never_to_more():
    assert acl.resolve_role("root") == acl.resolve_role(None) == acl.resolve_role(3) == "viewer"
    assert all(acl.is_tool_allowed("get_section_source", role, "1L") for role in acl.ROLES)
    assert not any(acl.is_tool_allowed("get_section_source", role, "1K") for role in acl.ROLES)
    assert not acl.is_tool_allowed("get_section_source", "admin", "2A")
    assert acl.ROLE_TOOLS["1L"]["viewer"] == frozenset({"get_section_source"})


# -- the one canister read ------------------------------------------------------------------

@pytest.mark.parametrize("raw,normalized", [
    (NOTE, NOTE),
    ("  inbox\\sub//deep\\\\x.md\u3000", "inbox/sub/deep/x.md"),
    ("notes/my notes/café ☃ #1?.md", "notes/my notes/café ☃ #1?.md"),
    ("odd/a+b&c=d%20(e)!*~'.md", "odd/a+b&c=d%20(e)!*~'.md"),
    ("./dot/./x.md", "./dot/./x.md"),
])
def test_the_read_is_one_get_of_the_encoded_normalized_path(env, raw, normalized):
    env.double.put_note(VAULT, normalized, note_payload("ignored/elsewhere.md", TEXT))

    async def scenario(session: Session):
        assert output(await session.call({"path": raw}))["path"] == normalized
    one_session(env, scenario)
    (request,) = env.double.requests
    assert (request.method, request.path, request.query, request.body) == ("GET", note_url_path(normalized), "", b"")
    assert request.note_path == normalized


@pytest.mark.parametrize("canister_user,gateway", [(None, True), (CANISTER_USER, True), (CANISTER_USER, False)])
def test_the_read_carries_exactly_the_session_headers(env, canister_user, gateway):
    token = env.token("editor", canister_user=canister_user)

    async def scenario(session: Session):
        output(await session.call({"path": NOTE}))
    one_session(env, scenario, token=token, gateway=gateway)
    (request,) = env.double.requests
    expected = {"authorization": f"Bearer {token}", "x-vault-id": VAULT,
                "x-user-id": canister_user or USER, "accept": "application/json",
                "content-type": "application/json"}
    if gateway:
        expected["x-gateway-auth"] = env.gateway
    assert {k: v for k, v in request.headers.items() if k != "host"} == expected


@pytest.mark.parametrize("arguments,message", [
    (None, "Invalid path"), ({}, "Invalid path"), ({"path": 3}, "Invalid path"), ({"path": None}, "Invalid path"),
    ({"path": ""}, "Invalid path"), ({"path": " \t"}, "Invalid path"), ({"path": "/etc/passwd"}, "Invalid path"),
    ({"path": "\\\\server\\share\\x.md"}, "Invalid path"), ({"path": "C:/Users/name/private.md"}, "Invalid path"),
    ({"path": "c:x.md"}, "Invalid path"), ({"path": "a/../b.md"}, "Invalid path"),
    ({"path": "..\\x.md"}, "Invalid path"),
    ({"path": "inbox/.."}, "Invalid path"), ({"path": "//"}, "Invalid path"), ({"path": "."}, "Invalid path"),
    ({"path": " ./ "}, "Invalid path"), ({"path": "././/."}, "Invalid path"),
    ({"path": NOTE, "vault_id": OTHER_VAULT}, "Invalid input"), ({"path": NOTE, "limit": 1}, "Invalid input"),
])
def test_bad_arguments_are_refused_before_any_upstream_request(env, log_lines, arguments, message):
    async def scenario(session: Session):
        answer = await session.call(arguments)
        assert error_of(answer) == message
        raw = (arguments or {}).get("path")
        if isinstance(raw, str) and len(raw.strip()) > 2:
            assert raw.strip() not in json.dumps(answer)
    one_session(env, scenario)
    assert env.double.requests == []
    assert log_lines[-1].startswith("tool=get_section_source outcome=invalid_") and "upstream=none" in log_lines[-1]


@pytest.mark.parametrize("mode,message", [
    ("404", "Upstream 404"), ("401", "Upstream 401"), ("403", "Upstream 403"), ("500", "Upstream 500"),
    ("raw-body-echo", "Upstream 500"), ("malformed-json", "Upstream invalid response"),
    ("timeout", "Upstream unavailable"),
])
def test_upstream_failures_are_sanitized(env, log_lines, mode, message):
    env.double.respond_with(mode, delay_s=0.2)
    token = env.token()

    async def scenario(session: Session):
        answer = await session.call({"path": NOTE})
        assert error_of(answer) == message
        text = json.dumps(answer)
        for private in (env.double.payload_marker(), NOTE, token, env.gateway, HEADING):
            assert private not in text
    one_session(env, scenario, token=token)
    assert len(env.double.note_reads()) == 1
    (line,) = log_lines
    assert LOG_LINE.fullmatch(line), line


def test_a_slow_canister_times_out_as_unavailable(env, monkeypatch):
    monkeypatch.setattr(upstream, "UPSTREAM_TIMEOUT_S", 0.3)
    env.double.respond_with("timeout", delay_s=3.0)

    async def scenario(session: Session):
        started = time.monotonic()
        assert error_of(await session.call({"path": NOTE})) == "Upstream unavailable"
        assert time.monotonic() - started < 2.0
    one_session(env, scenario)


@pytest.mark.parametrize("payload,message", [
    ({"path": NOTE}, "Upstream invalid response"),
    ({"path": NOTE, "content": {"text": "# x"}}, "Upstream invalid response"),
    ({"path": NOTE, "content": "# x\n" + "y" * 1_000_001}, "Note is too large to outline"),
    ({"path": NOTE, "content": ">" * (MAX_DEPTH + 1) + " deep"}, "Note is too deeply nested to outline"),
])
def test_unusable_notes_give_fixed_errors(env, payload, message):
    env.double.put_note(VAULT, NOTE, payload)

    async def scenario(session: Session):
        answer = await session.call({"path": NOTE})
        assert error_of(answer) == message and "yyyy" not in json.dumps(answer)
    one_session(env, scenario)


@pytest.mark.parametrize("mode", ["foreign-path", "absolute-path"])
def test_the_output_path_is_the_request_path_whatever_the_canister_says(env, mode):
    env.double.respond_with(mode)

    async def scenario(session: Session):
        out = output(await session.call({"path": "inbox//example.md"}))
        assert out["path"] == NOTE and out["sections"][0]["heading_text"] == HEADING
        assert env.double.payload_marker() not in json.dumps(out)
    one_session(env, scenario)


def test_concurrent_sessions_each_see_only_their_own_vault_and_fresh_content(env):
    vaults = [f"vault-{i:02d}" for i in range(24)]
    for vault in vaults:
        env.double.put_note(vault, NOTE, note_payload(NOTE, f"# Heading of {vault}\n"))
    seen: dict[str, str] = {}

    async def scenario(client: Client):
        async def one(vault: str):
            session = await client.open(env.token(user=f"user-{vault}", vault_id=vault))
            seen[vault] = output(await session.call({"path": NOTE}))["sections"][0]["heading_text"]
        async with anyio.create_task_group() as group:
            for vault in vaults:
                group.start_soon(one, vault)
        session = await client.open(env.token())
        assert output(await session.call({"path": NOTE}))["sections"][0]["heading_text"] == HEADING
        env.double.put_note(VAULT, NOTE, note_payload(NOTE, "# Edited Heading\n"))
        assert output(await session.call({"path": NOTE}))["sections"][0]["heading_text"] == "Edited Heading"
    serve(env.settings(), scenario)
    assert seen == {vault: f"Heading of {vault}" for vault in vaults}


def test_log_lines_carry_only_the_allowed_fields(env, log_lines):
    token = env.token("admin", canister_user=CANISTER_USER)

    async def scenario(session: Session):
        output(await session.call({"path": NOTE}))
        error_of(await session.call({"path": "/Users/private/x.md"}))
        await session.call({"path": NOTE}, name="nope")
    one_session(env, scenario, token=token)
    assert log_lines[0].startswith("tool=get_section_source outcome=ok upstream=2xx ")
    assert log_lines[0].endswith(" sections=2 truncated=false")
    assert log_lines[2] == "tool=unknown outcome=unknown_tool upstream=none elapsed_ms=0"
    text = "\n".join(log_lines)
    assert all(LOG_LINE.fullmatch(line) for line in log_lines), text
    for private in (token, env.secret, env.gateway, HEADING, "Second", NOTE, "Users", VAULT, USER, CANISTER_USER):
        assert private not in text


# -- the real process: both protocol eras through the official SDK, and its stderr ---------

@contextmanager
def process(env: Env, argv: list[str], *, phase: str = "1L"):
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith("RC_")}
    environ.update(RC_JWT_SECRET=env.secret, RC_GATEWAY_SECRET=env.gateway, RC_PHASE=phase)
    proc = subprocess.Popen([sys.executable, *argv, "--port", str(port), "--canister-url", env.double.url],
                            env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=10)


def test_both_protocol_eras_work_through_the_sdk_with_the_bearer_token(env):
    import httpx2
    from mcp import Client as SdkClient
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    token = env.token("evaluator", canister_user=CANISTER_USER)

    async def main(url: str):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    assert (await session.initialize()).protocol_version == HANDSHAKE
                    assert [t.name for t in (await session.list_tools()).tools] == ["get_section_source"]
                    result = await session.call_tool("get_section_source", {"path": NOTE})
                    assert json.loads(result.content[0].text)["path"] == NOTE
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            async with SdkClient(streamable_http_client(url, http_client=http)) as client:
                assert client.protocol_version == "2026-07-28"
                assert [t.name for t in (await client.list_tools()).tools] == ["get_section_source"]
                result = await client.call_tool("get_section_source", {"path": NOTE})
                assert json.loads(result.content[0].text)["path"] == NOTE
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {env.token(kind='expired')}"}) as http:
            response = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "server/discover"})
            assert response.status_code == 401

    with process(env, ["-m", "reference.section_source_hosted.server"]) as (url, proc):
        anyio.run(main, url)
        proc.terminate()
        stdout, stderr = proc.communicate(timeout=10)
    assert stdout == ""
    lines = stderr.splitlines()
    assert len(lines) == 2 and all(LOG_LINE.fullmatch(line) for line in lines), stderr
    assert [r.headers["x-user-id"] for r in env.double.note_reads()] == [CANISTER_USER, CANISTER_USER]


# -- mutants change behaviour -----------------------------------------------------------

def test_the_signature_mutant_lets_a_forged_token_in(env):
    async def main(url: str):
        async with httpx.AsyncClient(timeout=10) as http:
            session = await Client(http, url).open(env.token(kind="wrong_signature"))
            assert output(await session.call({"path": NOTE}))["path"] == NOTE
    with process(env, [str(LAUNCH_HOSTED), "hosted_signature_unchecked"]) as (url, _proc):
        anyio.run(main, url)


def test_the_cross_session_mutant_serves_one_vaults_output_to_another(env):
    env.double.put_note(OTHER_VAULT, NOTE, note_payload(NOTE, "# Other Vault Heading\n"))

    async def main(url: str):
        async with httpx.AsyncClient(timeout=10) as http:
            first = await Client(http, url).open(env.token())
            second = await Client(http, url).open(env.token(user="u2", vault_id=OTHER_VAULT))
            assert output(await first.call({"path": NOTE}))["sections"][0]["heading_text"] == HEADING
            assert output(await second.call({"path": NOTE}))["sections"][0]["heading_text"] == HEADING
    with process(env, [str(LAUNCH_HOSTED), "hosted_cross_session_state"]) as (url, _proc):
        anyio.run(main, url)
