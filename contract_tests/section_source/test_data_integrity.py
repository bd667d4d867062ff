"""Data-integrity tier: nothing written anywhere, and no stale state."""

from __future__ import annotations

import pytest

from contract_tests.checks import check, tool_output
from contract_tests.harness.vault import build_fixture, snapshot, snapshot_diff
from contract_tests.harness.corpus import attack_path
from contract_tests.section_source.common import (TOOL, attacks, body_free_tools,
                                                   profiles_mark)

pytestmark = [profiles_mark, pytest.mark.data_integrity]


@pytest.fixture(scope="module")
def full_run(servers, client, profile, tmp_path_factory):
    """A private fixture and server, snapshotted around a full run of every tool on everything."""
    fixture = build_fixture(tmp_path_factory.mktemp("integrity"), profile.vectors(), profile.limits)
    home = servers.fresh_home()
    before_root, before_home = snapshot(fixture.root), snapshot(home)
    srv = servers.start(fixture, home=home)
    srv.initialize()
    tools = body_free_tools(client, profile)
    paths = fixture.notes + list(fixture.stress.values())
    paths += [attack_path(e, fixture.placeholders()) for e in attacks()["paths"]]
    for name in tools:
        for path in paths:
            srv.call_tool(name, {"path": path}, timeout=60)
        for entry in attacks()["arguments"]:
            srv.call_tool(name, entry["arguments"])
    code = srv.close(timeout=5)
    return {"root": (before_root, snapshot(fixture.root)), "home": (before_home, snapshot(home)),
            "exit": code, "fixture": fixture}


@pytest.mark.req("SSL-DI-001")
def test_a_full_run_leaves_the_vault_and_its_surroundings_unchanged(full_run):
    changes = snapshot_diff(*full_run["root"])
    check(not changes, "SSL-DI-001", f"{len(changes)} change(s) in or beside the vault: {changes[:5]}")


@pytest.mark.req("SSL-DI-002")
def test_the_server_writes_nothing_in_its_home_xdg_or_temp_directories(full_run):
    changes = snapshot_diff(*full_run["home"])
    check(not changes, "SSL-DI-002", f"{len(changes)} file(s) written in HOME/XDG/TMPDIR: {changes[:5]}")


@pytest.mark.req("SSL-DI-003")
def test_an_edit_between_two_calls_shows_in_the_second(client, fixture_vault):
    path = "di/edited-note.md"
    fixture_vault.write(path, "# Before\n\ntext\n", note=False)
    first = tool_output(client.call_tool(TOOL, {"path": path}), "SSL-DI-003")
    fixture_vault.write(path, "# After\n\ntext\n\n## Added\n", note=False)
    second = tool_output(client.call_tool(TOOL, {"path": path}), "SSL-DI-003")
    check([s["heading_text"] for s in first["sections"]] == ["Before"], "SSL-DI-003", "first call is off")
    check([s["heading_text"] for s in second["sections"]] == ["After", "Added"], "SSL-DI-003",
          "the second call does not reflect the edited note (stale cache?)")
