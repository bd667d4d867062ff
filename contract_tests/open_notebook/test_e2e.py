"""End to end: the seed's tool sequence through the official MCP SDK client."""

from __future__ import annotations

import pytest

from contract_tests.checks import short, tool_output
from contract_tests.harness.notebooks import ROLES
from contract_tests.names import find_list
from contract_tests.open_notebook.common import profiles_mark
from contract_tests.open_notebook.conftest import MAX_CHUNKS
from contract_tests.verdicts import Findings, blocked

pytestmark = [profiles_mark, pytest.mark.e2e]


@pytest.mark.req("ON-E2E-001")
def test_the_seeds_tool_sequence_through_the_official_sdk_client(client, notebooks, profile):
    def ok(tool, args):
        return tool_output(client.call_tool(tool, args), "ON-E2E-001")

    cid = ROLES["active"]
    passage = notebooks.collection("active").passage("probe")
    with Findings() as findings:
        listed = [c.get("collection_id") for c in ok("list_collections", {}).get("collections") or []]
        if cid not in listed:  # the sequence cannot start: ON-COLL-001's finding, not this one's
            raise blocked("ON-E2E-001", f"list_collections does not list {cid} (see ON-COLL-001): {short(listed)}",
                          by="ON-COLL-001")
        findings.check(ok("enter_collection", {"collection_id": cid}).get("collection_id") == cid, "ON-E2E-001",
                       "enter_collection names another collection")
        results = ok("semantic_search", {"query": passage.exact_text}).get("results") or []
        hit = next((r for r in results if (r.get("source_pointer") or {}).get("notebook_id") == passage.notebook_id),
                   None)
        if hit is None:
            findings.block("ON-E2E-001", "the search found nothing on the passage's notebook (see ON-SRCH-008)",
                           by="ON-SRCH-008")
            return
        fetched = ok("fetch_passage", {"source_id": hit["reference_id"]})
        findings.check(fetched.get("source_id") == hit["reference_id"], "ON-E2E-001",
                       "fetch_passage answers another source_id")
        findings.check((fetched.get("provenance") or {}).get("notebook_id") == passage.notebook_id, "ON-E2E-001",
                       "fetch_passage's provenance names another notebook than the search result")
        explained = ok("explain_provenance", {"id": hit["reference_id"], "id_type": "source"})
        origin = ((explained.get("provenance") or {}).get("origin_notebook") or {}).get("notebook_id")
        findings.check(origin == passage.notebook_id, "ON-E2E-001", f"explain_provenance names {short(origin)}")
        sets = ok("list_artifact_sets", {}).get("artifact_sets") or []
        ids = [i if isinstance(i, str) else (i or {}).get("artifact_id") for s in sets
               for i in (find_list(profile, "list_artifact_sets.artifact_ids", s) or [])]
        if not ids:  # the seed's listing has no artifact id: only the profile's reading (ON-COLL-007) gives one
            findings.block("ON-E2E-001", "list_artifact_sets names no artifact id (see ON-COLL-007)", by="ON-COLL-007",
                           case="retrieve_artifact")
        else:
            artifact = ok("retrieve_artifact", {"artifact_id": ids[0]})
            findings.check(artifact.get("artifact_id") == ids[0], "ON-E2E-001", "retrieve_artifact answers another id")
        token = ok("begin_result_stream", {"query": passage.exact_text}).get("stream_token")
        kinds = []
        for _ in range(MAX_CHUNKS):
            kinds.append(ok("next_stream_chunk", {"stream_token": token}).get("chunk_type"))
            if kinds[-1] == "stream_complete":
                break
        findings.check(kinds and kinds[-1] == "stream_complete", "ON-E2E-001", f"the stream did not complete: {kinds}")
