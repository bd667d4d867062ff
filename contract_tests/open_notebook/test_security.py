"""Security tier: what must never come back (content where the seed allows none, other
collections' items), contexts that belong to one session and end with it, and refusals of
mutation attempts. (Canary leaks on every channel: the shared concern tests and the guard.)"""

from __future__ import annotations

import pytest

from contract_tests.open_notebook.common import FORBIDDEN_RECOVERY, content_tokens, error_type, hits, profiles_mark
from contract_tests.synthetic.notebooks import CROSS_QUERIES, ROLES
from contract_tests.verdicts.checks import (
    _error_document,  # noqa: PLC2701 - the channel detection is the suite's own
    called_ok,
    not_a_failure,
    schema_errors,
    short,
    texts,
    tool_output,
)
from contract_tests.verdicts.findings import Findings, describe_call, esc
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark, pytest.mark.security]


@pytest.mark.req("ON-WORLD-003")
def test_describe_world_and_list_constraints_carry_no_content(main, notebooks):
    main.enter("active")
    with Findings() as findings:
        for tool in ("describe_world", "list_constraints"):
            _no_content(findings, main, notebooks, tool, case=tool)


def _no_content(findings: Findings, main, notebooks, tool: str, case: str | None = None, *,
                req: str | None = None) -> None:
    """`tool` (no arguments, inside the active collection) returns no notebook text."""
    req = own(req)
    found = hits(main.ok(tool, {}, req=req), content_tokens(notebooks))
    findings.check(not found, f"{tool} returned content: {found}", req=req, case=case)


@pytest.mark.req("ON-COLL-002")
def test_list_collections_carries_no_content(main, notebooks):
    main.enter("active")
    with Findings() as findings:
        _no_content(findings, main, notebooks, "list_collections")


@pytest.mark.req("ON-COLL-006")
def test_list_artifact_sets_carries_no_content(main, notebooks):
    main.enter("active")
    with Findings() as findings:
        _no_content(findings, main, notebooks, "list_artifact_sets")


def _searched(main, notebooks, *, req: str | None = None):
    """(query, search body, [fetched exact_text of each result]) for every notable passage."""
    req = own(req)
    out = []
    for passage in notebooks.collection("active").passages:
        if passage.kind == "canary":
            continue
        body = main.ok("semantic_search", {"query": passage.exact_text}, req=req)
        fetched = []
        for result in body.get("results") or []:
            response, _ = main.raw("fetch_passage", {"source_id": (result or {}).get("reference_id")})
            if called_ok(response):
                text = ((tool_output(response, req=req) or {}).get("passage") or {}).get("exact_text")
                fetched.append((result, text if isinstance(text, str) else ""))
        out.append((passage.exact_text, body, fetched))
    return out


@pytest.mark.req("ON-SRCH-005")
def test_search_returns_no_full_text(main, notebooks, profile):
    main.enter("active")
    limit = int(profile.limits["preview_chars"])
    searched = _searched(main, notebooks)
    with Findings() as findings:
        if not any(t for _q, _b, fetched in searched for _r, t in fetched):
            findings.block("no search result could be fetched: no full text to look for (see ON-SRCH-012)",
                           by="ON-SRCH-012")
        elif not any(len(t) > limit for _q, _b, fetched in searched for _r, t in fetched):
            # The server serves no passage longer than a snippet: nothing of this can be observed.
            findings.block(f"no fetched passage is longer than {limit} characters: no full text to look for")
        for query, body, fetched in searched:
            long_texts = {f"passage of {len(t)} characters": t for _r, t in fetched if len(t) > limit}
            found = hits(body, long_texts, echoed=(query,))
            findings.check(not found, f"the search response holds a passage's full text: {found}",
                           request=describe_call("semantic_search", {"query": query}))


@pytest.mark.req("ON-SRCH-006")
def test_no_snippet_is_a_whole_passage(main, notebooks, profile):
    main.enter("active")
    limit = int(profile.limits["preview_chars"])
    searched = _searched(main, notebooks)
    with Findings() as findings:
        if not any(t and len(t) <= limit and isinstance(r.get("preview_snippet"), str)
                   for _q, _b, fetched in searched for r, t in fetched):
            findings.block(f"no fetched passage of at most {limit} characters with a snippet",
                           by="ON-SRCH-012")
        for query, _body, fetched in searched:
            for result, text in fetched:
                snippet = result.get("preview_snippet")
                if text and len(text) <= limit and isinstance(snippet, str):
                    findings.check(text.strip() not in snippet,
                                   f"the snippet is the whole passage: {esc(snippet, 120)}",
                                   case=str(result.get("reference_id")),
                                   request=describe_call("semantic_search", {"query": query}))


@pytest.mark.req("ON-ART-009")
def test_another_collections_artifact_is_refused(main):
    """An id the active collection's listing gives too (a set's own id, where the listing names
    no artifact ids: the layout's set ids repeat across collections) names the active
    collection's artifact there: for it, only that none of the other's comes back is checked."""
    main.enter("other")
    foreign = list(main.artifact_map("other").items())[:3]
    main.enter("active")
    own_ids = {wire for ids in main.artifact_ids().values() for wire in ids}
    with Findings() as findings:
        for wire, artifact in foreign:
            payload = main.fixture.payload(artifact)
            needles = {"the other collection's artifact canary": main.fixture.collection("other").canaries["artifact"]}
            if isinstance(payload, str):
                needles["its contents"] = payload.strip().splitlines()[-1]
            for tool, args in (("retrieve_artifact", {"artifact_id": wire}),
                               ("explain_provenance", {"id": wire, "id_type": "artifact"})):
                response, request = main.raw(tool, args)
                findings.check(wire in own_ids or not called_ok(response), "another collection's artifact was served",
                               case=f"{tool}:{wire}", request=request)
                found = hits(response, needles)
                findings.check(not found, f"the refusal carries {found}", case=f"{tool}:{wire}",
                               request=request)


@pytest.mark.req("ON-PROV-003")
def test_explain_provenance_describes_the_chain_only(main, notebooks):
    main.enter("active")
    needles = content_tokens(notebooks, titles=False)
    calls = [({"id": main.find("active", notebooks.collection("active").passage(kind)).source_id,
               "id_type": "source"}) for kind in ("canary", "multiline")]
    calls += [{"id": wire, "id_type": "artifact"} for wire in main.artifact_map("active")]
    with Findings() as findings:
        for args in calls:
            found = hits(main.ok("explain_provenance", args), needles)
            findings.check(not found, f"explain_provenance returned content: {found}",
                           case=args["id"], request=describe_call("explain_provenance", args))


def _two_sessions(new_session, servers, suite):
    """Two sessions of one user: two HTTP sessions on the server, or two stdio servers with
    the same HOME (the same user starting two clients)."""
    if suite.transport == "http":
        return new_session(), new_session()
    home = servers.fresh_home()
    return new_session(home=home), new_session(home=home)


@pytest.mark.req("ON-DOM-006")
def test_each_session_has_its_own_context(new_session, servers, suite, notebooks):
    first, second = _two_sessions(new_session, servers, suite)
    first.enter("active")
    with Findings() as findings:
        response, request = second.raw("list_artifact_sets", {})
        findings.check(not called_ok(response),
                       "a new session answered list_artifact_sets while another session is in a collection",
                       case="second-starts-safe", request=request)
        second.enter("other")
        for session, role, foreign in ((first, "active", "other"), (second, "other", "active")):
            body = session.ok("list_artifact_sets", {})
            findings.check(body.get("collection_id") == ROLES[role],
                           f"list_artifact_sets names {short(body.get('collection_id'))}, the session entered "
                           f"{ROLES[role]}", case=role)
            for query in CROSS_QUERIES:
                found = hits(session.ok("semantic_search", {"query": query, "k": 50}),
                             notebooks.tokens(foreign), echoed=(query,))
                findings.check(not found, f"the other session's collection came back: {found}",
                               case=f"{role}:{query}")


@pytest.mark.req("ON-DOM-007")
def test_a_new_connection_starts_with_no_collection(new_session, servers, suite, notebooks):
    """stdio: the server restarted with the same HOME. HTTP: a new session after the first
    ended, and a restarted server."""
    home = None if suite.transport == "http" else servers.fresh_home()
    first = new_session(home=home) if home else new_session()
    first.enter("active")
    begun = first.ok("begin_result_stream", {"query": notebooks.collection("active").passage("probe").exact_text})
    token = str(begun.get("stream_token"))
    first.conn.close(timeout=5)
    later = [("restarted", new_session(home=home))] if home else [("new-session", new_session()),
                                                                  ("restarted", new_session(process=True))]
    with Findings() as findings:
        for case, session in later:
            response, request = session.raw("list_artifact_sets", {})
            findings.check(not called_ok(response), "the new connection answered list_artifact_sets: "
                           "the old context came back", case=case, request=request)
            response, request = session.raw("next_stream_chunk", {"stream_token": token})
            findings.check(not called_ok(response), "the old connection's stream token still works",
                           case=case, request=request)


# One tool named for each of the seed's non-affordances (OPEN_NOTEBOOK_MCP_AFFORDANCES.md).
WRITE_TOOLS = ("write_notebook", "edit_notebook", "delete_notebook", "update_embeddings", "modify_vectors",
               "generate_knowledge", "apply_reasoning_outcome", "save_memory", "trigger_workflow", "schedule_task",
               "call_external_tool", "register_tool")
# (tool, arguments, a mutation attempt in the seed's sense, not a request for reasoning): only
# arguments that unmistakably ask for a write or for reasoning or a decision (list_constraints'
# refusal conditions), never a merely unknown argument a server may ignore.
ARGUMENT_ATTEMPTS = (
    ("semantic_search", {"query": "kelp", "mode": "write"}, True),
    ("list_artifact_sets", {"delete": True}, True),
    ("list_collections", {"persist": True}, True),
    ("semantic_search", {"query": "kelp", "replace_with": "new text"}, True),
    ("semantic_search", {"query": "kelp", "reasoning": True}, False),
    ("describe_world", {"decide": "which collection to trust"}, False),
)
# Error types that are an explicit refusal of an argument-borne mutation attempt: the seed's
# operation_forbidden, or the taxonomy's rejection of an argument the schema does not declare
# (a server that validates input first never reaches the mutation; it still refuses).
ARGUMENT_REFUSALS = ("operation_forbidden", "ambiguous_request")


def _explained(response) -> bool:
    """A failure with some words of explanation (an error message or text)."""
    if "error" in response:
        return bool(str((response.get("error") or {}).get("message", "")).strip())
    return any(t.strip() for t in texts(response.get("result") or {}))


@pytest.mark.req("ON-REF-001")
def test_a_write_like_tool_is_refused_with_an_explanation(main):
    main.enter("active")
    with Findings() as findings:
        for tool in WRITE_TOOLS:
            args = {"notebook_id": "nb-0001", "text": "overwritten"}
            response, request = main.raw(tool, args)
            problem = not_a_failure(response)
            findings.check(problem is None, f"the call was not refused: {problem}", case=tool,
                           request=request)
            if problem is None:
                findings.check(_explained(response), "the refusal explains nothing", case=tool,
                               request=request)


@pytest.mark.req("ON-REF-002")
def test_an_argument_asking_for_a_write_or_reasoning_is_refused(main):
    main.enter("active")
    with Findings() as findings:
        for tool, args, _mutation in ARGUMENT_ATTEMPTS:
            response, request = main.raw(tool, args)
            case = f"{tool}:{next(k for k in args if k not in ('query',))}"
            findings.check(not_a_failure(response) is None, f"not refused: {not_a_failure(response)}", case=case,
                           request=request)


@pytest.mark.req("ON-REF-003")
def test_a_mutation_attempt_in_the_taxonomy_is_operation_forbidden(main, profile):
    main.enter("active")
    attempts = [(tool, {"notebook_id": "nb-0001", "text": "overwritten"}) for tool in WRITE_TOOLS]
    attempts += [(tool, args) for tool, args, mutation in ARGUMENT_ATTEMPTS if mutation]
    validator = profile.error_validator()
    argument_borne = {(tool, tuple(sorted(args))) for tool, args, _m in ARGUMENT_ATTEMPTS}
    with Findings() as findings:
        for tool, args in attempts:
            response, request = main.raw(tool, args)
            case = f"{tool}:{','.join(sorted(args))}"
            if not_a_failure(response) is not None:  # not refused at all: that is ON-REF-001's / ON-REF-002's finding
                by = "ON-REF-001" if tool in WRITE_TOOLS else "ON-REF-002"
                findings.block(f"the attempt was not refused (see {by})", by=by, case=case,
                               request=request)
                continue
            _channel, document = _error_document(response)
            if document is None or schema_errors(validator, document):
                continue  # a protocol-level refusal (unknown tool, invalid params): explicit, not the envelope
            allowed = ARGUMENT_REFUSALS if (tool, tuple(sorted(args))) in argument_borne else ("operation_forbidden",)
            findings.check(error_type(document) in allowed,
                           f"refused as {short(error_type(document))}, not {' or '.join(allowed)}", case=case,
                           request=request)


@pytest.mark.req("ON-TEXT-003")
def test_an_operation_forbidden_refusal_carries_the_seeds_recovery(main, profile):
    """assertReadOnly's recovery, on every attempt refused with operation_forbidden; a server
    that refuses otherwise (ON-REF-003 accepts other refusals) has no such refusal to check."""
    main.enter("active")
    attempts = [(tool, {"notebook_id": "nb-0001", "text": "overwritten"}) for tool in WRITE_TOOLS]
    attempts += [(tool, args) for tool, args, mutation in ARGUMENT_ATTEMPTS if mutation]
    forbidden = []
    for tool, args in attempts:
        response, request = main.raw(tool, args)
        _channel, document = _error_document(response)
        if error_type(document) == "operation_forbidden":
            recovery = (document.get("error") or {}).get("recovery")
            forbidden.append((f"{tool}:{','.join(sorted(args))}", recovery, request))
    if not forbidden:
        pytest.skip("no mutation attempt was refused with operation_forbidden: the seed's recovery applies to none")
    with Findings() as findings:
        for case, recovery, request in forbidden:
            findings.check(recovery == FORBIDDEN_RECOVERY, f"recovery is {esc(recovery, 120)}", case=case,
                           request=request)
