"""Stress tier: caps on large notes, repeated calls, and many concurrent sessions (phase 1L)."""

from __future__ import annotations

import secrets
import threading

import pytest

from contract_tests.section_source_hosted.common import TOOL, capture, profiles_mark, read_path
from contract_tests.verdicts.checks import check, short, structured_error, tool_output

pytestmark = [profiles_mark, pytest.mark.stress]


@pytest.mark.req("SSH-STR-001")
def test_large_notes_stay_capped(server, client, contract_fixture, profile):
    fx = contract_fixture
    limits = profile.limits
    tool_output(server.call_tool(TOOL, {"path": fx.stress["cap_exact"]}, timeout=120))
    structured_error(server.call_tool(TOOL, {"path": fx.stress["cap_over"]}, timeout=120), profile,
                     "a note over the input cap")
    out = tool_output(server.call_tool(TOOL, {"path": fx.stress["many_headings"]}, timeout=120))
    check(len(out["sections"]) == limits["max_sections"] and out["truncated"] is True,
          f"{len(out['sections'])} sections, truncated {out['truncated']} for a note over the section cap")


@pytest.mark.req("SSH-STR-003")
def test_concurrent_sessions_of_different_users_and_vaults_stay_isolated(server, client, servers, contract_fixture,
                                                                         profile):
    fx = contract_fixture
    count = int(profile.limits["concurrent_sessions"])
    path = "shared/same-path.md"
    sessions = []
    for i in range(count):
        tag = f"rciso{i:02d}x{secrets.token_hex(4)}"
        vault, user = f"vault-iso-{i:02d}-{secrets.token_hex(3)}", f"user-iso-{i:02d}"
        canister_user = f"cu-iso-{i:02d}" if i % 2 == 0 else None
        fx.put(path, f"# Title {tag}\n\n## Section {tag}\n\nbody {fx.canaries['body']}\n", vault_id=vault)
        sessions.append({"tag": tag, "vault": vault, "user": canister_user or user,
                         "token": fx.token("viewer", user=user, vault_id=vault, canister_user=canister_user)})
    conns = [servers.session(server, fx, s["token"]) for s in sessions]
    problems: list[str] = []
    barrier = threading.Barrier(count)

    def run(i: int) -> None:
        conn, me = conns[i], sessions[i]
        try:
            if "result" not in conn.initialize():
                problems.append(f"session {i}: initialize failed")
                return
            barrier.wait(timeout=30)
            for _ in range(3):
                out = tool_output(conn.call_tool(TOOL, {"path": path}, timeout=60), req="SSH-STR-003")
                titles = [s["heading_text"] for s in out["sections"]]
                if len(titles) != 2 or not all(me["tag"] in t for t in titles):
                    others = [s["tag"] for s in sessions if s is not me and any(s["tag"] in t for t in titles)]
                    problems.append(f"session {i} got another session's output ({len(others)} foreign tags)")
        except BaseException as exc:  # noqa: BLE001 - collected and reported below
            problems.append(f"session {i}: {type(exc).__name__}: {short(str(exc), 120)}")

    _, requests = capture(fx, lambda: _run_all(run, count))
    for conn in conns:
        conn.close()
    check(not problems, f"{len(problems)} problem(s): {problems[:3]}")
    by_vault = {s["vault"]: s for s in sessions}
    reads = [r for r in requests if read_path(r) == path]
    check(len(reads) == 3 * count, f"{len(reads)} upstream reads for {3 * count} calls")
    for r in reads:
        me = by_vault.get(r.headers.get("x-vault-id"))
        check(me is not None, "an upstream read carried a vault id no session has")
        check(r.headers.get("x-user-id") == me["user"], "an upstream read carried another session's user id")
        check(r.headers.get("authorization") == f"Bearer {me['token']}",
              "an upstream read carried another session's token")


def _run_all(run, count: int) -> None:
    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
