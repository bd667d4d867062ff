"""Data-integrity tier: the canister is only read, nothing is kept between calls, no files."""

from __future__ import annotations

import pytest

from contract_tests.section_source.common import attacks
from contract_tests.section_source_hosted.common import ROLES, TOOL, UNKNOWN_ROLES, capture, profiles_mark
from contract_tests.synthetic.corpus import attack_path
from contract_tests.verdicts.checks import check, structured_error, tool_output

pytestmark = [profiles_mark, pytest.mark.data_integrity]


def _session_flow(servers, server, fx, profile):
    """The profile's tools (only those: the gateway's others may write) on notes, missing notes
    and attacks, plus protocol requests around them, for every role."""
    for role in [*ROLES, UNKNOWN_ROLES[0]]:
        conn = servers.session(server, fx, fx.token(role))
        try:
            conn.initialize()
            for name in (TOOL, *profile.adjacent_tools):
                for path in fx.notes[:4] + ["inbox/missing-7f3a.md"]:
                    conn.call_tool(name, {"path": path})
            for entry in attacks()["paths"][:20]:
                conn.call_tool(TOOL, {"path": attack_path(entry, fx.corpus_placeholders())})
            conn.request("resources/list", {})
            conn.request("prompts/list", {})
        finally:
            conn.close()


@pytest.mark.req("SSH-DI-001")
def test_only_gets_ever_reach_the_canister(server, client, servers, contract_fixture, profile):
    _, requests = capture(contract_fixture, lambda: _session_flow(servers, server, contract_fixture, profile))
    writes = sorted({f"{r.method} {r.path[:40]}" for r in requests if r.method != "GET"})
    check(not writes, f"requests other than GET reached the canister: {writes[:4]}")


@pytest.mark.req("SSH-DI-002")
def test_a_note_deleted_upstream_is_not_served_from_memory(server, client, contract_fixture, profile):
    """(Edits showing in the next call: the shared edit concern.)"""
    fx = contract_fixture
    path = "stale/deleted.md"
    fx.put(path, "# Before\n\n## Old section\n")
    tool_output(server.call_tool(TOOL, {"path": path}))
    fx.upstream.respond_with("404", for_path=path)
    try:
        structured_error(server.call_tool(TOOL, {"path": path}), profile, "a note deleted upstream")
    finally:
        fx.upstream.respond_with("normal", for_path=path)


