"""Unit tier: every success is the shared envelope (the tool surface is a shared concern)."""

from __future__ import annotations

import pytest

from contract_tests.harness.roots import NEEDLE_COMMON
from contract_tests.retrieval_tools.common import Calls, profiles_mark

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
