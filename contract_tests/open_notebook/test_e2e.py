"""End to end: the seed's tool sequence through the official MCP SDK client."""

from __future__ import annotations

import pytest

from contract_tests.open_notebook.common import profiles_mark
from contract_tests.synthetic.notebooks import ROLES
from contract_tests.verdicts.checks import short, tool_output
from contract_tests.verdicts.findings import Findings, blocked

pytestmark = [profiles_mark, pytest.mark.e2e]


@pytest.mark.req("ON-E2E-001")
def test_the_seeds_tool_sequence_through_the_official_sdk_client(client, notebooks):
    """The seed's integration sequence, enter_collection -> semantic_search -> fetch_passage, and
    nothing more: the other tools' agreements are their own requirements (ON-PROV-002, ON-ART-010,
    ON-STRM-004). Which passage the search ranks first is the server's; its fetch must agree."""
    def ok(tool, args):
        return tool_output(client.call_tool(tool, args))

    cid = ROLES["active"]
    passage = notebooks.collection("active").passage("probe")
    with Findings() as findings:
        listed = [c.get("collection_id") for c in ok("list_collections", {}).get("collections") or []
                  if isinstance(c, dict)]
        if cid not in listed:  # the sequence cannot start: ON-COLL-001's finding, not this one's
            raise blocked(f"list_collections does not list {cid} (see ON-COLL-001): {short(listed)}",
                          by="ON-COLL-001")
        findings.check(ok("enter_collection", {"collection_id": cid}).get("collection_id") == cid,
                       "enter_collection names another collection")
        results: list = []
        # The probe's text first; which passages a query finds is the server's (ON-SRCH-011), so
        # the collection's other passages in turn until one search gives a reference.
        for query in [passage.exact_text] + [p.exact_text for p in notebooks.collection("active").passages]:
            results = [r for r in ok("semantic_search", {"query": query}).get("results") or []
                       if isinstance(r, dict) and isinstance(r.get("reference_id"), str)]
            if results:
                break
        if not results:
            findings.block("the search of a passage's text gave no reference to fetch (see ON-SRCH-012)",
                           by="ON-SRCH-012")
            return
        hit = results[0]
        fetched = ok("fetch_passage", {"source_id": hit["reference_id"]})
        findings.check(fetched.get("source_id") == hit["reference_id"], "fetch_passage answers another source_id")
        pointed = (hit.get("source_pointer") or {}).get("notebook_id")
        findings.check((fetched.get("provenance") or {}).get("notebook_id") == pointed,
                       f"fetch_passage's provenance names another notebook than the search result's {short(pointed)}")
