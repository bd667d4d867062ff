"""Unit tier: every success is the shared envelope, and each tool declares an output schema (the
rest of the tool surface is a shared concern)."""

from __future__ import annotations

import pytest

from contract_tests.retrieval_tools.common import TOOLS, Calls, Findings, profiles_mark
from contract_tests.synthetic.roots import NEEDLE_COMMON
from contract_tests.verdicts.findings import esc

pytestmark = [profiles_mark, pytest.mark.unit]


@pytest.mark.req("RT-ENV-001")
@pytest.mark.parametrize("tool,args", [
    ("search", {"query": NEEDLE_COMMON, "repo": "both"}),
    ("open_file", {"repo": "docs", "path": "README.md"}),
    ("get_snippet", {"repo": "code", "path": "src/main.py", "start_line": 1, "end_line": 2}),
    ("list_dir", {"repo": "docs"}),
], ids=["search", "open_file", "get_snippet", "list_dir"])
def test_every_success_is_the_shared_envelope(server, client, names, profile, tool, args):
    Calls(server, names, profile).ok(tool, args)


@pytest.mark.req("RT-TOOL-004")
def test_each_tool_declares_an_output_schema(client):
    """Deselected in a run that negotiated a version before outputSchema (2025-06-18)."""
    listed = {tool["name"]: tool for tool in client.list_tools()}
    with Findings() as findings:
        for name in TOOLS:
            if name not in listed:
                findings.block(f"{name} is not listed", by="RT-TOOL-001", case=name)
                continue
            schema = listed[name].get("outputSchema")
            findings.check(isinstance(schema, dict) and schema.get("type") == "object",
                           f"{name} declares no object outputSchema (got {esc(schema, 200)})", case=name)
