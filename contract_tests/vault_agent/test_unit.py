"""vault-agent tool surface: annotations, tools only, and no indexing or writing tool."""

from __future__ import annotations

import re

import pytest

from contract_tests.vault_agent.common import TOOLS, profiles_mark
from contract_tests.verdicts.checks import short
from contract_tests.verdicts.findings import Findings

pytestmark = profiles_mark
HINTS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
# Administrative or writing operations the seed keeps out of MCP.
FORBIDDEN = re.compile(r"(^|_)(re)?index|sync|write|edit|delete|update|create|put|remove|move|rename", re.IGNORECASE)


@pytest.mark.unit
@pytest.mark.req("VA-TOOL-002")
def test_each_tool_is_annotated_read_only_not_destructive_and_idempotent(client):
    listed = {tool["name"]: tool for tool in client.list_tools()}
    with Findings() as findings:
        for name in TOOLS:
            if name not in listed:
                continue  # VA-TOOL-001 reports it
            hints = listed[name].get("annotations") or {}
            for hint, value in HINTS.items():
                findings.check(hints.get(hint) is value, f"{name}: {hint} is "
                               f"{short(hints.get(hint))}, not {str(value).lower()}", case=name)


@pytest.mark.unit
@pytest.mark.req("VA-TOOL-004")
def test_the_server_offers_tools_and_neither_resources_nor_prompts(server, client):
    capabilities = client.capabilities
    with Findings() as findings:
        findings.check("tools" in capabilities, f"no tools capability: {sorted(capabilities)}")
        for name, method, key in (("resources", "resources/list", "resources"), ("prompts", "prompts/list", "prompts")):
            findings.check(name not in capabilities, f"the {name} capability is advertised")
            response = server.request(method, {})
            listed = (response.get("result") or {}).get(key) or []
            findings.check(not listed, f"{method} lists {short(listed, 120)}")


@pytest.mark.unit
@pytest.mark.req("VA-TOOL-005")
def test_no_indexing_or_writing_tool_is_listed(client):
    with Findings() as findings:
        for tool in client.list_tools():
            name = tool["name"]
            findings.check(name in TOOLS or not FORBIDDEN.search(name),
                           f"{name} looks like an indexing or writing tool")
