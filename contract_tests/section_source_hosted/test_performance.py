"""Performance tier: one note read per call whatever the vault's size; no other connections."""

from __future__ import annotations

import pytest

from contract_tests.section_source_hosted.common import ROLES, TOOL, capture, profiles_mark, read_path
from contract_tests.verdicts.checks import check

pytestmark = [profiles_mark, pytest.mark.performance]
BIG_VAULT_NOTES = 2000


@pytest.mark.req("SSH-UP-006")
def test_every_upstream_request_is_one_note_read_however_big_the_vault(server, client, servers, contract_fixture,
                                                                       suite):
    fx = contract_fixture
    for i in range(BIG_VAULT_NOTES):
        fx.put(f"bulk/n{i:05d}.md", f"# Bulk {i}\n")
    paths = [f"bulk/n{i:05d}.md" for i in range(0, BIG_VAULT_NOTES, 100)] + fx.notes[:5]

    def flow():
        for role in ROLES:
            conn = servers.session(server, fx, fx.token(role))
            try:
                conn.initialize()
                for path in paths:
                    conn.call_tool(TOOL, {"path": path})
            finally:
                conn.close()

    _, requests = capture(fx, flow)
    others = sorted({f"{r.method} {r.path[:50]}" for r in requests if read_path(r) is None})
    check(not others, f"requests other than one-note reads: {others[:4]}")
    if suite.phase == "1L":
        check(len(requests) == len(paths) * len(ROLES),
              f"{len(paths) * len(ROLES)} calls made {len(requests)} upstream requests, not one each")
    else:
        check(not requests, f"phase {suite.phase}: {len(requests)} upstream requests")


