"""Unit tier: the tool surface, enter_collection, and the fixed texts, metadata and limits each
response carries (describe_world and list_constraints: test_world.py)."""

from __future__ import annotations

from typing import Any

import pytest

from contract_tests.contracts.specs import choice
from contract_tests.open_notebook.common import (
    ARTIFACT_DISCLAIMER,
    AVAILABLE_OPERATIONS,
    NO_ARTIFACT,
    NO_PASSAGE,
    NOTES,
    PASSAGE_DISCLAIMER,
    ROLES,
    STEP_ORDER,
    content_tokens,
    hits,
    listed_tools,
    profiles_mark,
    result_meta,
)
from contract_tests.verdicts.checks import called_ok, short, tool_output
from contract_tests.verdicts.findings import Findings, RequirementFailure, blocked, describe_call, esc
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark, pytest.mark.unit]


@pytest.mark.req("ON-TOOL-001")
def test_tools_list_is_exactly_the_seeds_eleven_tools(server, client, profile):
    names = [t.get("name") for t in listed_tools(server)]
    with Findings() as findings:
        for name in sorted(set(names) - set(profile.required_tools)):
            findings.fail(f"a tool the seed does not have is listed: {esc(name)}")
        for name in profile.required_tools:
            findings.check(name in names, f"{name} is not listed")
        findings.check(len(names) == len(set(names)), f"a tool is listed twice: {names}")


# The types the seed gives the properties it does not require, and its one enumeration.
OPTIONAL_TYPES = {("semantic_search", "k"): ("number", "integer")}
ENUMS = {("explain_provenance", "id_type"): ["source", "artifact"]}


@pytest.mark.req("ON-TOOL-002")
def test_no_input_schema_requires_more_than_the_seed_or_mistypes_an_optional_property(server, client, profile):
    """Required properties and the allowed property names are checked by the shared surface
    concern from the spec; here: nothing more is required, k is a number, id_type's enum."""
    required = {s["tool"]: set(s.get("requires", {})) for s in profile.concerns["surface"]["inputs"]}
    listed = listed_tools(server)
    with Findings() as findings:
        if not any(t.get("name") in required for t in listed):
            findings.block("none of the seed's tools is listed (see ON-TOOL-001)", by="ON-TOOL-001")
        for tool in listed:
            name, schema = tool.get("name"), tool.get("inputSchema") or {}
            if name not in required:
                continue
            extra = sorted(set(schema.get("required") or []) - required[name])
            findings.check(not extra, f"{name} requires {extra}, which the seed does not", case=name)
            props = schema.get("properties") or {}
            for (tool_name, prop), kinds in OPTIONAL_TYPES.items():
                if tool_name == name and prop in props:
                    findings.check(props[prop].get("type") in kinds,
                                   f"{name}.{prop} is typed {short(props[prop].get('type'))}, not number", case=name)
            for (tool_name, prop), values in ENUMS.items():
                if tool_name == name and prop in props:
                    findings.check(sorted(props[prop].get("enum") or []) == sorted(values),
                                   f"{name}.{prop} enum is {short(props[prop].get('enum'))}, not {values}", case=name)


def _metadata_readings(tool: dict) -> set[str]:
    """Where a listed tool declares itself read-only and reversible (ON-TOOL-003's readings)."""
    def says(meta) -> bool:
        if not isinstance(meta, dict):
            return False
        if meta.get("reversible") is True and meta.get("mutation", False) is False:
            return True
        return any(says(v) for v in meta.values() if isinstance(v, dict))  # e.g. under a namespaced key
    found = {place for place in ("metadata", "_meta") if says(tool.get(place))}
    notes = tool.get("annotations") or {}
    if notes.get("readOnlyHint") is True and notes.get("destructiveHint") is False:
        found.add("annotations")
    return found


@pytest.mark.req("ON-TOOL-003")
def test_every_tool_declares_itself_read_only_and_reversible(server, client, profile):
    """Accepted readings: the seed's `metadata` (reversible true, mutation false), the same in
    `_meta` (MCP's slot for what it does not define; SDKs drop unknown fields), or MCP's
    annotations readOnlyHint true and destructiveHint false (read-only and non-destructive is
    reversible); the declared one, if declared. Each tool on its own (one place for all: ON-TOOL-005)."""
    declared = choice("tool_metadata")
    readings = {t.get("name"): _metadata_readings(t) for t in listed_tools(server) if t.get("name") in profile.required_tools}
    with Findings() as findings:
        if not readings:
            findings.block("none of the seed's tools is listed (see ON-TOOL-001)", by="ON-TOOL-001")
        for name, found in readings.items():
            if declared:
                findings.check(declared in found, f"{name} does not declare read-only and reversible "
                               f"in its {declared} (declared); found in: {sorted(found) or 'nowhere'}", case=name)
            else:
                findings.check(found, f"{name} declares read-only and reversible nowhere (metadata, "
                               "_meta or annotations)", case=name)


@pytest.mark.req("ON-TOOL-005")
def test_one_place_declares_every_tool_read_only_and_reversible(server, client, profile):
    """A test of its own: the profile's reading never stops the seed's ON-TOOL-003. With a
    declaration the one place is the declared one."""
    declared = choice("tool_metadata")
    readings = {t.get("name"): _metadata_readings(t) for t in listed_tools(server) if t.get("name") in profile.required_tools}
    with Findings() as findings:
        if len([found for found in readings.values() if found]) < 2:
            findings.block("fewer than two tools declare themselves read-only and reversible "
                           "(see ON-TOOL-003)", by="ON-TOOL-003")
            return
        declaring = {name: found for name, found in readings.items() if found}
        common = set.intersection(*declaring.values())
        findings.check(common, f"no one place declares it for every tool: "
                       f"{short({k: sorted(v) for k, v in declaring.items()})}")
        if declared:
            findings.check(declared in common, f"the declared place {declared} is not one every tool declares it in "
                           f"(common: {sorted(common) or 'none'})")


@pytest.mark.req("ON-TOOL-004")
def test_no_resource_template_or_prompt_is_offered(server, client):
    with Findings() as findings:
        for method, key in (("resources/list", "resources"), ("resources/templates/list", "resourceTemplates"),
                            ("prompts/list", "prompts")):
            response = server.request(method, {})
            listed = (response.get("result") or {}).get(key) or []
            findings.check(not listed, f"{method} lists {len(listed)}: {short(listed, 200)}", case=key)
        for uri in ("notebook://coastal-survey", "file:///", "open-notebook://collections"):
            response = server.request("resources/read", {"uri": uri})
            contents = (response.get("result") or {}).get("contents")
            findings.check(not contents, f"resources/read {uri} returned content", case=uri)


def _provenance_places(response: dict[str, Any]) -> set[str]:
    return {place for place, meta in result_meta(response).items() if meta.get("provenance_available") is True}


@pytest.mark.req("ON-OBS-001")
def test_every_result_carries_provenance_available(walk):
    """In the result's `metadata` or `_meta` (the declared one, if declared), each result on its
    own (one place for all: ON-OBS-002)."""
    declared = choice("result_metadata")
    with Findings() as findings:
        if not walk.successes():
            findings.block(f"no call of the tour succeeded (see {walk.blocker or 'the tour'})",
                           by=walk.blocker or "tour")
        for tool, args, response in walk.successes():
            found = _provenance_places(response)
            if declared:
                findings.check(declared in found, f"no provenance_available true in the result's "
                               f"{declared} (declared)", case=tool, request=describe_call(tool, args))
            else:
                findings.check(found, "the result carries no provenance_available true (in metadata "
                               "or _meta)", case=tool, request=describe_call(tool, args))


@pytest.mark.req("ON-OBS-002")
def test_every_result_carries_provenance_available_in_one_place(walk):
    """A test of its own: the profile's reading never stops the seed's ON-OBS-001. With a
    declaration the one place is the declared one."""
    declared = choice("result_metadata")
    carried = [(tool, _provenance_places(response)) for tool, _args, response in walk.successes()]
    carried = [(tool, found) for tool, found in carried if found]
    places: dict[str, set[str]] = {}
    for tool, found in carried:
        places.setdefault(tool, set()).update(found)
    with Findings() as findings:
        if len(carried) < 2:
            findings.block("fewer than two results carry provenance_available true (see ON-OBS-001)",
                           by="ON-OBS-001")
            return
        common = set.intersection(*(found for _tool, found in carried))
        findings.check(common, f"results carry it in different places: "
                       f"{short({k: sorted(v) for k, v in places.items()})}")
        if declared:
            findings.check(declared in common, f"the declared place {declared} is not one every result carries it "
                           f"in (common: {sorted(common) or 'none'})")


@pytest.mark.req("ON-COLL-003")
def test_enter_collection_answers_its_collection_and_the_seeds_operations(main, notebooks):
    info = notebooks.collection("active")
    response, request = main.raw("enter_collection", {"collection_id": info.collection_id})
    if not called_ok(response) and main.enter_blocker(info.collection_id) == "ON-COLL-001":
        raise blocked(f"the fixture's collection {info.collection_id} is not listed (see ON-COLL-001)",
                      by="ON-COLL-001", request=request)
    body = main.ok("enter_collection", {"collection_id": info.collection_id})
    with Findings() as findings:
        findings.check(body.get("collection_id") == info.collection_id,
                       f"collection_id is {short(body.get('collection_id'))}")
        findings.check(body.get("title") == info.title, f"title is {short(body.get('title'))}")
        findings.check(body.get("context_established") is True, "context_established is not true")
        # An open list (the spec's rule): every operation of the seed, in any order, more allowed.
        operations = body.get("available_operations") if isinstance(body.get("available_operations"), list) else []
        missing = [op for op in AVAILABLE_OPERATIONS if op not in operations]
        findings.check(not missing, f"available_operations lacks {missing} (has "
                       f"{short(body.get('available_operations'))})")


@pytest.mark.req("ON-DOM-003")
def test_enter_collection_returns_no_content(main, notebooks):
    body = main.enter("active")
    found = hits(body, content_tokens(notebooks))
    with Findings() as findings:
        findings.check(not found, f"enter_collection returned content: {found}")


@pytest.mark.req("ON-SRCH-004")
def test_every_preview_snippet_has_at_most_100_characters(main, notebooks, profile):
    """Searched directly (every fixture passage's text, k 50), not only what the tour reached."""
    main.enter("active")
    limit = int(profile.limits["preview_chars"])
    seen = 0
    with Findings() as findings:
        for passage in notebooks.collection("active").passages:
            args = {"query": passage.exact_text, "k": 50}
            response, request = main.raw("semantic_search", args)
            if not called_ok(response):
                continue
            for result in (tool_output(response) or {}).get("results") or []:
                snippet = result.get("preview_snippet") if isinstance(result, dict) else None
                seen += 1
                findings.check(isinstance(snippet, str) and len(snippet) <= limit,
                               f"a {len(snippet)}-character snippet" if isinstance(snippet, str) else
                               f"preview_snippet is {short(snippet)}", request=request)
        if not seen:
            findings.block(f"no search of the fixture's passages returned a result (see {NO_PASSAGE})",
                           by=NO_PASSAGE)


def _served_as(findings: Findings, served: list[tuple[Any, str]], key: str, want: object,
               case: str | None = None, *, req: str | None = None, by: str, what: str) -> None:
    """Every response seen carries exactly `want` at `key`; none seen: blocked (`by`)."""
    req = own(req)
    if not served:
        findings.block(f"no {what} could be observed (see {by})", req=req, by=by, case=case)
    for value, request in served:
        findings.check(type(value) is type(want) and value == want, f"{key} is {esc(value, 200)}", req=req, case=case,
                       request=request)


def _from_walk(walk, tool: str, key: str, *, req: str | None = None) -> list[tuple[Any, str]]:
    req = own(req)
    return [((tool_output(r, req=req) or {}).get(key), describe_call(tool, a)) for _t, a, r in walk.successes(tool)]


def _direct(main, calls: list[tuple[str, dict]], key: str, *, req: str | None = None) -> list[tuple[Any, str]]:
    """`key` of each call that succeeded (each check makes its own calls: what the tour happened
    to reach is added, never relied on)."""
    req = own(req)
    out = []
    for tool, args in calls:
        response, request = main.raw(tool, args)
        if called_ok(response):
            out.append(((tool_output(response, req=req) or {}).get(key), request))
    return out


def _artifact_calls(main, *, req: str | None = None) -> list[tuple[str, dict]]:
    req = own(req)
    main.enter("active", req=req)
    return [("retrieve_artifact", {"artifact_id": wire}) for wire in main.artifact_map("active", req=req)]


@pytest.mark.req("ON-PASS-005")
def test_every_passage_carries_the_seeds_disclaimer(main, notebooks, walk):
    main.enter("active")
    fetched = main.fetched_all([p.exact_text for p in notebooks.collection("active").passages[:3]])
    served = [(body.get("disclaimer"), request) for _r, body, request in fetched]
    with Findings() as findings:
        _served_as(findings, served + _from_walk(walk, "fetch_passage", "disclaimer"), "disclaimer",
                   PASSAGE_DISCLAIMER, by=NO_PASSAGE, what="fetch_passage result")


@pytest.mark.req("ON-ART-003")
def test_every_artifact_carries_the_seeds_disclaimer(main, walk):
    served = _direct(main, _artifact_calls(main), "disclaimer")
    with Findings() as findings:
        _served_as(findings, served + _from_walk(walk, "retrieve_artifact", "disclaimer"), "disclaimer",
                   ARTIFACT_DISCLAIMER, by=NO_ARTIFACT, what="retrieve_artifact result")


@pytest.mark.req("ON-ART-004")
def test_every_artifact_says_immutable(main, walk):
    served = _direct(main, _artifact_calls(main), "immutable")
    with Findings() as findings:
        _served_as(findings, served + _from_walk(walk, "retrieve_artifact", "immutable"), "immutable", True,
                   by=NO_ARTIFACT, what="retrieve_artifact result")


@pytest.mark.req("ON-TEXT-001")
def test_responses_carry_the_seeds_fixed_notes(main, notebooks):
    """Each note from a call of its own: enter the collection, search, begin a stream, explain
    a source found by search (blocked by ON-SRCH-012 when none is)."""
    main.enter("active")
    probe = notebooks.collection("active").passage("probe")
    calls: dict[str, list[tuple[str, dict]]] = {
        "enter_collection": [("enter_collection", {"collection_id": ROLES["active"]})],
        "semantic_search": [("semantic_search", {"query": probe.exact_text})],
        "begin_result_stream": [("begin_result_stream", {"query": probe.exact_text})],
        "explain_provenance": []}
    blockers = {"enter_collection": "ON-COLL-003", "semantic_search": NO_PASSAGE,
                "begin_result_stream": "ON-STRM-001", "explain_provenance": NO_PASSAGE}
    try:
        found = main.find("active", probe)
        calls["explain_provenance"] = [("explain_provenance", {"id": found.source_id, "id_type": "source"})]
    except RequirementFailure:
        pass
    with Findings() as findings:
        for (tool, key), text in NOTES.items():
            _served_as(findings, _direct(main, calls[tool], key), key, text,
                       case=f"{tool}.{key}", by=blockers[tool], what=f"{tool} result")


@pytest.mark.req("ON-STRM-001")
def test_begin_result_stream_discloses_its_policy(main, notebooks, profile):
    main.enter("active")
    args = {"query": notebooks.collection("active").passage("probe").exact_text}
    body = main.ok("begin_result_stream", args)
    policy = body.get("disclosure_policy") or {}
    request = describe_call("begin_result_stream", args)
    with Findings() as findings:
        findings.check(isinstance(body.get("stream_token"), str) and body["stream_token"], "no stream_token",
                       request=request)
        findings.check(policy.get("step_order") == list(STEP_ORDER),
                       f"step_order is {short(policy.get('step_order'))}", request=request)
        findings.check(policy.get("chunk_strategy") == "progressive_depth",
                       f"chunk_strategy is {short(policy.get('chunk_strategy'))}", request=request)
        findings.check(policy.get("cancelable") is True, "cancelable is not true", request=request)
        findings.check(policy.get("timeout_s") == profile.limits["stream_timeout_s"],
                       f"timeout_s is {short(policy.get('timeout_s'))} on a server started with "
                       f"{profile.limits['stream_timeout_s']}", request=request)

