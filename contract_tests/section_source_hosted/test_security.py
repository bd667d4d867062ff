"""Security tier: bad tokens, unknown roles, hidden surfaces, input and path rules, leaks, logs."""

from __future__ import annotations

import re

import httpx
import pytest
from hypothesis import HealthCheck, settings

from contract_tests.section_source.common import attacks, forbidden
from contract_tests.section_source_hosted.common import (
    TOOL,
    UNKNOWN_ROLES,
    blocked,
    capture,
    error_message,
    failed,
    http_refusal,
    no_probe_in,
    one_read,
    open_session,
    profiles_mark,
    seed_normalize,
    tool_names,
)
from contract_tests.synthetic import canaries
from contract_tests.synthetic.corpus import attack_path, no_echo_probes
from contract_tests.transport.http import MCP_HEADERS
from contract_tests.transport.stdio import initialize_message  # in the version the run negotiated
from contract_tests.verdicts.checks import check, error_texts, keys_of, schema_errors, short, tool_output
from contract_tests.verdicts.findings import Findings
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark, pytest.mark.security]

FUZZ = settings(max_examples=80, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
BAD_TOKENS = ("malformed", "wrong_signature", "unsigned", "expired", "not-a-jwt", "empty")


def _bad_token(fx, kind: str) -> str:
    from contract_tests.synthetic import tokens
    if kind == "malformed":
        return tokens.malformed()
    if kind == "not-a-jwt":
        return "rc-not-a-jwt-token"
    if kind == "empty":
        return ""
    return fx.token("admin", kind=kind)


# --- sessions ------------------------------------------------------------------------

@pytest.mark.req("SSH-AUTH-002", "SSH-AUTH-003")
@pytest.mark.parametrize("kind", BAD_TOKENS)
def test_a_bad_token_is_refused_on_initialize_and_on_a_session(server, client, contract_fixture, kind):
    """Any refusal conforms (an HTTP 4xx, or a JSON-RPC error); 401 or 403 is the advisory's."""
    fx = contract_fixture
    token = _bad_token(fx, kind)
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}".rstrip()}
    response = httpx.post(server.url, json=initialize_message(request_id="rc-auth-1"), headers=headers, timeout=15)
    session = {**server.headers({"method": "tools/list"}), "Authorization": f"Bearer {token}".rstrip()}
    listed = httpx.post(server.url, json={"jsonrpc": "2.0", "id": "rc-auth-3", "method": "tools/list", "params": {}},
                        headers=session, timeout=15)
    with Findings() as findings:
        refused = []
        for what, answer, found in (("initialize", response, '"result"'), ("tools/list", listed, '"tools"')):
            ok, seen = http_refusal(answer)
            findings.check(ok, f"{kind} token: {what} was not refused: {seen}", req="SSH-AUTH-002")
            findings.check(found not in answer.text, f"{kind} token: {what} got an answer", req="SSH-AUTH-002")
            if ok:
                refused.append((what, answer.status_code))
        if refused:  # the status is judged on the refusals there were
            odd = [f"{what}: HTTP {status}" for what, status in refused if status not in (401, 403)]
            findings.check(not odd, f"{kind} token was refused, but not with HTTP 401 or 403: {odd}",
                           req="SSH-AUTH-003")
        else:
            findings.block(f"{kind} token: nothing was refused", req="SSH-AUTH-003", by="SSH-AUTH-002")


# --- ACL -----------------------------------------------------------------------------

def _listing(servers, server, fx, token, *, req: str | None = None, may_refuse=False):
    """(listed tool names, open session); (set(), None) if an unknown role's session was refused."""
    req = own(req)
    conn = open_session(servers, server, fx, token, req=req, may_refuse=may_refuse)
    if conn is None:
        return set(), None
    try:
        return set(tool_names(conn)), conn
    except Exception:
        conn.close()
        raise


@pytest.mark.req("SSH-ACL-002")
@pytest.mark.parametrize("role", [*UNKNOWN_ROLES, None], ids=[*UNKNOWN_ROLES, "no-role-claim"])
def test_an_unknown_role_never_gets_more_than_viewer(server, client, servers, contract_fixture, profile, suite, role):
    fx = contract_fixture
    viewer, vconn = _listing(servers, server, fx, fx.token("viewer"), req="SSH-ACL-002")
    vconn.close()
    names, conn = _listing(servers, server, fx, fx.token(role), req="SSH-ACL-002", may_refuse=True)
    if conn is None:
        return  # the session was refused: nothing granted
    try:
        extra = sorted(names - viewer)
        check(not extra, f"role {role!r} lists tools viewer does not: {extra}", req="SSH-ACL-002")
        probes = ({TOOL, *profile.adjacent_tools} | set(blocked()["tools"]["section_surfaces"]["names"][:4])) - viewer
        for tool in sorted(probes):
            response, requests = capture(fx, lambda: conn.call_tool(tool, {"path": "notes/alpha.md"}))
            check(failed(response), f"role {role!r} called {tool}, which viewer cannot, in {suite.phase}",
                  req="SSH-ACL-002")
            check(not requests, f"role {role!r}: a call viewer cannot make reached the canister", req="SSH-ACL-002")
    finally:
        conn.close()


# --- input and paths (1L) -------------------------------------------------------------

HOSTED_ARGUMENTS = [
    {"path": "notes/alpha.md", "vault_id": "vault-other"}, {"path": "notes/alpha.md", "vaultId": "vault-other"},
    {"path": "notes/alpha.md", "user_id": "someone"}, {"path": "notes/alpha.md", "userId": "someone"},
    {"path": "notes/alpha.md", "canister_user_id": "someone"}, {"path": "notes/alpha.md", "role": "admin"},
    {"path": "notes/alpha.md", "line_range": [1, 3]}, {"path": "notes/alpha.md", "byte_offset": 0},
    {"path": "notes/alpha.md", "provider": "openai"}, {"path": "notes/alpha.md", "resource": "note://x"},
]


def _argument_params():
    out = [pytest.param(e["arguments"], id=e["id"]) for e in attacks()["arguments"]]
    out += [pytest.param(a, id="hosted-" + "-".join(k for k in a if k != "path")) for a in HOSTED_ARGUMENTS]
    return out


@pytest.mark.req("SSH-IN-002")
@pytest.mark.parametrize("arguments", _argument_params())
def test_extra_or_malformed_arguments_fail(server, client, contract_fixture, arguments):
    error_texts(server.call_tool(TOOL, arguments), f"arguments {short(arguments)}")


# --- upstream request -----------------------------------------------------------------

OPTION_HEADER = re.compile(r"section|snippet|provider|scooling|search|filter|rank|line|byte|offset|resource|uri|"
                           r"summary|vector|^range$", re.IGNORECASE)
SEED_HEADERS = {"authorization", "x-vault-id", "x-user-id", "x-gateway-auth", "accept", "content-type"}


@pytest.mark.req("SSH-UP-005")
def test_no_section_provider_or_range_option_is_forwarded(server, client, contract_fixture):
    for path in contract_fixture.notes[:6]:
        _, requests = capture(contract_fixture, lambda: server.call_tool(TOOL, {"path": path}))
        read = one_read(requests, path)
        check(read.query == "", f"{path}: a query string was forwarded: {short(read.query)}")
        check(read.body == b"", f"{path}: a request body was forwarded ({len(read.body)} bytes)")
        named = sorted(h for h in read.headers if h not in SEED_HEADERS and OPTION_HEADER.search(h))
        check(not named, f"{path}: option headers forwarded upstream: {named}")
        carried = sorted(h for h, v in read.headers.items() if h not in SEED_HEADERS and path in v)
        check(not carried, f"{path}: headers repeat the request's arguments: {carried}")


# --- output and errors ----------------------------------------------------------------

@pytest.mark.req("SSH-OUT-004")
def test_no_excluded_field_appears_in_any_result(client, contract_fixture, profile):
    banned = set(forbidden()["forbidden_keys"])
    for path in contract_fixture.notes:
        out = tool_output(client.call_tool(TOOL, {"path": path}))
        keys = keys_of(out) & banned
        check(not keys, f"{path}: excluded fields {sorted(keys)}")
        errors = schema_errors(profile.output_validator(TOOL), out)
        check(not errors, f"{path}: output violates the allowlist: {errors[:2]}")


@pytest.mark.req("SSH-ERR-003")
@pytest.mark.parametrize("mode", ["404", "401", "403", "500", "malformed-json", "raw-body-echo",
                                  "foreign-path", "absolute-path"])
def test_no_upstream_body_header_or_payload_path_comes_back(server, client, contract_fixture, mode):
    fx = contract_fixture
    path = "notes/alpha.md"
    fx.upstream.respond_with(mode, for_path=path)
    try:
        response = server.call_tool(TOOL, {"path": path})
    finally:
        fx.upstream.respond_with("normal", for_path=path)
    probes = {"upstream payload marker": fx.canaries["upstream"], "bearer token": fx.default_token,
              "gateway secret": fx.gateway_secret, "note body": fx.canaries["body"],
              "frontmatter value": fx.canaries["frontmatter"], "upstream header dump": "x-vault-id:"}
    no_probe_in(response, probes, f"upstream {mode}")


@pytest.mark.req("SSH-ERR-005")
def test_a_failed_read_names_no_heading_of_its_note(server, client, contract_fixture):
    """A note over the input cap whose headings no successful response ever showed: its error
    carries neither their text nor a heading path built from them."""
    from contract_tests.verdicts.findings import blocked as blocked_by
    fx = contract_fixture
    response = server.call_tool(TOOL, {"path": fx.stress["cap_over_headings"]}, timeout=120)
    if not failed(response):
        raise blocked_by("the note over the input cap was answered, so its headings were authorized",
                         by="SSH-STR-001")
    no_probe_in(response, {"heading text of the refused note": fx.canaries["capheading"]}, "a note over the input cap")


@pytest.mark.req("SSH-ERR-004")
def test_another_vaults_or_users_note_fails_like_a_missing_one(server, client, contract_fixture):
    """The other user's note is readable with the actor's id: a session with a canister user must
    send that one instead, and then fail as for any missing note."""
    fx = contract_fixture
    outcomes = {}
    for name, path in (("nowhere", "private/nowhere-7f3a.md"), ("other vault", fx.other_vault_only),
                       ("other user", fx.other_user_only)):
        response = server.call_tool(TOOL, {"path": path})
        check(failed(response), f"a note of {name} was readable in this session")
        message = error_message(response)
        if message is None:
            message = "jsonrpc:" + str((response.get("error") or {}).get("message"))
        outcomes[name] = message.replace(path, "<P>")
    check(len(set(outcomes.values())) == 1,
          f"the error tells a note of another vault or user apart from a missing one: {outcomes}")


# --- leaks and logs -------------------------------------------------------------------

EXERCISED_ATTACKS = 60


def _exercise(conn, fx):
    """Every note, the failure modes and some attacks, so canaries get every chance to leak."""
    for path in fx.notes:
        conn.call_tool(TOOL, {"path": path})
    for mode in ("404", "401", "500", "malformed-json", "raw-body-echo", "foreign-path", "absolute-path"):
        fx.upstream.respond_with(mode, for_path="inbox/example.md")
        try:
            conn.call_tool(TOOL, {"path": "inbox/example.md"})
        finally:
            fx.upstream.respond_with("normal", for_path="inbox/example.md")
    for entry in attacks()["paths"][:EXERCISED_ATTACKS]:
        conn.call_tool(TOOL, {"path": attack_path(entry, fx.corpus_placeholders())})
    conn.call_tool(TOOL, {"path": fx.other_vault_only})


# Secrets in any output are the shared leak concern's (SSH-SEC-003); these classes are checked
# in get_section_source's answers only, after the double's failure modes too.
SWEEP = {"SSH-SEC-001": ("body", "code", "frontmatter"), "SSH-SEC-002": ("path", "outside")}


@pytest.mark.parametrize("req", [pytest.param(r, marks=pytest.mark.req(r), id=r) for r in SWEEP])
def test_no_private_content_secret_or_path_in_any_output(server, client, contract_fixture, req):
    fx = contract_fixture
    mark = server.transcript.mark()
    _exercise(server, fx)
    stdout = server.transcript.since(mark)[0]
    leaks = canaries.scan_lines(stdout, fx.canaries, "stdout", SWEEP[req])
    check(not leaks, f"output leaked: {leaks[0] if leaks else ''}", req=req)


LOG_EXCLUSIONS = {
    "SSH-LOG-001": ("body", "code", "frontmatter", "path", "outside", "upstream", "bearer", "jwtsecret", "gateway",
                    "heading", "title"),
    "SSH-LOG-002": ("notepath", "vaultid", "userid", "canisteruser"),
}


@pytest.mark.parametrize("req", [pytest.param(r, marks=pytest.mark.req(r), id=r) for r in LOG_EXCLUSIONS])
def test_logs_carry_none_of_the_seeds_exclusions(own_servers, contract_fixture, req):
    fx = contract_fixture
    srv = own_servers.start(fx)
    try:
        check("result" in srv.initialize(), "no session", req="SSH-LOG-001")
        _exercise(srv, fx)
    finally:
        srv.close(timeout=3)
    leaks = canaries.scan_lines(srv.transcript.stderr, fx.canaries, "stderr", LOG_EXCLUSIONS[req])
    check(not leaks, f"a log line leaked: {leaks[0] if leaks else ''}", req=req)
    if req == "SSH-LOG-001":  # requested unsafe paths, also those without a canary in them
        log = "\n".join(srv.transcript.stderr)
        for entry in attacks()["paths"][:EXERCISED_ATTACKS]:
            path = attack_path(entry, fx.corpus_placeholders())
            if seed_normalize(path)[0]:
                echoed = [p for p in no_echo_probes(entry, path) if len(p) >= 6 and p in log]
                check(not echoed, f"a log line carries the unsafe path of attack {entry['id']}", req=req)


