"""Integration tier: semantic_search (k, the cap, the collection boundary, finding a passage)
and fetch_passage (verbatim text checked against the fixture's files, bounded context,
provenance, errors). Passages are found as a client finds them: searched, then fetched."""

from __future__ import annotations

from typing import Any

import pytest

from contract_tests.contracts.specs import choice
from contract_tests.open_notebook.common import error_type, hits, places, profiles_mark
from contract_tests.open_notebook.conftest import pull
from contract_tests.synthetic.notebooks import BROAD_QUERY, CROSS_QUERIES, NotebooksFixture
from contract_tests.verdicts.checks import called_ok, short, structured_error, tool_output
from contract_tests.verdicts.findings import Finding, Findings, RequirementFailure, describe_call, esc, one_case
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark, pytest.mark.integration]
NOTABLE = ("probe", "long_context", "multiline", "list", "fence", "unicode")


def _notable(notebooks: NotebooksFixture, role: str = "active"):
    return [p for p in notebooks.collection(role).passages if p.kind in NOTABLE]


def _count(body: dict[str, Any]) -> tuple[list[Any], Any]:
    results = body.get("results") if isinstance(body.get("results"), list) else []
    return results, (body.get("metadata") or {}).get("total_matches")


def _ranked(body: dict[str, Any]) -> list[Any]:
    return [r.get("reference_id") for r in _count(body)[0] if isinstance(r, dict)]


@pytest.mark.req("ON-SRCH-002")
def test_k_defaults_to_10_and_bounds_the_results(main):
    """k is a maximum ("Maximum results (default 10, max 50)"): fewer results are allowed (a
    relevance threshold), so the default is checked against an explicit k of 10, not a count."""
    main.enter("active")
    bodies: dict[str, dict[str, Any]] = {}
    with Findings() as findings:
        for k, cap in ((None, 10), (1, 1), (3, 3), (10, 10), (50, 50)):
            args = {"query": BROAD_QUERY} | ({"k": k} if k is not None else {})
            case = f"k={k}" if k is not None else "default"
            body = bodies[case] = main.ok("semantic_search", args)
            results, _total = _count(body)
            request = describe_call("semantic_search", args)
            findings.check(len(results) <= cap, f"{len(results)} results for a cap of {cap}",
                           case=case, request=request)
            returned = (body.get("metadata") or {}).get("returned")
            findings.check(returned == len(results), f"metadata.returned is {short(returned)} for "
                           f"{len(results)} results", case=case, request=request)
        if not _count(bodies["k=50"])[0]:
            findings.block("the broad query found nothing with k 50: no default to compare (see ON-SRCH-012)",
                           by="ON-SRCH-012", case="default-is-10")
        else:  # with 10 or fewer passages found, any default from their number up gives the same list
            findings.check(_ranked(bodies["default"]) == _ranked(bodies["k=10"]),
                           f"without k, {len(_count(bodies['default'])[0])} results; with k 10, "
                           f"{len(_count(bodies['k=10'])[0])}: the default is not 10", case="default-is-10")


def _over_max(main):
    """semantic_search of the broad query with each k over 50 (in the session's collection):
    (case, k, response, request)."""
    for k in (51, 100, 1000):
        args = {"query": BROAD_QUERY, "k": k}
        yield (f"k={k}", k, *main.raw("semantic_search", args))


@pytest.mark.req("ON-SRCH-003")
def test_k_over_50_is_clamped_or_refused(main, profile):
    """Each k on its own: clamped or refused (the declared way, if declared); that every k over
    50 is handled one way is ON-SRCH-010's."""
    cap = int(profile.limits["max_k"])
    declared = choice("k_over_max")
    main.enter("active")
    at_cap = _ranked(main.ok("semantic_search", {"query": BROAD_QUERY, "k": cap}))
    with Findings() as findings:
        for case, k, response, request in _over_max(main):
            if called_ok(response):
                outcome = "clamp"
                body = tool_output(response)
                results, _total = _count(body)
                findings.check(len(results) <= cap, f"{len(results)} results for k={k}", case=case,
                               request=request)
                # Clamped means k taken as 50: the same results as k 50 (a maximum, not a count).
                findings.check(_ranked(body) == at_cap, f"k={k} gave {len(results)} results, k={cap} "
                               f"gave {len(at_cap)}: not clamped to {cap}", case=case, request=request)
            else:
                outcome = "error"
                with one_case(findings, case, request):
                    structured_error(response, profile, f"semantic_search with k={k}", request=request)
            if declared:
                findings.check(outcome == declared, f"k={k} gave {outcome}, the "
                               f"declaration says {declared}", case=case, request=request)


@pytest.mark.req("ON-SRCH-010")
def test_every_k_over_50_is_handled_one_way(main):
    """A test of its own: the profile's reading never stops the seed's ON-SRCH-003. With a
    declaration the one way is the declared one: every k over 50 is handled so."""
    declared = choice("k_over_max")
    main.enter("active")
    outcomes = {case: "clamp" if called_ok(response) else "error" for case, _k, response, _request in _over_max(main)}
    with Findings() as findings:
        findings.check(len(set(outcomes.values())) <= 1, f"k over 50 is handled two ways: {outcomes}")
        if declared:
            findings.check(set(outcomes.values()) <= {declared}, f"k over 50 is handled {outcomes}, the "
                           f"declaration says {declared}")


@pytest.mark.req("ON-SRCH-007")
def test_search_and_streams_stay_in_the_active_collection(main, notebooks):
    """Queries that match a canary passage or title heading of every collection: nothing of
    another collection (its canaries) may come back, in search results or stream chunks."""
    main.enter("active")
    foreign = notebooks.tokens("other", "sealed")
    with Findings() as findings:
        for query in CROSS_QUERIES:
            args = {"query": query, "k": 50}
            body = main.ok("semantic_search", args)
            if not _count(body)[0]:  # nothing came back: nothing was checked
                findings.block("the query found nothing in the active collection (see ON-SRCH-012)",
                               by="ON-SRCH-012",
                               case=f"search:{query}", request=describe_call("semantic_search", args))
            found = hits(body, foreign, echoed=(query,))
            findings.check(not found, f"another collection's content came back: {found}",
                           case=f"search:{query}", request=describe_call("semantic_search", args))
            begun, request = main.raw("begin_result_stream", {"query": query})
            chunks = pull(main, str(tool_output(begun).get("stream_token"))) \
                if called_ok(begun) else []
            if not any(c.get("chunk_type") != "stream_complete" for c in chunks if isinstance(c, dict)):
                findings.block("the stream gave no chunk to check (see ON-STRM-004)",
                               by="ON-STRM-004",
                               case=f"stream:{query}", request=request)
            found = hits(chunks, foreign, echoed=(query,))
            findings.check(not found, f"another collection's content came back in a stream: {found}",
                           case=f"stream:{query}", request=request)


@pytest.mark.req("ON-SRCH-008")
def test_results_are_ranked_by_relevance(main, notebooks):
    """The seed's "ranked reference identifiers" with "relevance scores": no score rises down the
    list. Which passages come back is the implementation's (ON-SRCH-011)."""
    main.enter("active")
    with Findings() as findings:
        ranked = 0
        for passage in _notable(notebooks):
            args = {"query": passage.exact_text}
            results, _total = _count(main.ok("semantic_search", args))
            case, request = f"{passage.kind}:{passage.notebook_id}:{passage.page}", describe_call("semantic_search", args)
            scores = [r.get("relevance_score") for r in results if isinstance(r, dict)]
            ranked += len(scores) > 1
            findings.check(all(isinstance(s, (int, float)) for s in scores) and scores == sorted(scores, reverse=True),
                           f"relevance scores are not in descending order: {short(scores)}",
                           case=case, request=request)
        if not ranked:  # one result or none per query: no order to judge
            findings.block("no query of the fixture's passages gave two results to compare (see "
                           "ON-SRCH-012)", by="ON-SRCH-012")


@pytest.mark.req("ON-SRCH-011")
def test_a_passages_own_text_finds_it(main, notebooks):
    """The profile's reading (the seed promises no recall): a passage's whole text, searched with
    the default k, finds a reference on its notebook and page."""
    main.enter("active")
    with Findings() as findings:
        for passage in _notable(notebooks):
            args = {"query": passage.exact_text}
            results, _total = _count(main.ok("semantic_search", args))
            pointers = [(r.get("source_pointer") or {}) for r in results if isinstance(r, dict)]
            case, request = f"{passage.kind}:{passage.notebook_id}:{passage.page}", describe_call("semantic_search", args)
            findings.check(any(isinstance(p, dict) and p.get("notebook_id") == passage.notebook_id
                               and p.get("page") in (None, passage.page) for p in pointers),
                               f"no result points at its notebook and page (got {esc(pointers[:3], 200)})",
                           case=case, request=request)


def _found_or_block(findings: Findings, main, passage, *, req: str | None = None):
    """The server's passage for a fixture passage, or None with that case blocked."""
    req = own(req)
    try:
        return main.find("active", passage, req=req)
    except RequirementFailure as failure:
        for f in failure.findings:
            findings.items.append(Finding(f.req, f.message, f"{passage.kind}:{passage.notebook_id}", f.request,
                                          f.kind, f.by))
        return None


def verbatim_problems(notebooks: NotebooksFixture, role: str, body: dict[str, Any]) -> list[str]:
    """Why a fetch_passage body is not verbatim text of the fixture (empty: it is)."""
    provenance, passage = body.get("provenance") or {}, body.get("passage") or {}
    notebook = notebooks.collection(role).notebooks.get(provenance.get("notebook_id"))
    if notebook is None:
        return [f"provenance names notebook {esc(provenance.get('notebook_id'))}, not one of the collection's"]
    exact, before, after = (passage.get(k) for k in ("exact_text", "context_before", "context_after"))
    if not isinstance(exact, str) or not exact:
        return ["exact_text is empty or not a string"]
    problems = []
    page = provenance.get("page")
    if page is None:
        within = notebook.text
    elif isinstance(page, int) and 1 <= page <= len(notebook.page_texts):
        within = notebook.page_texts[page - 1]
    else:
        return [f"provenance names page {esc(page)}, which the notebook does not have"]
    if exact not in within:
        problems.append(f"exact_text is not verbatim text of {'the notebook' if page is None else f'page {page}'}: "
                        f"{esc(exact, 80)}")
    elif isinstance(before, str) and isinstance(after, str) and before + exact + after not in notebook.text:
        problems.append("context_before, exact_text and context_after are not one contiguous span of the notebook")
    return problems


@pytest.mark.req("ON-PASS-001")
def test_fetched_passages_are_verbatim_text_of_the_fixture(main, notebooks):
    main.enter("active")
    fetched = main.fetched_all([p.exact_text for p in _notable(notebooks)])
    with Findings() as findings:
        for _result, body, request in fetched:
            for problem in verbatim_problems(notebooks, "active", body):
                findings.fail(problem, case=str(body.get("source_id")), request=request)


@pytest.mark.req("ON-PASS-002")
def test_context_is_at_most_500_characters_on_each_side(main, notebooks, profile):
    main.enter("active")
    limit = int(profile.limits["context_chars"])
    fetched = main.fetched_all([p.exact_text for p in _notable(notebooks)])
    with Findings() as findings:
        for _result, body, request in fetched:
            passage = body.get("passage") or {}
            for side in ("context_before", "context_after"):
                value = passage.get(side)
                findings.check(isinstance(value, str) and len(value) <= limit,
                               f"{side} has {len(value) if isinstance(value, str) else short(value)} characters",
                               case=f"{body.get('source_id')}:{side}", request=request)


@pytest.mark.req("ON-PASS-003")
def test_provenance_names_the_passages_notebook_and_page(main, notebooks):
    """Each notable passage search finds (for one it does not, a stand-in: a passage search
    does find, compared with where its text is in the fixture)."""
    main.enter("active")
    seen: set[str] = set()
    with Findings() as findings:
        for passage in _notable(notebooks):
            found = _found_or_block(findings, main, passage)
            if found is None or found.source_id in seen:
                continue
            seen.add(found.source_id)
            provenance = found.body.get("provenance") or {}
            held = places(notebooks, "active", found, passage)
            case = f"{passage.kind}:{passage.notebook_id}"
            findings.check(provenance.get("notebook_id") in {n for n, _p in held},
                           f"notebook_id is {short(provenance.get('notebook_id'))}, not the notebook the passage "
                           f"is in ({short(sorted(str(n) for n, _p in held))})", case=case)
            notebook = notebooks.collection("active").notebooks.get(provenance.get("notebook_id"))
            if notebook is not None:
                findings.check(provenance.get("notebook_title") == notebook.title,
                               f"notebook_title is {short(provenance.get('notebook_title'))}", case=case)
            pages = {p for n, p in held if n == provenance.get("notebook_id")}
            findings.check(provenance.get("page") is None or provenance.get("page") in pages,
                           f"page is {short(provenance.get('page'))}, not {short(sorted(p for p in pages if p))}",
                           case=case)


def _foreign_source(main, notebooks):
    """A source id of the other collection (and None with the finding that kept it from being
    found), the active collection entered again afterwards."""
    main.enter("other")
    foreign, why = None, None
    try:
        foreign = main.find("other", notebooks.collection("other").passage("probe")).source_id
    except RequirementFailure as failure:
        why = failure.findings[0]
    main.enter("active")
    return foreign, why


@pytest.mark.req("ON-PASS-006")
def test_a_foreign_source_and_an_unknown_one_fail_with_their_types(main, notebooks):
    foreign, why = _foreign_source(main, notebooks)
    cases = [("unknown", "rc-no-such-source", "source_not_found")]
    if foreign is not None:
        cases += [("outside", foreign, "source_outside_collection"), ("unknown-suffix", foreign + "-rc-missing", None)]
    with Findings() as findings:
        if foreign is None:  # the unknown source is still checked
            findings.block(why.message, by=why.by, case="outside", request=why.request)
        for case, ident, expected in cases:
            args = {"source_id": ident}
            response, request = main.raw("fetch_passage", args)
            with one_case(findings, case, request):
                document = structured_error(response, main.profile, "fetch_passage", request=request)
                allowed = (expected,) if expected else ("source_not_found", "source_outside_collection")
                findings.check(error_type(document) in allowed,
                               f"the error type is {short(error_type(document))}, not {' or '.join(allowed)}",
                               case=case, request=request)


@pytest.mark.req("ON-PASS-008")
def test_provenance_timestamp_and_export_method_come_from_the_layout(main, notebooks):
    main.enter("active")
    seen: set[str] = set()
    with Findings() as findings:
        for passage in _notable(notebooks):
            found = _found_or_block(findings, main, passage)
            if found is None or found.source_id in seen:
                continue
            seen.add(found.source_id)
            provenance = found.body.get("provenance") or {}
            held = sorted(places(notebooks, "active", found, passage), key=str)
            # the place provenance names, if the text is there (else where it is wrong: ON-PASS-003's)
            nb_id, page = next(((n, p) for n, p in held if n == provenance.get("notebook_id")
                                and p in (provenance.get("page"), None)), held[0])
            if nb_id not in notebooks.collection("active").notebooks or page is None:
                continue
            notebook = notebooks.notebook("active", nb_id)
            case = f"{passage.kind}:{nb_id}:{page}"
            findings.check(provenance.get("timestamp") == notebook.page_timestamp(page),
                           f"timestamp is {short(provenance.get('timestamp'))}, the page's is "
                           f"{notebook.page_timestamp(page)}", case=case)
            findings.check(provenance.get("export_method") == notebook.front["export_method"],
                           f"export_method is {short(provenance.get('export_method'))}", case=case)


@pytest.mark.req("ON-SRCH-012")
def test_a_collections_passages_give_a_reference_fetch_passage_answers(main, notebooks):
    """The seed's semantic_search returns reference identifiers and fetch_passage takes one: in
    each collection entered, the searches of its passages' own texts (k 50) give at least one
    reference fetch_passage answers. Which passages they find is the server's (ON-SRCH-011)."""
    with Findings() as findings:
        for role in ("active", "other"):
            main.enter(role)
            try:
                main.stand_in(role)
            except RequirementFailure:
                findings.fail(f"no search of the {role} collection's passages (their own texts, k 50) gave a "
                              "reference fetch_passage answers", case=role)


@pytest.mark.req("ON-PASS-011")
def test_fetch_passage_errors_name_the_source_asked_for(main, new_session, notebooks):
    """The seed's fetch_passage Error Response has source_id beside type and message; its
    no_collection_context may leave it out (requireCollection's sketch has none). The ids sent
    have the form of the server's own: a source of another collection, and one of the active
    collection with digits appended (a server may decline to echo what is not an id at all)."""
    foreign, why = _foreign_source(main, notebooks)
    try:
        unknown = main.find("active", notebooks.collection("active").passage("probe")).source_id + "9999"
    except RequirementFailure:
        unknown = None
    cases = [("unknown", main, unknown, True)] if unknown else []
    if foreign is not None:
        cases += [("outside", main, foreign, True), ("no-collection", new_session(), foreign, False)]
    with Findings() as findings:
        if foreign is None:  # the unknown source is still checked
            findings.block(why.message, by=why.by, case="outside", request=why.request)
        for case, session, ident, required in cases:
            response, request = session.raw("fetch_passage", {"source_id": ident})
            if case == "unknown" and called_ok(response):
                continue  # the appended digits named a source after all: nothing to check here
            with one_case(findings, case, request):
                document = structured_error(response, main.profile, "fetch_passage", request=request)
                error = document.get("error") or {}
                if case == "unknown" and error_type(document) != "source_not_found":
                    continue  # the appended digits named no source of this form: nothing to check here
                if required or "source_id" in error:
                    findings.check(error.get("source_id") == ident, f"error.source_id is "
                                   f"{short(error.get('source_id'))}, not the id sent", case=case, request=request)
