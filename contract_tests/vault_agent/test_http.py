"""vault-agent serve with Streamable HTTP: /mcp off by default, its configuration by file,
environment and flag, a path that collides with the API or that configuration.md forbids, POST
and GET, access control on a loopback and a non-loopback bind (GET /health too), CORS, Host
validation and twenty concurrent sessions (the non-loopback bind: test_public_bind.py)."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from contract_tests.synthetic.vault_agent import NOTES, token
from contract_tests.transport.http import HttpServer, messages_of
from contract_tests.vault_agent.common import (
    OLDEST_VERSION,
    answers_mcp,
    api_base,
    initialize_http,
    mcp_payload,
    per_requirement,
    profiles_mark,
    serve_refusals,
    sweep_verdict,
)
from contract_tests.verdicts.checks import called_ok, short
from contract_tests.verdicts.findings import Findings

pytestmark = profiles_mark
APP, EVIL = "http://app.example", "http://evil.example"
MCP_ENABLED, MCP_ENDPOINT = "VAULT_AGENT_MCP_ENABLED", "VAULT_AGENT_MCP_HTTP_ENDPOINT"


def _toml(enabled: bool | None = None, endpoint: str | None = None) -> str:
    lines = ["[mcp]"]
    if enabled is not None:
        lines.append(f"enabled = {str(enabled).lower()}")
    if endpoint is not None:
        lines.append("[mcp.http]")
        lines.append(f'endpoint = "{endpoint}"')
    return "\n".join(lines) + "\n"


# Each case: (name, TOML, environment, appended flags, where MCP must answer, where it must not,
# the requirements it proves).
CFG1, CFG2 = "VA-CFG-001", "VA-CFG-002"
PRECEDENCE = [
    ("default", None, {}, (), None, ["/mcp"], ["VA-HTTP-001", CFG1]),
    ("toml", _toml(True, "/toml-mcp"), {}, (), "/toml-mcp", ["/mcp"], [CFG1, CFG2]),
    ("env-over-toml", _toml(False, "/toml-mcp"), {MCP_ENABLED: "true", MCP_ENDPOINT: "/env-mcp"}, (), "/env-mcp",
     ["/toml-mcp", "/mcp"], [CFG1, CFG2]),
    ("env-off-over-toml", _toml(True), {MCP_ENABLED: "false"}, (), None, ["/mcp"], [CFG1]),
    ("flags-over-env", _toml(False), {MCP_ENABLED: "false", MCP_ENDPOINT: "/env-mcp"},
     ("--mcp-enabled", "--mcp-http-endpoint", "/flag-mcp"), "/flag-mcp", ["/env-mcp", "/mcp"], [CFG1, CFG2]),
    ("env-default-path", None, {MCP_ENABLED: "true"}, (), "/mcp", [], [CFG1, CFG2]),
]


def _start_all(own_servers, suite, fixture, cases):
    """serve for every case side by side (start-up dominates), or the reason one did not start."""
    started: dict[str, object] = {}

    def one(case) -> None:
        name, toml, env, flags = case[:4]
        values = {"config": str(fixture.write_config(f"{name}.toml", toml))} if toml else {}
        try:
            started[name] = own_servers.start_http(fixture, "serve", values=values, env=env, append=flags)
        except Exception as exc:  # noqa: BLE001 - reported as the case's finding
            started[name] = exc
    threads = [threading.Thread(target=one, args=(case,)) for case in cases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    return started


CONFIG = ("VA-CFG-001", "VA-CFG-002", "VA-HTTP-001")


@pytest.mark.integration
@per_requirement(*CONFIG)
def test_mcp_enablement_and_endpoint_follow_flags_then_environment_then_toml_then_defaults(
        req, suite, own_servers, contract_fixture):
    sweep_verdict("config", req, CONFIG, lambda findings: _config_sweep(suite, own_servers, contract_fixture, findings))


def _config_sweep(suite, own_servers, contract_fixture, findings) -> None:
    started = _start_all(own_servers, suite, contract_fixture, PRECEDENCE)
    for name, _toml_text, env, flags, on, off, reqs in PRECEDENCE:
        srv = started.get(name)
        if not isinstance(srv, HttpServer):
            for req in reqs:
                findings.fail(f"serve did not start: {short(str(srv), 160)}", req=req, case=name)
            continue
        base = api_base(srv)
        if on is not None:
            ok = answers_mcp(initialize_http(base, on))
            for req in reqs:
                findings.check(ok, f"MCP does not answer at {on} (env {env}, flags {list(flags)})", req=req, case=name)
        for path in off:
            ok = answers_mcp(initialize_http(base, path))
            for req in reqs:
                findings.check(not ok, f"MCP answers at {path}, which the settings override or leave off "
                               f"(env {env}, flags {list(flags)})", req=req, case=name)
        if name == "default":
            api = httpx.post(base + "/search", json={"query": "tokalpha"}, timeout=30)
            findings.check(api.status_code == 200, f"the HTTP API does not answer: "
                           f"{api.status_code}", req="VA-HTTP-001", case=name)
        srv.close(timeout=5)


@pytest.mark.integration
@pytest.mark.req("VA-HTTP-002")
def test_an_mcp_endpoint_on_an_api_path_is_refused_at_start_up(suite, own_servers, contract_fixture):
    cases = {path: ({}, {MCP_ENABLED: "true", MCP_ENDPOINT: path}) for path in ("/search", "/status")}
    with Findings() as findings:
        for path, outcome in serve_refusals(own_servers, contract_fixture, cases).items():
            findings.check(outcome is None, f"with mcp.http.endpoint {path} serve {outcome}; "
                           "it must refuse to start", case=path)


# Endpoint paths configuration.md forbids, each by a source the suite can carry it in (a null
# byte cannot be in an environment variable or an argument: it goes in the TOML file).
BAD_PATHS = [("no-leading-slash", "rc-mcp", None), ("dot-dot", "/rc/../mcp", None),
             ("null-byte", None, '[mcp]\nenabled = true\n[mcp.http]\nendpoint = "/rc-mcp\\u0000x"\n')]


@pytest.mark.integration
@pytest.mark.req("VA-HTTP-013")
def test_an_mcp_endpoint_without_a_leading_slash_or_with_dot_dot_or_a_null_byte_is_refused(
        suite, own_servers, contract_fixture):
    cases = {}
    for name, path, toml in BAD_PATHS:
        values = {"config": str(contract_fixture.write_config(f"endpoint-{name}.toml", toml))} if toml else {}
        cases[name] = (values, {MCP_ENABLED: "true", **({MCP_ENDPOINT: path} if path else {})})
    with Findings() as findings:
        for name, outcome in serve_refusals(own_servers, contract_fixture, cases).items():
            findings.check(outcome is None, f"with such an mcp.http.endpoint serve {outcome}; it must "
                           "refuse to start", case=name)


@pytest.mark.integration
@pytest.mark.req("VA-HTTP-003")
def test_post_answers_in_json_or_sse_and_get_opens_an_event_stream(server, client):
    base = api_base(server)
    path = httpx.URL(server.url).path
    with Findings() as findings:
        response = initialize_http(base, path)
        kind = response.headers.get("content-type", "")
        findings.check(response.status_code == 200 and ("application/json" in kind or "text/event-stream" in kind),
                       f"POST initialize: {response.status_code} {short(kind)}")
        session = response.headers.get("mcp-session-id")
        version = next((json.loads(t).get("result", {}).get("protocolVersion") for t in messages_of(response)), None)
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
                   **({"Mcp-Session-Id": session} if session else {}),
                   **({"MCP-Protocol-Version": version} if version else {})}
        note = httpx.post(base + path, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                          headers=headers, timeout=30)
        findings.check(note.status_code == 202, f"a POSTed notification got {note.status_code}, not 202")
        with httpx.stream("GET", base + path, headers={**headers, "Accept": "text/event-stream"}, timeout=10) as stream:
            kind = stream.headers.get("content-type", "")
            findings.check(stream.status_code == 200 and "text/event-stream" in kind,
                           f"GET with Accept text/event-stream: {stream.status_code} {short(kind)}")
        if session:
            httpx.delete(base + path, headers=headers, timeout=10)


@pytest.mark.security
@pytest.mark.req("VA-HTTP-004")
def test_a_loopback_bind_serves_mcp_without_an_api_key(server, client):
    response = initialize_http(api_base(server), httpx.URL(server.url).path)
    with Findings() as findings:
        findings.check(answers_mcp(response), f"without Authorization: {response.status_code} "
                       f"{short(response.text, 160)}")


def _preflight(base: str, path: str, origin: str) -> httpx.Response:
    return httpx.options(base + path, headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                               "Access-Control-Request-Headers": "content-type"}, timeout=30)


@pytest.mark.security
@pytest.mark.req("VA-HTTP-006")
def test_cors_is_off_by_default_and_allows_only_the_configured_origin_without_credentials(
        suite, own_servers, server, client, contract_fixture):
    path = httpx.URL(server.url).path
    with Findings() as findings:
        base = api_base(server)
        for what, response in (("preflight", _preflight(base, path, APP)),
                               ("POST /search", httpx.post(base + "/search", json={"query": "tokalpha"},
                                                           headers={"Origin": APP}, timeout=30))):
            findings.check("access-control-allow-origin" not in response.headers,
                           f"CORS is on by default: {what} from {APP} got Access-Control-Allow-Origin", case="default")
        srv = own_servers.start_http(contract_fixture, "server", path=path,
                         env={"VAULT_AGENT_CORS_ENABLED": "true", "VAULT_AGENT_CORS_ALLOWED_ORIGINS": APP})
        base = api_base(srv)
        allowed = _preflight(base, path, APP)
        findings.check(allowed.headers.get("access-control-allow-origin") == APP,
                       f"the allowed origin's preflight got {allowed.status_code} "
                       f"{short(allowed.headers.get('access-control-allow-origin'))}", case="enabled")
        findings.check(allowed.headers.get("access-control-allow-credentials", "").lower() != "true",
                       "credentials are allowed", case="enabled")
        other = _preflight(base, path, EVIL)
        findings.check(other.headers.get("access-control-allow-origin") not in (EVIL, "*"),
                       "another origin's preflight is allowed", case="enabled")
        srv.close(timeout=5)


@pytest.mark.security
@pytest.mark.req("VA-HTTP-007")
def test_a_foreign_host_header_is_refused_on_a_loopback_bind(server, client):
    response = initialize_http(api_base(server), httpx.URL(server.url).path, Host="evil.example")
    with Findings() as findings:
        findings.check(400 <= response.status_code < 500 and not answers_mcp(response),
                       f"Host evil.example got HTTP {response.status_code}"
                       f"{' with an MCP answer' if answers_mcp(response) else ''}")


@pytest.mark.stress
@pytest.mark.req("VA-HTTP-008")
def test_twenty_concurrent_sessions_get_their_own_answers(servers, server, client, contract_fixture, names, profile):
    count = int(profile.limits["sessions"])
    wanted = [(token(name), NOTES[name]) for name in ("alpha", "beta", "gamma", "delta")]
    sessions = [servers.session(server, contract_fixture) for _ in range(count)]
    problems: list[str] = []
    barrier = threading.Barrier(count)

    def run(number: int) -> None:
        session = sessions[number]
        try:
            init = session.initialize(OLDEST_VERSION, timeout=60)
            if "result" not in init:
                problems.append(f"session {number}: initialize failed: {short(init, 120)}")
                return
            barrier.wait(60)
            query, path = wanted[number % len(wanted)]
            for _ in range(3):
                response = session.call_tool("search", names.args("search", {"query": query, "limit": 1}), timeout=60)
                results = mcp_payload(response).get("results") if called_ok(response) else None
                top = results[0].get("path") if results else None
                if top != path:
                    problems.append(f"session {number}: {query} answered {short(top)} instead of {path}")
                    return
        except Exception as exc:  # noqa: BLE001 - collected and reported
            problems.append(f"session {number}: {type(exc).__name__}: {short(str(exc), 120)}")
    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    ids = [s.session_id for s in sessions if s.session_id]
    with Findings() as findings:
        findings.check(len(set(ids)) == len(ids), f"{len(ids) - len(set(ids))} session ids repeat")
        for problem in problems:
            findings.fail(problem)
    for session in sessions:
        session.close(timeout=5)


# A wildcard in cors.allowed_origins, by environment and by TOML file (server-api.md: "Wildcard
# origins are invalid").
WILDCARD = {"environment": (None, {"VAULT_AGENT_CORS_ENABLED": "true", "VAULT_AGENT_CORS_ALLOWED_ORIGINS": "*"}),
            "toml": ('[cors]\nenabled = true\nallowed_origins = ["*"]\n', {})}


@pytest.mark.security
@pytest.mark.req("VA-HTTP-014")
def test_a_wildcard_cors_origin_is_refused(suite, own_servers, server, client, contract_fixture):
    """Refusing to start is the validation error the documents make of it; a serve that starts
    anyway must not act on the wildcard (no other origin is allowed)."""
    path = httpx.URL(server.url).path
    cases = {name: ({"config": str(contract_fixture.write_config(f"cors-{name}.toml", toml))} if toml else {}, env)
             for name, (toml, env) in WILDCARD.items()}
    with Findings() as findings:
        for name, outcome in serve_refusals(own_servers, contract_fixture, cases).items():
            if outcome is None:
                findings.check(True, "", case=name)  # refused to start: the configuration is invalid
                continue
            if outcome != "kept running":
                findings.fail(f"with a wildcard CORS origin serve {outcome}; it must refuse to start (exit "
                              "non-zero) or serve without the wildcard", case=name)
                continue
            values, env = cases[name]
            srv = own_servers.start_http(contract_fixture, "serve", values=values,
                                         env={**env, MCP_ENABLED: "true"}, path=path)
            base = api_base(srv)
            for what, response in (("preflight", _preflight(base, path, EVIL)),
                                   ("POST /search", httpx.post(base + "/search", json={"query": "tokalpha"},
                                                               headers={"Origin": EVIL}, timeout=30))):
                granted = response.headers.get("access-control-allow-origin")
                findings.check(granted not in (EVIL, "*"), f"started with a wildcard CORS origin, it grants "
                               f"{EVIL}: {what} got Access-Control-Allow-Origin {granted}", case=name,
                               request=f"{what} from {EVIL}")
            srv.close(timeout=5)
