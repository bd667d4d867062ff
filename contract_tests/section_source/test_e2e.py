"""End-to-end tier: a real client session over stdio, every flow, both protocol eras."""

from __future__ import annotations

import pytest

from contract_tests.base.test_protocol import MODERN_META
from contract_tests.section_source.common import TOOL, body_free_tools, profiles_mark
from contract_tests.synthetic import canaries
from contract_tests.verdicts.checks import check, schema_errors, tool_output

pytestmark = [profiles_mark, pytest.mark.e2e]
BODY_CLASSES = ("body", "code")


@pytest.mark.req("SSL-E2E-001")
def test_a_client_lists_the_tool_and_gets_one_notes_body_free_section_candidates(client, profile):
    names = [t["name"] for t in client.list_tools()]
    check(TOOL in names, f"{TOOL} not listed")
    out = tool_output(client.call_tool(TOOL, {"path": "notes/alpha.md"}))
    errors = schema_errors(profile.output_validator(TOOL), out)
    check(not errors, f"output violates the allowlist: {errors[:3]}")
    check(len(out["sections"]) >= 3, f"expected the note's sections, got {len(out['sections'])}")


@pytest.mark.req("SSL-E2E-002")
def test_no_flow_returns_section_bodies_or_snippets(servers, fixture_vault, client, profile):
    """Every body-free tool on every fixture note, in the handshake era and (if supported) the stateless one."""
    tools = body_free_tools(client, profile)
    modern = servers.start(fixture_vault)
    try:
        discover = modern.request("server/discover", {"_meta": MODERN_META})
        modern_ok = "result" in discover
        for name in tools:
            for path in fixture_vault.notes:
                client.call_tool(name, {"path": path})
                if modern_ok:
                    modern.request("tools/call", {"name": name, "arguments": {"path": path}, "_meta": MODERN_META})
        lines = list(client.server.transcript.stdout) + list(modern.transcript.stdout)
    finally:
        modern.close(timeout=3)
    leaks = canaries.scan_lines(lines, fixture_vault.canaries, "stdout", BODY_CLASSES)
    check(not leaks, f"a flow returned body text: {leaks[0] if leaks else ''}")
