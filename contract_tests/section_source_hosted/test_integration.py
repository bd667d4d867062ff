"""Integration tier: sessions, the ACL in 1L, input rules, the upstream request, vectors, errors."""

from __future__ import annotations

import httpx
import pytest

from contract_tests.contracts.specs import load_profile
from contract_tests.section_source_hosted.common import (
    INVALID_PATH,
    PROFILE,
    ROLES,
    TOOL,
    capture,
    encoded_component_ok,
    explicit_cells,
    failed,
    http_refusal,
    no_probe_in,
    one_read,
    open_session,
    profiles_mark,
    read_path,
    tool_names,
)
from contract_tests.synthetic.upstream import NOTES_PREFIX
from contract_tests.transport.http import MCP_HEADERS
from contract_tests.transport.stdio import initialize_message  # in the version the run negotiated
from contract_tests.verdicts.checks import check, check_vector, short, structured_error, tool_output
from contract_tests.verdicts.findings import Findings, RequirementFailure
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark, pytest.mark.integration]

VECTORS = load_profile(PROFILE).vectors()


# --- sessions ------------------------------------------------------------------------

@pytest.mark.req("SSH-AUTH-001", "SSH-AUTH-003")
def test_no_token_is_refused_and_a_valid_token_gets_a_session(server, client, servers, contract_fixture):
    """Any refusal conforms (an HTTP 4xx, or a JSON-RPC error); 401 or 403 is the advisory's, judged
    on the refusals there were (none: blocked by SSH-AUTH-001)."""
    refused = []
    with Findings() as findings:
        for message in (initialize_message(request_id="rc-auth-1"), {"jsonrpc": "2.0", "id": "rc-auth-2", "method": "tools/list", "params": {}}):
            response = httpx.post(server.url, json=message, headers=MCP_HEADERS, timeout=15)
            ok, seen = http_refusal(response)
            findings.check(ok, f"{message['method']} without a token was not refused: {seen}", req="SSH-AUTH-001")
            findings.check('"result"' not in response.text, f"{message['method']} without a token got a result",
                           req="SSH-AUTH-001")
            if ok:
                refused.append((message["method"], response.status_code))
        for role in ROLES:
            try:
                conn = open_session(servers, server, contract_fixture, contract_fixture.token(role), req="SSH-AUTH-001")
            except RequirementFailure as failure:
                findings.items.extend(failure.findings)
                continue
            conn.close()
        if refused:
            odd = [f"{method}: HTTP {status}" for method, status in refused if status not in (401, 403)]
            findings.check(not odd, f"a request without a token was refused, but not with HTTP 401 or 403: {odd}",
                           req="SSH-AUTH-003")
        else:
            findings.block("no request without a token was refused", req="SSH-AUTH-003", by="SSH-AUTH-001")


# --- ACL, phase 1L -------------------------------------------------------------------

def _grants():
    """Matrix cells that grant a role a tool (list and call); they belong to phase 1L."""
    return [pytest.param(phase, role, tool, cell, id=f"{phase}-{role}-{tool}")
            for phase, role, tool, cell in explicit_cells() if cell["list"] or cell["call"]]


@pytest.mark.req("SSH-ACL-001")
@pytest.mark.parametrize("phase,role,tool,cell", _grants())
def test_each_granted_role_lists_and_calls_the_tool(server, client, servers, contract_fixture, suite,
                                                    phase, role, tool, cell):
    assert phase == suite.phase, f"matrix cell of phase {phase} cites a requirement of phase {suite.phase}"
    conn = open_session(servers, server, contract_fixture, contract_fixture.token(role), req="SSH-ACL-001")
    try:
        names = tool_names(conn)
        if cell["list"]:
            check(tool in names, f"phase {phase}, role {role}: {tool} not listed (listed: {names})")
        if cell["call"]:
            tool_output(conn.call_tool(tool, {"path": "notes/alpha.md"}))
    finally:
        conn.close()


# --- input ---------------------------------------------------------------------------

@pytest.mark.req("SSH-IN-001")
@pytest.mark.parametrize("arguments", [{}, {"path": 918273645}, {"path": None}, {"path": ["notes/alpha.md"]},
                                       {"path": {"p": "notes/alpha.md"}}, {"path": True}],
                         ids=["missing", "number", "null", "list", "object", "bool"])
def test_a_missing_or_non_string_path_is_invalid_path_without_a_read(server, client, contract_fixture,
                                                                       profile, arguments):
    response, requests = capture(contract_fixture, lambda: server.call_tool(TOOL, arguments))
    body = structured_error(response, profile, f"arguments {short(arguments)}")
    check(body["error"] == INVALID_PATH, f"expected the error {INVALID_PATH!r}, got {short(body['error'])}")
    check(not requests, f"{len(requests)} upstream request(s) for invalid input")
    no_probe_in(response, {"received value": "918273645"}, "non-string path")


@pytest.mark.req("SSH-IN-004")
@pytest.mark.parametrize("variant,expected", [
    ("  notes/alpha.md  ", "notes/alpha.md"), ("\tnotes/alpha.md\n", "notes/alpha.md"),
    ("notes\\alpha.md", "notes/alpha.md"), ("notes//alpha.md", "notes/alpha.md"),
    ("notes/alpha.md/", "notes/alpha.md"), ("notes\\\\deep//nested\\gamma-note.md", "notes/deep/nested/gamma-note.md"),
])
def test_accepted_paths_are_normalized_before_the_read(server, client, contract_fixture, variant, expected):
    response, requests = capture(contract_fixture, lambda: server.call_tool(TOOL, {"path": variant}))
    read = one_read(requests, f"path {variant!r}")
    check(read_path(read) == expected, f"path {variant!r} was read as {read_path(read)!r}, not {expected!r}")
    out = tool_output(response)
    check(out["path"] == expected, f"output path {out['path']!r} for {variant!r}")


@pytest.mark.req("SSH-IN-004")
@pytest.mark.parametrize("name", ["with space.md", "ünïcödé-日本.md", "hash#tag.md", "what?.md", "100%.md",
                                  "a+b&c=d.md", "semi;colon,comma.md", "quote'(paren)!*.md", "tilde~dash-_.md"])
def test_the_read_path_is_encoded_as_one_uri_component(server, client, contract_fixture, name):
    path = f"encoding/{name}"
    contract_fixture.put(path, f"# Encoded {name}\n")
    response, requests = capture(contract_fixture, lambda: server.call_tool(TOOL, {"path": path}))
    read = one_read(requests, f"path {path!r}")
    check(read.path.startswith(NOTES_PREFIX), f"read {short(read.path)} is not under {NOTES_PREFIX}")
    segment = read.path[len(NOTES_PREFIX):]
    check("/" not in segment and encoded_component_ok(segment),
          f"{path!r} is not sent as encodeURIComponent(path): {short(segment)}")
    check(read_path(read) == path, f"{path!r} was read as {read_path(read)!r}")
    tool_output(response)


# --- the upstream request ------------------------------------------------------------

@pytest.mark.req("SSH-UP-001")
def test_a_valid_call_is_exactly_one_get_of_the_note(server, client, contract_fixture):
    for path in contract_fixture.notes[:8]:
        _, requests = capture(contract_fixture, lambda: server.call_tool(TOOL, {"path": path}))
        read = one_read(requests, path)
        check(read.method == "GET", f"{path}: upstream method {read.method}")
        check(read_path(read) == path, f"{path}: read {short(read.path)}")
        check(read.query == "" and read.body == b"", f"{path}: query or body sent upstream")


def _listed_one_note_tools(conn, profile, *, req: str | None = None) -> list[str]:
    req = own(req)
    names = tool_names(conn)
    check(TOOL in names, f"{TOOL} is not listed for this session (listed: {names})", req=req)
    return [t for t in [TOOL, *profile.adjacent_tools] if t in names]


@pytest.mark.req("SSH-UP-002")
def test_the_read_carries_the_sessions_token_vault_and_json_headers(server, client, contract_fixture, profile):
    fx = contract_fixture
    for tool in _listed_one_note_tools(server, profile):
        _, requests = capture(fx, lambda: server.call_tool(tool, {"path": "notes/alpha.md"}))
        headers = one_read(requests, tool).headers
        check(headers.get("authorization") == f"Bearer {fx.default_token}",
              f"{tool}: Authorization is not the session's bearer token")
        check(headers.get("x-vault-id") == fx.vault_id,
              f"{tool}: X-Vault-Id is {short(headers.get('x-vault-id'))}, not the session's vault")
        check("application/json" in headers.get("accept", ""), f"{tool}: Accept is {short(headers.get('accept'))}")
        check(headers.get("content-type", "").split(";")[0].strip() == "application/json",
              f"{tool}: Content-Type is {short(headers.get('content-type'))}")


@pytest.mark.req("SSH-UP-003")
def test_x_user_id_is_the_canister_user_else_the_user(server, client, servers, contract_fixture, profile):
    fx = contract_fixture
    for canister_user, expected in ((fx.canister_user, fx.canister_user), (None, fx.user)):
        conn = open_session(servers, server, fx, fx.token("viewer", canister_user=canister_user), req="SSH-UP-003")
        try:
            for tool in _listed_one_note_tools(conn, profile):
                _, requests = capture(fx, lambda: conn.call_tool(tool, {"path": "notes/alpha.md"}))
                got = one_read(requests, tool).headers.get("x-user-id")
                which = "with" if canister_user else "without"
                check(got == expected, f"{tool}, session {which} a canister user: X-User-Id is "
                      f"{'the actor user id' if got == fx.user else short(got)}, expected "
                      f"{'the canister user id' if canister_user else 'the user id'}")
        finally:
            conn.close()


@pytest.mark.req("SSH-UP-004")
def test_x_gateway_auth_is_the_configured_secret_and_absent_without_one(server, client, contract_fixture):
    fx = contract_fixture
    _, requests = capture(fx, lambda: server.call_tool(TOOL, {"path": "notes/alpha.md"}))
    got = one_read(requests, "configured").headers.get("x-gateway-auth")
    if fx.gateway_secret:
        check(got == fx.gateway_secret, "X-Gateway-Auth is not the configured secret"
              if got else "X-Gateway-Auth is missing although a gateway secret is configured")
    else:
        check(got is None, "X-Gateway-Auth sent although none is configured")


@pytest.mark.req("SSH-UP-004")
def test_a_server_without_a_gateway_secret_sends_no_x_gateway_auth(own_servers, contract_fixture):
    fx = contract_fixture
    bare = own_servers.start(fx, extra={"gateway_secret": ""})
    try:
        check("result" in bare.initialize(), "a server without a gateway secret did not initialize")
        _, requests = capture(fx, lambda: bare.call_tool(TOOL, {"path": "notes/alpha.md"}))
        headers = one_read(requests, "not configured").headers
        check("x-gateway-auth" not in headers, "X-Gateway-Auth sent although none is configured")
    finally:
        bare.close(timeout=3)


# --- output --------------------------------------------------------------------------

@pytest.mark.req("SSH-OUT-002")
@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_output_equals_the_golden_vector(client, profile, vector):
    out = tool_output(client.call_tool(TOOL, {"path": vector["path"]}))
    check_vector(out, vector, profile.output_validator(TOOL))


@pytest.mark.req("SSH-OUT-003")
@pytest.mark.parametrize("mode", ["normal", "foreign-path", "absolute-path"])
@pytest.mark.parametrize("variant,expected", [("notes/alpha.md", "notes/alpha.md"),
                                              (" notes\\\\alpha.md ", "notes/alpha.md")])
def test_the_output_path_is_the_normalized_request_path(server, client, contract_fixture, mode, variant, expected):
    fx = contract_fixture
    fx.upstream.respond_with(mode, for_path=expected)
    try:
        response = server.call_tool(TOOL, {"path": variant})
    finally:
        fx.upstream.respond_with("normal", for_path=expected)
    if mode != "normal" and failed(response):
        return  # failing closed on a suspicious payload also leaves the returned path unaffected
    out = tool_output(response)
    check(out["path"] == expected,
          f"canister mode {mode}: output path {short(out['path'])} is not the normalized request path")


# --- errors --------------------------------------------------------------------------

@pytest.mark.req("SSH-ERR-001")
def test_a_missing_note_is_an_upstream_error_envelope(server, client, contract_fixture, profile):
    response, requests = capture(contract_fixture, lambda: server.call_tool(TOOL, {"path": "inbox/missing-7f3a.md"}))
    one_read(requests, "missing note")
    structured_error(response, profile, "missing note")


@pytest.mark.req("SSH-ERR-002")
@pytest.mark.parametrize("mode", ["401", "403", "500", "timeout", "malformed-json", "html-200", "no-content-200",
                                  "raw-body-echo"])
def test_upstream_failures_are_sanitized_envelopes_and_the_server_keeps_answering(server, client, contract_fixture,
                                                                                   profile, mode):
    fx = contract_fixture
    path = "inbox/example.md"
    fx.upstream.respond_with(mode, for_path=path)
    try:
        response = server.call_tool(TOOL, {"path": path}, timeout=60)
    finally:
        fx.upstream.respond_with("normal", for_path=path)
    structured_error(response, profile, f"upstream {mode}")
    tool_output(server.call_tool(TOOL, {"path": path}))
