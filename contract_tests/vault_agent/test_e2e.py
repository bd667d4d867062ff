"""vault-agent with the official MCP SDK client: handshake, tool list, one call of each tool."""

from __future__ import annotations

import pytest

from contract_tests.vault_agent.common import TOOLS, profiles_mark
from contract_tests.verdicts.checks import short
from contract_tests.verdicts.findings import Findings, describe_call

pytestmark = profiles_mark


@pytest.mark.e2e
@pytest.mark.req("VA-E2E-001")
def test_the_sdk_client_initializes_lists_and_calls_every_tool(client, names, ids):
    note = ids.note("alpha")
    calls = {"search": {"query": "tokalpha"}, "get_note": {"noteId": note},
             "get_chunk": {"noteId": note, "chunkIndex": 0},
             "get_attachment": {"vaultRelativePath": "attachments/pic.png"},
             "related": {"type": "note", "id": note}}
    with Findings() as findings:
        listed = {tool["name"] for tool in client.list_tools()}
        findings.check(set(TOOLS) <= listed, f"the SDK client lists {sorted(listed)}")
        for tool in TOOLS:
            if tool not in listed:
                continue
            args = names.args(tool, calls[tool])
            result = client.call_tool(tool, args)
            findings.check("error" not in result and not result.get("isError"),
                           f"{tool} failed for the SDK client: {short(result, 160)}", request=describe_call(tool, args))
