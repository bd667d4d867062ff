"""vault-agent timing: only the budget the documents state (a 60-second tool timeout): an
answer within it is conforming, however slow."""

from __future__ import annotations

import time

import pytest

from contract_tests.vault_agent.common import profiles_mark
from contract_tests.verdicts.checks import short
from contract_tests.verdicts.findings import Findings, describe_call

pytestmark = profiles_mark


@pytest.mark.performance
@pytest.mark.req("VA-PERF-001")
def test_every_tool_answers_within_the_sixty_second_timeout(server, client, names, ids, profile):
    budget = profile.limits["tool_timeout_s"]
    note = ids.note("alpha")
    calls = [("search", {"query": "tokalpha lantern meadow"}), ("search", {"query": "tokbeta", "mode": "hybrid"}),
             ("related", {"type": "note", "id": note}), ("get_note", {"noteId": note}),
             ("get_chunk", {"noteId": note, "chunkIndex": 0}),
             ("get_attachment", {"vaultRelativePath": "attachments/pic.png"}),
             ("get_attachment", {"vaultRelativePath": "attachments/four.bin", "download": True})]
    with Findings() as findings:
        for tool, args in calls:
            args = names.args(tool, args)
            started = time.monotonic()
            response = server.call_tool(tool, args, timeout=profile.limits["tool_timeout_s"] + 5)
            seconds = time.monotonic() - started
            findings.check("result" in response, f"failed: {short(response, 120)}",
                           request=describe_call(tool, args))
            findings.check(seconds < budget, f"took {seconds:.1f} s (budget {budget:.0f} s)",
                           request=describe_call(tool, args))
