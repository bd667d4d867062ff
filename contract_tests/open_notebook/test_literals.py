"""Unit tier: what the seed fixes word for word in errors and echoes: no_collection_context's
message and recovery, the collection and query a search result names, and the id and type
explain_provenance names."""

from __future__ import annotations

import pytest

from contract_tests.open_notebook.common import COLLECTION_SCOPED, echoes, padded, profiles_mark
from contract_tests.synthetic.notebooks import ROLES
from contract_tests.verdicts.checks import short, structured_error
from contract_tests.verdicts.findings import Findings, RequirementFailure, describe_call, one_case

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
            with one_case(findings, tool, request):
                error = structured_error(response, fresh.profile, f"{tool} without a collection",
                                         request=request, case=tool).get("error") or {}
                if error.get("type") != "no_collection_context":  # ON-DOM-001's finding, not a text to judge
                    findings.block(f"the error type is {short(error.get('type'))} (see ON-DOM-001)",
                                   by="ON-DOM-001", case=tool, request=request)
                    continue
                for key, text in NO_COLLECTION.items():
                    findings.check(error.get(key) == text, f"{key} is {short(error.get(key))}",
                                   case=f"{tool}.{key}", request=request)


@pytest.mark.req("ON-SRCH-009")
def test_a_search_names_the_active_collection_and_its_query(main, notebooks):
    with Findings() as findings:
        for role in ("other", "active"):
            main.enter(role)
            query = padded(notebooks.collection(role).passage("probe").exact_text)
            body = main.ok("semantic_search", {"query": query})
            request = describe_call("semantic_search", {"query": query})
            findings.check(body.get("collection_id") == ROLES[role], f"collection_id is "
                           f"{short(body.get('collection_id'))} in {ROLES[role]}", case=role, request=request)
            findings.check(echoes(body.get("query"), query), f"query {short(body.get('query'))} is not the query sent",
                           case=role, request=request)


@pytest.mark.req("ON-PROV-005")
def test_explain_provenance_names_the_id_and_type_sent(main, notebooks):
    """A source found by search and an artifact listed by list_artifact_sets (each blocked when
    the suite cannot get one: ON-SRCH-012, ON-ART-012)."""
    main.enter("active")
    with Findings() as findings:
        for id_type in ("source", "artifact"):
            try:
                ident = main.find("active", notebooks.collection("active").passage("probe")).source_id \
                    if id_type == "source" else next(iter(main.artifact_map("active")))
            except RequirementFailure as failure:
                why = failure.findings[0]
                findings.block(why.message, by=why.by, case=id_type, request=why.request)
                continue
            args = {"id": ident, "id_type": id_type}
            body = main.ok("explain_provenance", args)
            request = describe_call("explain_provenance", args)
            for key in ("id", "id_type"):
                findings.check(body.get(key) == args[key], f"{key} is {short(body.get(key))}, not "
                               f"{short(args[key])}", case=f"{id_type}.{key}", request=request)
