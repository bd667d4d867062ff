"""Unit tier: the four tools, their declared inputs, and the shared envelope."""

from __future__ import annotations

import pytest

from contract_tests.checks import check
from contract_tests.contracts import schema
from contract_tests.retrieval_tools.common import TOOLS, ok, profiles_mark

pytestmark = [profiles_mark, pytest.mark.unit]


@pytest.fixture(scope="module")
def listed(client):
    return {tool["name"]: tool for tool in client.list_tools()}


@pytest.mark.req("RT-TOOL-001")
def test_the_four_retrieval_tools_are_listed(listed):
    missing = [t for t in TOOLS if t not in listed]
    check(not missing, "RT-TOOL-001", f"not listed: {missing}")


@pytest.mark.req("RT-TOOL-002")
@pytest.mark.parametrize("tool", TOOLS)
def test_each_tool_declares_the_profiles_parameters_and_types(listed, profile, tool):
    ours = schema(profile.data["schemas"]["inputs"][tool])
    declared = listed.get(tool, {}).get("inputSchema", {})
    props = declared.get("properties", {})
    for name, spec in ours["properties"].items():
        check(name in props, "RT-TOOL-002", f"{tool}: parameter {name} is not declared")
        theirs = props[name].get("type")
        if theirs is not None and "type" in spec:
            declared_types = {theirs} if isinstance(theirs, str) else set(theirs)
            allowed = {spec["type"]} | ({"number"} if spec["type"] == "integer" else set())
            check(declared_types & allowed, "RT-TOOL-002",
                  f"{tool}.{name}: declared type {theirs}, the profile's is {spec['type']}")
    may_require = set(ours.get("required", [])) | {"repo"}
    extra = sorted(set(declared.get("required", [])) - may_require)
    check(not extra, "RT-TOOL-002", f"{tool}: requires parameters the profile leaves optional: {extra}")


@pytest.mark.req("RT-ENV-001")
@pytest.mark.parametrize("tool,args", [
    ("search", {"query": "needle-common", "repo": "both"}),
    ("open_file", {"repo": "docs", "path": "README.md"}),
    ("get_snippet", {"repo": "code", "path": "src/main.py", "start_line": 1, "end_line": 2}),
    ("list_dir", {"repo": "docs"}),
])
def test_every_success_is_the_shared_envelope(server, client, tool, args):
    envelope = ok(server.call_tool(tool, args), "RT-ENV-001", tool)
    meta = envelope["meta"]
    check(meta["repo"] == args["repo"], "RT-ENV-001", f"{tool}: meta.repo is {meta['repo']!r}")
    check(meta["duration_ms"] >= 0 and isinstance(meta["truncated"], bool), "RT-ENV-001", f"{tool}: bad meta")
