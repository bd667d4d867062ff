"""Integration tier: response shapes, the error taxonomy, collections, artifact sets, and the
Domicile invariants a session shows by itself (SAFE, no preload, replacement)."""

from __future__ import annotations

import pytest

from contract_tests.open_notebook.common import (
    COLLECTION_SCOPED,
    NO_ARTIFACT,
    NO_PASSAGE,
    error_type,
    hits,
    profiles_mark,
)
from contract_tests.open_notebook.conftest import pull
from contract_tests.synthetic.notebooks import CROSS_QUERIES, ROLES
from contract_tests.transport.system import MACHINE_LACKS
from contract_tests.verdicts.checks import (
    _error_document,  # noqa: PLC2701 - the channel detection is the suite's own
    called_ok,
    not_a_failure,
    schema_errors,
    short,
    structured_error,
    tool_output,
)
from contract_tests.verdicts.findings import Findings, RequirementFailure, describe_call, esc, one_case
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark, pytest.mark.integration]


@pytest.mark.req("ON-SHAPE-001")
def test_every_response_matches_the_seeds_structure(walk, profile):
    with Findings() as findings:
        for tool in profile.required_tools:
            done = walk.successes(tool)
            if not done:
                findings.block(f"no {tool} call succeeded in the tour (see {walk.blocker or 'the tour'})",
                               by=walk.blocker or "tour", case=tool)
                continue
            validator = profile.output_validator(tool)
            for _t, args, response in done:
                with one_case(findings, tool, describe_call(tool, args)):
                    errors = schema_errors(validator, tool_output(response))
                    findings.check(not errors, f"does not match the seed's structure: {errors[:3]}",
                                   case=tool, request=describe_call(tool, args))


def _domain_failures(main, notebooks, *, req: str | None = None) -> list[tuple[str, dict, str]]:
    """Provoke a failure of every kind the taxonomy names for a domain error: an unknown
    collection, source and artifact, a forged stream token, a source of another collection.
    (tool, response, request) of each."""
    req = own(req)
    main.enter("other", req=req)
    try:
        foreign = [main.find("other", notebooks.collection("other").passage("probe"), req=req).source_id]
    except RequirementFailure:
        foreign = []  # no source of the other collection to send (ON-SRCH-012 reports why)
    main.enter("active", req=req)
    calls = [("enter_collection", {"collection_id": "rc-no-such-collection"}),
             ("fetch_passage", {"source_id": "rc-no-such-source"}),
             ("retrieve_artifact", {"artifact_id": "rc-no-such-artifact"}),
             ("next_stream_chunk", {"stream_token": "rc-forged-token-00000000000000000000"}),
             ("explain_provenance", {"id": "rc-no-such-source", "id_type": "source"})]
    calls += [("fetch_passage", {"source_id": ident}) for ident in foreign]
    return [(tool, *main.raw(tool, args)) for tool, args in calls]


@pytest.mark.req("ON-ERR-001")
def test_every_failure_is_the_taxonomys_envelope(main, notebooks):
    with Findings() as findings:
        for tool, response, request in _domain_failures(main, notebooks):
            with one_case(findings, tool, request):
                structured_error(response, main.profile, f"{tool} failure", request=request, case=tool)


@pytest.mark.req("ON-ERR-003")
def test_every_failure_comes_on_one_channel(main, notebooks):
    """A test of its own: the profile's reading never stops the seed's ON-ERR-001."""
    channels: dict[str, int] = {}
    for _tool, response, _request in _domain_failures(main, notebooks):
        if not_a_failure(response) is None and _error_document(response)[1] is not None:
            channel = _error_document(response)[0]
            channels[channel] = channels.get(channel, 0) + 1
    with Findings() as findings:
        if sum(channels.values()) < 2:
            findings.block("fewer than two failures carried an error document (see ON-ERR-001)",
                           by="ON-ERR-001")
        findings.check(len(channels) <= 1, f"failures came on several channels: {channels}")


@pytest.mark.req("ON-COLL-001")
def test_list_collections_lists_every_collection_with_its_metadata(main, notebooks):
    body = main.ok("list_collections", {})
    listed = {c.get("collection_id"): c for c in body.get("collections") or [] if isinstance(c, dict)}
    with Findings() as findings:
        findings.check(sorted(listed) == sorted(ROLES.values()),
                       f"collections listed: {sorted(map(str, listed))}, not the fixture's {sorted(ROLES.values())}")
        for role, cid in ROLES.items():
            entry, meta, info = listed.get(cid), notebooks.collection_meta(cid), notebooks.collection(role)
            if entry is None:
                continue
            expected = {"title": meta["title"], "date_range": meta["date_range"], "domain_tags": meta["domain_tags"],
                        "last_modified": meta["last_modified"],
                        "notebook_count": len(info.notebook_ids), "artifact_count": len(info.artifacts)}
            for key, value in expected.items():
                findings.check(entry.get(key) == value, f"{key} is {short(entry.get(key))}, not "
                               f"{short(value)}", case=cid)
        total = (body.get("metadata") or {}).get("total_collections")
        findings.check(total == len(listed), f"total_collections is {short(total)} for {len(listed)}")


@pytest.mark.req("ON-COLL-004")
def test_entering_an_unknown_collection_fails_with_collection_not_found(main):
    document = main.error("enter_collection", {"collection_id": "rc-no-such-collection"},
                          "enter_collection of an unknown id")
    with Findings() as findings:
        findings.check(error_type(document) == "collection_not_found",
                       f"the error type is {short(error_type(document))}")


@pytest.mark.req("ON-COLL-005")
def test_list_artifact_sets_lists_the_active_collections_sets(main, notebooks):
    main.enter("active")
    body = main.ok("list_artifact_sets", {})
    info = notebooks.collection("active")
    listed = {s.get("artifact_set_id"): s for s in body.get("artifact_sets") or [] if isinstance(s, dict)}
    with Findings() as findings:
        findings.check(body.get("collection_id") == info.collection_id,
                       f"collection_id is {short(body.get('collection_id'))}")
        findings.check(sorted(listed) == sorted(info.artifact_set_ids),
                       f"sets listed: {sorted(map(str, listed))}, not {sorted(info.artifact_set_ids)}")
        for set_id in info.artifact_set_ids:
            entry, manifest = listed.get(set_id), notebooks.manifest("active", set_id)
            if entry is None:
                continue
            expected = {"artifact_type": manifest["artifact_type"], "status": manifest["status"],
                        "created_at": manifest["created_at"], "source_notebooks": manifest["source_notebooks"],
                        "artifact_count": len(manifest["artifacts"])}
            for key, value in expected.items():
                findings.check(entry.get(key) == value, f"{key} is {short(entry.get(key))}, not "
                               f"{short(value)}", case=set_id)


@pytest.mark.req("ON-COLL-007")
def test_each_artifact_set_names_its_artifacts_ids(main, notebooks):
    main.enter("active")
    listed = main.artifact_ids(sets=False)
    with Findings() as findings:
        for set_id in notebooks.collection("active").artifact_set_ids:
            count = len(notebooks.manifest("active", set_id)["artifacts"])
            ids = listed.get(set_id, [])
            findings.check(len(ids) == count, f"names {len(ids)} artifact ids for {count} artifacts",
                           case=set_id)
            for wire in ids:
                response, request = main.raw("retrieve_artifact", {"artifact_id": wire})
                findings.check(called_ok(response), "a listed id is not retrievable", case=set_id,
                               request=request)


def _existing_ids(main, notebooks, need: bool = False, *, req: str | None = None) -> tuple[str | None, str | None]:
    """A source and an artifact id of the active collection, taken from the worker's session
    (None where the server gives none: their lookup is checked elsewhere). `need`: a collection
    that cannot be entered blocks `req`."""
    req = own(req)
    source = artifact = None
    try:
        main.enter("active", req=req)
    except RequirementFailure:
        if need:
            raise
        return source, artifact
    try:
        source = main.find("active", notebooks.collection("active").passage("probe"), req=req).source_id
    except RequirementFailure:
        pass
    try:
        artifact = next(iter(main.artifact_map("active", req=req)))
    except RequirementFailure:
        pass
    return source, artifact


@pytest.mark.req("ON-DOM-001")
def test_a_new_session_has_no_collection(main, new_session, notebooks):
    """Identifiers that exist (or, where the server gives none, unknown ones) are sent from a new
    session: every collection-scoped tool must refuse them with no_collection_context."""
    source, artifact = _existing_ids(main, notebooks)
    arguments = {"list_artifact_sets": {}, "semantic_search": {"query": "kelp"},
                 "fetch_passage": {"source_id": source or "rc-no-such-source"},
                 "retrieve_artifact": {"artifact_id": artifact or "rc-no-such-artifact"},
                 "begin_result_stream": {"query": "kelp"}}
    fresh = new_session()
    with Findings() as findings:
        for tool in COLLECTION_SCOPED:
            response, request = fresh.raw(tool, arguments[tool])
            with one_case(findings, tool, request):
                document = structured_error(response, fresh.profile, f"{tool} without a collection",
                                            request=request, case=tool)
                error = document.get("error") or {}
                findings.check(error.get("type") == "no_collection_context",
                               f"the error type is {short(error.get('type'))}", case=tool, request=request)
                findings.check(isinstance(error.get("recovery"), str) and error["recovery"].strip(),
                               "no recovery guidance", case=tool, request=request)


@pytest.mark.req("ON-DOM-002")
def test_explain_provenance_reveals_nothing_without_a_collection(main, new_session, notebooks):
    """A test of its own, beside ON-DOM-001's five collection-scoped tools: explain_provenance has
    no precondition in the seed, but what it reveals is a collection's data (the SAFE invariant)."""
    source, artifact = _existing_ids(main, notebooks, need=True)
    fresh = new_session()
    with Findings() as findings:
        for kind, ident, by in (("source", source, NO_PASSAGE), ("artifact", artifact, NO_ARTIFACT)):
            if ident is None:
                findings.block(f"no {kind} id of the collection was found to send (see {by})", by=by,
                               case=kind)
                continue
            response, request = fresh.raw("explain_provenance", {"id": ident, "id_type": kind})
            findings.check(not called_ok(response), "explain_provenance answered without a collection",
                           case=kind, request=request)


@pytest.mark.req("ON-DOM-004")
def test_entering_a_collection_opens_none_of_its_notebooks_or_artifacts(main, notebooks):
    main.enter("other")
    with notebooks.reading() as reads:
        main.enter("active")
    if not reads.seen:
        pytest.skip(f"{MACHINE_LACKS} inotify: the files a server opens cannot be seen")
    cid = ROLES["active"]
    notebook_files = [loc for loc in reads.locations
                      if loc.startswith(f"notebooks/{cid}/notebooks/") and loc.endswith(".md")]
    artifact_files = [loc for loc in reads.locations if loc.startswith(f"notebooks/{cid}/artifacts/")
                      and loc.count("/") == 4 and not loc.endswith("/set.json")]
    opened = notebook_files + artifact_files
    with Findings() as findings:
        findings.check(not opened, f"enter_collection opened {esc(opened[:4])}")


@pytest.mark.req("ON-DOM-005")
def test_entering_another_collection_replaces_the_context(main, notebooks):
    main.enter("active")
    source = main.find("active", notebooks.collection("active").passage("probe")).source_id
    artifacts = list(main.artifact_map("active"))
    first = notebooks.tokens("active")
    query = CROSS_QUERIES[0]  # matches the first collection's canary passage
    baseline, kept = (str(main.ok("begin_result_stream", {"query": query}).get("stream_token"))
                      for _ in range(2))
    shown = hits(pull(main, baseline), first, echoed=(query,))
    main.enter("other")
    with Findings() as findings:
        # A stream begun in the first collection, pulled after entering the second: an error,
        # or chunks with nothing of the first collection (which the same stream, pulled before,
        # showed: else nothing can be told, blocked).
        if not shown:
            findings.block("the stream shows none of the first collection's canaries even before "
                           "another collection is entered (see ON-SRCH-007)", by="ON-SRCH-007", case="stream")
        found = hits(pull(main, kept), first, echoed=(query,))
        findings.check(not found, f"a stream begun before entering {ROLES['other']} still served the "
                       f"first collection's content: {found}", case="stream",
                       request=describe_call("next_stream_chunk", {"stream_token": kept}))
        body = main.ok("list_artifact_sets", {})
        findings.check(body.get("collection_id") == ROLES["other"],
                       f"list_artifact_sets names {short(body.get('collection_id'))} after entering {ROLES['other']}")
        for query in CROSS_QUERIES:
            args = {"query": query, "k": 50}
            found = hits(main.ok("semantic_search", args), first, echoed=(query,))
            findings.check(not found, f"the first collection's content came back: {found}",
                           case=query, request=describe_call("semantic_search", args))
        # An id the second collection's listing gives too (a set's own id, where sets name no
        # artifact ids: set ids repeat across collections) names the second's artifact there:
        # for it, only that nothing of the first comes back is checked.
        own_ids = {wire for ids in main.artifact_ids().values() for wire in ids}
        for tool, args in [("fetch_passage", {"source_id": source})] + [
                ("retrieve_artifact", {"artifact_id": a}) for a in artifacts[:2]]:
            response, request = main.raw(tool, args)
            if args.get("artifact_id") in own_ids:
                found = hits(response, first)
                findings.check(not found, f"the first collection's content came back: {found}", case=tool,
                               request=request)
                continue
            findings.check(not called_ok(response), "the first collection's item was served",
                           case=tool, request=request)
