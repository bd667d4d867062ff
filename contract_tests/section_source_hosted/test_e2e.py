"""End-to-end tier: a real MCP client with a bearer token; every flow; the 1K planning phase."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import anyio
import pytest

from contract_tests.base.test_protocol import MODERN_META
from contract_tests.section_source_hosted.common import (
    ROLES,
    TOOL,
    UNKNOWN_ROLES,
    acl,
    capture,
    explicit_cells,
    failed,
    open_session,
    profiles_mark,
    tool_names,
)
from contract_tests.synthetic import canaries
from contract_tests.verdicts.checks import check, fail, schema_errors, short, tool_output
from contract_tests.verdicts.findings import Finding, Findings, describe_call

pytestmark = [profiles_mark, pytest.mark.e2e]
ALL_ROLES = [*ROLES, *UNKNOWN_ROLES[:1]]


async def _official_client_flow(url: str, token: str) -> tuple[list[str], dict]:
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                result = await session.call_tool(TOOL, {"path": "notes/alpha.md"})
                return [t.name for t in listed.tools], result.model_dump(by_alias=True, mode="json")


@pytest.mark.req("SSH-E2E-001")
def test_the_official_client_with_a_bearer_token_gets_one_body_free_response(server, client, contract_fixture,
                                                                              profile):
    try:
        names, result = anyio.run(_official_client_flow, server.url, contract_fixture.default_token)
    except Exception as exc:  # noqa: BLE001 - the client's own failure is the finding
        fail(f"the official MCP client failed: {type(exc).__name__}: {short(str(exc))}")
    check(TOOL in names, f"{TOOL} not listed to the official client: {names}")
    out = tool_output({"jsonrpc": "2.0", "result": result})
    errors = schema_errors(profile.output_validator(TOOL), out)
    check(not errors, f"output violates the allowlist: {errors[:3]}")
    check(len(out["sections"]) >= 3, f"expected the note's sections, got {len(out['sections'])}")


@pytest.mark.req("SSH-E2E-002")
def test_no_flow_returns_bodies_snippets_frontmatter_or_uris(server, client, servers, contract_fixture, profile):
    """get_section_source on every fixture note, for every role (the roles' sessions side by
    side), in both protocol eras; every result and error scanned (the adjacent tools' output is
    not this seed's to govern)."""
    fx = contract_fixture
    validator = profile.output_validator(TOOL)
    conns = [(role, open_session(servers, server, fx, fx.token(role), req="SSH-E2E-002",
                                 may_refuse=role not in ROLES)) for role in ALL_ROLES]
    conns = [(role, conn) for role, conn in conns if conn is not None]  # unknown roles may be refused

    def flow(role, conn) -> list[Finding]:
        findings = Findings()
        mark = conn.transcript.mark()
        try:
            modern = "result" in conn.request("server/discover", {"_meta": MODERN_META})
            for path in fx.notes:
                response = conn.call_tool(TOOL, {"path": path})
                if not failed(response):
                    errors = schema_errors(validator, tool_output(response))
                    findings.check(not errors, f"role {role}: {errors[:2]}",
                                   request=describe_call(TOOL, {"path": path}))
                if modern:
                    conn.request("tools/call", {"name": TOOL, "arguments": {"path": path}, "_meta": MODERN_META})
        finally:
            conn.close()
        stdout = conn.transcript.since(mark)[0]
        leaks = canaries.scan_lines(stdout, fx.canaries, "stdout", ("body", "code", "frontmatter", "upstream"))
        findings.check(not leaks, f"role {role}: a flow returned private content: "
                       f"{leaks[0] if leaks else ''}")
        uris = [line for line in stdout if "://" in line and '"uri"' in line]
        findings.check(not uris, f"role {role}: a flow returned a resource URI")
        return findings.items

    with ThreadPoolExecutor(max_workers=len(conns) or 1) as pool:
        found = [f for items in pool.map(lambda rc: flow(*rc), conns) for f in items]
    with Findings() as findings:
        findings.items.extend(found)


def _denials(what: str, req: str):
    """Matrix cells that deny a role a tool; with the unknown role and a token without one."""
    out = []
    for phase, role, tool, cell in explicit_cells():
        if cell[what]:
            continue
        for who in (role, *([UNKNOWN_ROLES[0], None] if role == acl()["unknown_role_falls_back_to"] else [])):
            out.append(pytest.param(phase, who, tool, marks=pytest.mark.req(req),
                                    id=f"{phase}-{who or 'no-role-claim'}-{tool}"))
    return out


@pytest.mark.parametrize("phase,role,tool", _denials("list", "SSH-ACL-003"))
def test_a_denied_role_does_not_list_the_tool(server, client, servers, contract_fixture, suite, phase, role, tool):
    assert phase == suite.phase, f"matrix cell of phase {phase} cites a requirement of phase {suite.phase}"
    conn = open_session(servers, server, contract_fixture, contract_fixture.token(role), req="SSH-ACL-003",
                        may_refuse=role not in ROLES)
    if conn is None:
        return  # an unknown role's session was refused: nothing listed
    try:
        names = tool_names(conn)
    finally:
        conn.close()
    check(tool not in names, f"phase {phase}: role {role!r} lists {tool}")


@pytest.mark.parametrize("phase,role,tool", _denials("call", "SSH-ACL-004"))
def test_a_denied_role_cannot_call_the_tool(server, client, servers, contract_fixture, suite, phase, role, tool):
    assert phase == suite.phase, f"matrix cell of phase {phase} cites a requirement of phase {suite.phase}"
    fx = contract_fixture
    conn = open_session(servers, server, fx, fx.token(role), req="SSH-ACL-004", may_refuse=role not in ROLES)
    if conn is None:
        return  # an unknown role's session was refused: nothing callable
    try:
        response, requests = capture(fx, lambda: conn.call_tool(tool, {"path": "notes/alpha.md"}))
        modern, more = capture(fx, lambda: conn.request(
            "tools/call", {"name": tool, "arguments": {"path": "notes/alpha.md"}, "_meta": MODERN_META}))
    finally:
        conn.close()
    check(failed(response), f"phase {phase}: role {role!r} called {tool}")
    check("result" not in modern or modern["result"].get("isError") is True,
          f"phase {phase}: role {role!r} called {tool} in the stateless era")
    check(not requests and not more, f"phase {phase}: a {tool} call reached the canister")
