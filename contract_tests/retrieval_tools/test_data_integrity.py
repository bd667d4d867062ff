"""Data-integrity tier: read-only roots and results that reflect the files on disk."""

from __future__ import annotations

import pytest

from contract_tests.checks import check
from contract_tests.harness.roots import NEEDLE_COMMON, REPOS, build_roots
from contract_tests.harness.vault import snapshot, snapshot_diff
from contract_tests.retrieval_tools.common import FILE_TOOLS, attacks, file_args, ok, profiles_mark
from contract_tests.harness.corpus import attack_path

pytestmark = [profiles_mark, pytest.mark.data_integrity]


@pytest.mark.req("RT-RO-001")
def test_a_full_run_leaves_the_roots_and_the_server_home_unchanged(servers, tmp_path_factory):
    fixture = build_roots(tmp_path_factory.mktemp("ro"))
    home = servers.fresh_home()
    before = (snapshot(fixture.root), snapshot(home))
    srv = servers.start(fixture, home=home)
    try:
        srv.initialize()
        for repo in ("docs", "code", "both"):
            srv.call_tool("search", {"query": NEEDLE_COMMON, "repo": repo})
        for spec in fixture.files:
            for tool in FILE_TOOLS:
                srv.call_tool(tool, file_args(tool, spec.repo, spec.path))
        for repo in REPOS:
            for entry in attacks()["paths"][:60]:
                path = attack_path(entry, {"vault": str(fixture.repo_root(repo)), "root": str(fixture.root)})
                srv.call_tool("open_file", {"repo": repo, "path": path})
    finally:
        srv.close(timeout=5)
    changes = snapshot_diff(before[0], snapshot(fixture.root)) + snapshot_diff(before[1], snapshot(home))
    check(not changes, "RT-RO-001", f"{len(changes)} change(s) on disk: {changes[:5]}")


@pytest.mark.req("RT-SRCH-007")
def test_an_edit_between_two_searches_shows_in_the_second(server, client, fixture_roots):
    target = fixture_roots.repo_root("docs") / "edited-during-run.md"
    try:
        target.write_text("before only\n")
        first = ok(server.call_tool("search", {"query": "rc-edit-marker", "repo": "docs"}), "RT-SRCH-007", "search")
        target.write_text("now with rc-edit-marker\n")
        second = ok(server.call_tool("search", {"query": "rc-edit-marker", "repo": "docs"}), "RT-SRCH-007", "search")
    finally:
        target.unlink(missing_ok=True)
    check(first["result"]["matches"] == [], "RT-SRCH-007", "the marker matched before it was written")
    paths = [m["path"] for m in second["result"]["matches"]]
    check(paths == ["edited-during-run.md"], "RT-SRCH-007", f"after the edit: {paths}")
