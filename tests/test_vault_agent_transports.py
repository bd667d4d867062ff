"""The reference vault-agent as the suite runs it: `mcp` over stdio and `serve` over HTTP in
subprocesses, with raw JSON-RPC. Tool surface, protocol version, start-up without a vault or
an index, shutdown on stdin close, the /mcp switch and path, access control, Origin and CORS,
concurrent sessions, logging, and payload parity between the HTTP API and both transports."""

from __future__ import annotations

import base64
import json
import threading
import time
from urllib.parse import quote

import httpx
import pytest

from reference.vault_agent.store import note_id
from tests.test_vault_agent_support import (
    CANARY_BODY, CANARY_QUERY, HttpMcp, Serve, Stdio, build_model, build_vault, clean_env, payload, run_cli,
)

KEY = "k" * 40
TOOLS = {"search", "get_note", "get_chunk", "get_attachment", "related"}


APP = "http://app.example"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One vault, one honest model built from it, one index (built by the CLI, as the suite does)."""
    base = tmp_path_factory.mktemp("vat")
    vault = build_vault(base)
    model = build_model(base / "model.json", vault)
    index_dir = base / "idx"
    env = clean_env(XDG_CONFIG_HOME=str(base / "xdg"), HOME=str(base / "home"))
    flags = ["--vault-root", str(vault), "--index-dir", str(index_dir), "--exclude", "drafts/",
             "--embedding-enabled", "--embedding-model", str(model)]
    done = run_cli("index", *flags, env=env)
    assert done.returncode == 0, done.stderr
    return base, vault, flags, env


def args_for(world):
    return world[2]


@pytest.fixture(scope="module")
def stdio(world):
    server = Stdio(*args_for(world), env=world[3])
    server.init = server.initialize()
    yield server
    server.close()


@pytest.fixture(scope="module")
def served(world):
    """serve with /mcp on and one CORS origin, shared by the HTTP tests."""
    server = Serve(*args_for(world), "--mcp-enabled", "--cors-enabled", "--cors-allowed-origins", APP, env=world[3])
    yield server
    server.stop()


# -- stdio ---------------------------------------------------------------------------------------
def test_mcp_accepts_no_transport_flag(world):
    done = run_cli("mcp", "--transport", "stdio", env=world[3])
    assert done.returncode == 2


def test_mcp_lists_exactly_five_read_only_tools_and_no_resources_or_prompts(stdio):
    assert set(stdio.init["result"]["capabilities"]) == {"tools"}
    tools = stdio.request("tools/list")["result"]["tools"]
    assert {t["name"] for t in tools} == TOOLS
    for tool in tools:
        assert tool["description"].strip()
        hints = tool["annotations"]
        assert (hints["readOnlyHint"], hints["destructiveHint"], hints["idempotentHint"]) == (True, False, True)
    assert stdio.request("resources/list")["error"]["code"] == -32601
    assert stdio.request("prompts/list")["error"]["code"] == -32601


def test_an_unsupported_protocol_version_is_answered_with_a_supported_one(world, served):
    server = Stdio(*args_for(world), env=world[3])
    try:
        version = server.initialize("2024-11-05")["result"]["protocolVersion"]
        assert version != "2024-11-05" and version >= "2025-03-26"
    finally:
        server.close()
    for asked in ("1999-01-01", "2024-11-05"):
        version = HttpMcp(served.url + "/mcp").initialize(asked)["result"]["protocolVersion"]
        assert version != asked and version >= "2025-03-26"


def test_stdout_carries_only_json_rpc_and_logs_never_hold_the_query_or_content(world, stdio):
    stdio.call("search", {"query": f"cat {CANARY_QUERY}"})
    stdio.call("search", {"query": CANARY_QUERY * 300})
    stdio.call("get_note", {"noteId": note_id("notes/cats.md")})
    time.sleep(0.2)
    assert all(json.loads(line) for line in stdio.stdout_lines)
    logs = "".join(stdio.stderr_lines)
    assert "event=tool.call" in logs
    for secret in (CANARY_QUERY, CANARY_BODY, str(world[0])):
        assert secret not in logs


def test_without_a_vault_every_tool_answers_vault_not_configured(world):
    server = Stdio(env=world[3])
    try:
        server.initialize()
        calls = {"search": {"query": "x"}, "get_note": {"noteId": "0" * 32},
                 "get_chunk": {"noteId": "0" * 32, "chunkIndex": 0},
                 "get_attachment": {"vaultRelativePath": "a.png"}, "related": {"type": "note", "id": "0" * 32}}
        for name, arguments in calls.items():
            error = server.call(name, arguments)["error"]
            assert (error["code"], error["data"]["errorCode"]) == (-32013, "VAULT_NOT_CONFIGURED")
            assert "vault.root" in error["message"]
    finally:
        assert server.close() == 0


def test_without_an_index_tools_fail_actionably_and_no_index_file_is_created(world, tmp_path):
    _base, vault, _idx, env = world
    server = Stdio("--vault-root", str(vault), "--index-dir", str(tmp_path / "none"), env=env)
    try:
        server.initialize()
        for name, arguments in (("search", {"query": "cat"}), ("related", {"type": "note", "id": "0" * 32}),
                                ("get_note", {"noteId": "0" * 32})):
            error = server.call(name, arguments)["error"]
            assert (error["code"], error["data"]["errorCode"]) == (-32001, "INDEX_NOT_FOUND")
            assert "vault-agent index" in error["message"]
    finally:
        server.close()
    assert not (tmp_path / "none").exists()


def test_mcp_works_whatever_mcp_enabled_says(world, tmp_path):
    for enabled in ("true", "false"):
        config = tmp_path / f"{enabled}.toml"
        config.write_text(f"[mcp]\nenabled = {enabled}\n", encoding="utf-8")
        server = Stdio("--config", str(config), *args_for(world), env=world[3])
        try:
            server.initialize()
            assert payload(server.call("search", {"query": "cat"}))["results"]
        finally:
            server.close()


def test_closing_stdin_lets_calls_in_flight_finish_and_exits_zero_promptly(world):
    env = {**world[3], "VAULT_AGENT_DEBUG_CALL_DELAY_MS": "1000"}
    server = Stdio(*args_for(world), env=env)
    server.initialize()
    ids = [server.call("search", {"query": "cat"}, wait=False) for _ in range(3)]
    time.sleep(0.2)
    server.proc.stdin.close()
    started = time.monotonic()
    code = server.proc.wait(15)
    elapsed = time.monotonic() - started
    for msg_id in ids:
        assert "result" in server.wait(msg_id, 1)
    assert code == 0 and elapsed < 5


def test_sigterm_shuts_down_like_stdin_close(world):
    import signal

    env = {**world[3], "VAULT_AGENT_DEBUG_CALL_DELAY_MS": "800"}
    server = Stdio(*args_for(world), env=env)
    server.initialize()
    msg_id = server.call("search", {"query": "cat"}, wait=False)
    time.sleep(0.2)
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(15) == 0
    assert "result" in server.wait(msg_id, 1)


def test_a_tool_call_over_its_timeout_fails_with_timeout(world):
    env = {**world[3], "VAULT_AGENT_DEBUG_CALL_DELAY_MS": "1500", "VAULT_AGENT_DEBUG_TOOL_TIMEOUT_MS": "200"}
    server = Stdio(*args_for(world), env=env)
    try:
        server.initialize()
        error = server.call("search", {"query": "cat"})["error"]
        assert (error["code"], error["data"]["errorCode"]) == (-32012, "TIMEOUT")
    finally:
        server.close()


def test_unknown_tools_are_method_not_found_and_missing_arguments_invalid_params(stdio):
    assert stdio.call("delete_note", {})["error"]["code"] == -32601
    error = stdio.call("get_note", {})["error"]
    assert (error["code"], error["data"]["errorCode"]) == (-32602, "INVALID_ID")
    error = stdio.call("search", {"query": "x", "mode": "fast", "unknown": 1})["error"]
    assert (error["code"], error["data"]["errorCode"]) == (-32000, "INVALID_MODE")


def test_a_line_that_is_not_json_rpc_gets_a_parse_or_invalid_request_error(stdio):
    stdio.proc.stdin.write(b"not json\n")
    stdio.proc.stdin.flush()
    assert stdio.wait(None, 10)["error"]["code"] == -32700
    stdio.responses.pop(None)
    stdio.proc.stdin.write(b'[{"jsonrpc": "2.0", "id": 99, "method": "ping"}]\n')
    stdio.proc.stdin.flush()
    assert stdio.wait(None, 10)["error"]["code"] == -32600
    stdio.responses.pop(None)


# -- HTTP: /mcp switch, access control, Origin, CORS --------------------------------------------
def test_serve_has_no_mcp_endpoint_and_no_cors_by_default(world):
    server = Serve(*args_for(world), env=world[3])
    try:
        response = server.client().post("/mcp", json={})
        assert response.status_code == 404 and response.json()["error"]["code"] == "MCP_NOT_ENABLED"
        preflight = server.client().options("/search", headers={"Origin": APP, "Access-Control-Request-Method": "POST"})
        assert "access-control-allow-origin" not in preflight.headers
    finally:
        server.stop()


def test_the_mcp_endpoint_path_is_configurable(world):
    server = Serve(*args_for(world), "--mcp-enabled", "--mcp-http-endpoint", "/agent-mcp", env=world[3])
    try:
        client = HttpMcp(server.url + "/agent-mcp")
        assert client.initialize()["result"]["capabilities"] == {"tools": {"listChanged": False}}
        assert payload(client.call("search", {"query": "cat"}))["results"]
        assert server.client().post("/mcp", json={}).json()["error"]["code"] == "ROUTE_NOT_FOUND"
    finally:
        server.stop()


@pytest.mark.parametrize("flags,code", [(["--mcp-http-endpoint", "/search"], "CONFIG_INVALID"),
                                        (["--host", "0.0.0.0"], "API_KEY_REQUIRED"),
                                        (["--host", "0.0.0.0", "--api-key", "short"], "API_KEY_REQUIRED")])
def test_serve_refuses_to_start_on_a_colliding_path_or_a_public_bind_without_a_key(world, flags, code):
    done = run_cli("serve", *args_for(world), "--port", "1", *flags, env=world[3])
    assert done.returncode == 2 and done.stderr.startswith(code)
    assert "short" not in done.stderr


def test_a_public_bind_requires_the_key_on_every_route_including_mcp(world):
    server = Serve(*args_for(world), "--mcp-enabled", "--api-key", KEY, host="0.0.0.0", env=world[3])
    try:
        plain = server.client()
        missing = plain.get("/health")
        assert missing.status_code == 401 and missing.json()["error"]["code"] == "AUTH_REQUIRED"
        wrong = plain.get("/health", headers={"Authorization": "Bearer " + "x" * 40})
        assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "AUTH_FAILED"
        assert plain.get(f"/health?api_key={KEY}").status_code == 401
        assert plain.get("/health", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
        refused = HttpMcp(server.url + "/mcp").post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == -32020
        client = HttpMcp(server.url + "/mcp", Authorization=f"Bearer {KEY}")
        client.initialize()
        assert payload(client.call("search", {"query": "cat"}))["results"]
    finally:
        logs = server.stop()
    assert KEY not in logs


def test_origin_and_host_are_validated_on_mcp(served):
    evil = HttpMcp(served.url + "/mcp", Origin="http://evil.example").post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert evil.status_code == 403
    rebinding = HttpMcp(served.url + "/mcp", Host="evil.example").post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert rebinding.status_code == 421
    local = HttpMcp(served.url + "/mcp", Origin=f"http://127.0.0.1:{served.port}")
    assert local.initialize()["result"]["protocolVersion"] == "2025-03-26"


def test_cors_allows_only_listed_origins_without_credentials(served):
    preflight = {"Origin": APP, "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type,authorization"}
    client = served.client()
    allowed = client.options("/search", headers=preflight)
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == APP
    assert "access-control-allow-credentials" not in allowed.headers
    assert client.options("/mcp", headers=preflight).headers["access-control-allow-origin"] == APP
    simple = client.post("/search", json={"query": "cat"}, headers={"Origin": APP})
    assert simple.headers["access-control-allow-origin"] == APP
    other = client.options("/search", headers={**preflight, "Origin": "http://evil.example"})
    assert other.status_code == 403 and "access-control-allow-origin" not in other.headers


def test_twenty_concurrent_mcp_sessions_get_independent_answers(served):
    server = served
    queries = {"cat": "notes/cats.md", "storm": "notes/weather.md", "puppy": "notes/dogs.md", "tomatoes": "notes/nested/deep.md"}
    failures: list[str] = []
    clients = [HttpMcp(server.url + "/mcp") for _ in range(20)]

    def session(number: int, client: HttpMcp) -> None:
        try:
            query = list(queries)[number % len(queries)]
            for _ in range(3):
                top = payload(client.call("search", {"query": query, "mode": "lexical", "limit": 1}))["results"][0]["path"]
                if top != queries[query]:
                    failures.append(f"session {number}: {query} -> {top}")
        except Exception as exc:  # noqa: BLE001 - collected and reported below
            failures.append(f"session {number}: {exc!r}")

    try:
        for client in clients:
            client.initialize()
        assert len({c.headers["Mcp-Session-Id"] for c in clients}) == 20
        threads = [threading.Thread(target=session, args=(n, c)) for n, c in enumerate(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        for client in clients:
            client.http.close()
    assert failures == []


# -- parity ------------------------------------------------------------------------------------------
CATS, DOGS = note_id("notes/cats.md"), note_id("notes/dogs.md")
CASES = [
    ("search", {"query": "cat water"}), ("search", {"query": "rain", "mode": "lexical", "limit": 2}),
    ("search", {"query": "kitten", "mode": "embedding"}), ("search", {"query": " "}), ("search", {"query": "x", "mode": "z"}),
    ("search", {"query": "x", "limit": 0}), ("search", {"query": 7}),
    ("related", {"type": "note", "id": CATS}), ("related", {"type": "chunk", "id": f"{CATS}:1", "mode": "lexical"}),
    ("related", {"type": "note", "id": "0" * 32}), ("related", {"type": "chunk", "id": f"{CATS}:77"}),
    ("related", {"type": "page", "id": CATS}),
    ("get_note", {"noteId": CATS}), ("get_note", {"noteId": "0" * 32}), ("get_note", {"noteId": "nothex"}),
    ("get_note", {"noteId": note_id("notes/large.md")}), ("get_note", {"noteId": note_id("notes/large.md"), "allowLarge": True}),
    ("get_chunk", {"noteId": CATS, "chunkIndex": 2}), ("get_chunk", {"noteId": CATS, "chunkIndex": 40}),
    ("get_chunk", {"noteId": "0" * 32, "chunkIndex": 0}),
    ("get_attachment", {"vaultRelativePath": "attachments/pic.png"}),
    ("get_attachment", {"vaultRelativePath": "attachments/readme.txt", "download": True}),
    ("get_attachment", {"vaultRelativePath": "attachments/eleven.bin", "download": True}),
    ("get_attachment", {"vaultRelativePath": "../outside/secret.txt"}),
    ("get_attachment", {"vaultRelativePath": "attachments/escape.txt"}),
    ("get_attachment", {"vaultRelativePath": "notes/cats.md"}),
    ("get_attachment", {"vaultRelativePath": "attachments/none.png"}),
]


def http_call(client: httpx.Client, tool: str, args: dict) -> httpx.Response:
    flags = "&".join(f"{k}=true" for k in ("download", "allowLarge") if args.get(k))
    query = f"?{flags}" if flags else ""
    if tool == "search":
        return client.post("/search", json=args)
    if tool == "related":
        return client.post("/related", json=args)
    if tool == "get_note":
        return client.get(f"/notes/{args['noteId']}{query}")
    if tool == "get_chunk":
        return client.get(f"/chunks/{args['noteId']}/{args['chunkIndex']}")
    # Every '/' escaped, so no client normalises a '..' segment away before the server sees it.
    return client.get("/attachments/" + quote(args["vaultRelativePath"], safe="") + query)


def _drop_request_id(body: dict) -> dict:
    body["error"]["details"].pop("requestId", None)
    return body


@pytest.fixture(scope="module")
def parity_servers(served, stdio):
    http_mcp = HttpMcp(served.url + "/mcp")
    http_mcp.initialize()
    return served, {"stdio": stdio, "http": http_mcp}


@pytest.mark.parametrize("tool,args", CASES, ids=[f"{t}-{i}" for i, (t, _a) in enumerate(CASES)])
def test_each_tool_payload_matches_the_http_api_over_both_transports(parity_servers, tool, args):
    serve, transports = parity_servers
    response = http_call(serve.client(), tool, args)
    for name, transport in transports.items():
        answer = transport.call(tool, args)
        if response.status_code == 200 and response.headers["content-type"].startswith("application/json"):
            body = response.json()
            assert payload(answer) == {**body["data"], "warnings": body["warnings"]}, name
        elif response.status_code == 200:  # a download: raw bytes over HTTP, base64 over MCP
            data = payload(answer)
            assert base64.b64decode(data["content"]) == response.content, name
            assert data["contentType"] == response.headers["content-type"], name
        else:
            error = answer["error"]
            assert error["data"]["errorCode"] == response.json()["error"]["code"], name
            assert -32099 <= error["code"] <= -32000 or error["code"] == -32602, name
