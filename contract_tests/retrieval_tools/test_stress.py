"""Stress tier: repeated searches are identical (SC-001)."""

from __future__ import annotations

import json

import pytest

from contract_tests.checks import check
from contract_tests.harness.roots import NEEDLE_COMMON, NEEDLE_MANY
from contract_tests.retrieval_tools.common import ok, profiles_mark

pytestmark = [profiles_mark, pytest.mark.stress]


@pytest.mark.req("RT-SRCH-005")
@pytest.mark.parametrize("query,limit", [(NEEDLE_COMMON, 200), (NEEDLE_MANY, 37)])
def test_repeated_searches_give_identical_ordered_results(server, client, profile, query, limit):
    seen = set()
    for _ in range(profile.limits["repeat_searches"]):
        envelope = ok(server.call_tool("search", {"query": query, "repo": "both", "limit": limit}),
                      "RT-SRCH-005", "search")
        seen.add(json.dumps(envelope["result"], sort_keys=True))
    check(len(seen) == 1, "RT-SRCH-005", f"{profile.limits['repeat_searches']} searches gave {len(seen)} results")
