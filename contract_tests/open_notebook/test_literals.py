"""Unit tier: what the seed fixes word for word in errors and echoes: no_collection_context's
message and recovery, and the collection and query a search result names."""

from __future__ import annotations

import pytest

from contract_tests.checks import short, structured_error
from contract_tests.harness.notebooks import ROLES
from contract_tests.open_notebook.common import COLLECTION_SCOPED, profiles_mark
from contract_tests.verdicts import Findings, describe_call, one_case

pytestmark = [profiles_mark, pytest.mark.unit]
# The seed's literals (list_artifact_sets' Error Response and SessionContext.requireCollection).
NO_COLLECTION = {"message": "No active collection. Invoke enter_collection first.",
                 "recovery": "Call list_collections, then enter_collection"}
ARGUMENTS = {"list_artifact_sets": {}, "semantic_search": {"query": "kelp"},
             "fetch_passage": {"source_id": "rc-no-such-source"}, "retrieve_artifact": {"artifact_id": "rc-no-such-artifact"},
             "begin_result_stream": {"query": "kelp"}}


@pytest.mark.req("ON-TEXT-002")
def test_no_collection_context_carries_the_seeds_message_and_recovery(new_session):
    fresh = new_session()
    with Findings() as findings:
        for tool in COLLECTION_SCOPED:
            response, request = fresh.raw(tool, ARGUMENTS[tool])
            with one_case(findings, "ON-TEXT-002", tool, request):
                error = structured_error(response, fresh.profile, "ON-TEXT-002", f"{tool} without a collection",
                                         request=request, case=tool).get("error") or {}
                if error.get("type") != "no_collection_context":  # ON-DOM-001's finding, not a text to judge
                    findings.block("ON-TEXT-002", f"the error type is {short(error.get('type'))} (see ON-DOM-001)",
                                   by="ON-DOM-001", case=tool, request=request)
                    continue
                for key, text in NO_COLLECTION.items():
                    findings.check(error.get(key) == text, "ON-TEXT-002", f"{key} is {short(error.get(key))}",
                                   case=f"{tool}.{key}", request=request)


@pytest.mark.req("ON-SRCH-009")
def test_a_search_names_the_active_collection_and_its_query(main, notebooks):
    with Findings() as findings:
        for role in ("other", "active"):
            main.enter(role, "ON-SRCH-009")
            query = notebooks.collection(role).passage("probe").exact_text
            body = main.ok("semantic_search", {"query": query}, "ON-SRCH-009")
            request = describe_call("semantic_search", {"query": query})
            findings.check(body.get("collection_id") == ROLES[role], "ON-SRCH-009", f"collection_id is "
                           f"{short(body.get('collection_id'))} in {ROLES[role]}", case=role, request=request)
            echoed = body.get("query")  # surrounding white space a server may trim
            findings.check(isinstance(echoed, str) and echoed.strip() == query.strip(), "ON-SRCH-009",
                           "query is not the query sent", case=role, request=request)
