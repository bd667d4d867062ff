"""Data-integrity tier: the canister is only read, nothing is kept between calls, no files."""

from __future__ import annotations

import pytest

from contract_tests.checks import check, envelope, tool_output
from contract_tests.harness.corpus import attack_path
from contract_tests.harness.vault import snapshot, snapshot_diff
from contract_tests.section_source.common import attacks
from contract_tests.section_source_hosted.common import ROLES, TOOL, UNKNOWN_ROLES, capture, profiles_mark

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
    check(not writes, "SSH-DI-001", f"requests other than GET reached the canister: {writes[:4]}")


@pytest.mark.req("SSH-DI-002")
def test_nothing_is_kept_between_calls(server, client, contract_fixture, profile):
    fx = contract_fixture
    path = "stale/edited.md"
    fx.put(path, "# Before\n\n## Old section\n")
    first = tool_output(server.call_tool(TOOL, {"path": path}), "SSH-DI-002")
    fx.put(path, "# After\n\n## New section\n\n### Deeper\n")
    second = tool_output(server.call_tool(TOOL, {"path": path}), "SSH-DI-002")
    check([s["heading_text"] for s in first["sections"]] == ["Before", "Old section"], "SSH-DI-002",
          "the first call does not show the note as served")
    check([s["heading_text"] for s in second["sections"]] == ["After", "New section", "Deeper"], "SSH-DI-002",
          "an upstream edit does not show in the next call (output kept between calls)")
    fx.upstream.respond_with("404", for_path=path)
    try:
        envelope(server.call_tool(TOOL, {"path": path}), profile.error_validator(), "SSH-DI-002",
                 "a note deleted upstream")
    finally:
        fx.upstream.respond_with("normal", for_path=path)


@pytest.mark.req("SSH-DI-003")
def test_the_server_writes_no_file_in_its_home_or_temp_dirs(servers, contract_fixture, profile):
    if not servers.can_restart:
        pytest.skip("the suite did not start the server (--server-url)")
    home = servers.fresh_home()
    srv = servers.start(contract_fixture, home=home)
    try:
        check("result" in srv.initialize(), "SSH-DI-003", "no session")
        before = snapshot(home)  # after start-up: a runtime's own start-up files are not the tool's
        _session_flow(servers, srv, contract_fixture, profile)
    finally:
        srv.close(timeout=3)
    changed = snapshot_diff(before, snapshot(home))
    check(not changed, "SSH-DI-003", f"the server wrote files: {changed[:5]}")
