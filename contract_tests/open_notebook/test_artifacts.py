"""Integration tier: retrieve_artifact against the fixture's manifests and files, and
explain_provenance for artifacts and sources against the layout."""

from __future__ import annotations

import pytest

from contract_tests.open_notebook.common import error_type, places, profiles_mark
from contract_tests.verdicts.checks import called_ok, short
from contract_tests.verdicts.findings import Findings, RequirementFailure, describe_call
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark, pytest.mark.integration]


def _retrieved(main, *, req: str | None = None):
    """(wire id, fixture artifact, its manifest entry, its set's manifest, retrieve_artifact's body)."""
    req = own(req)
    main.enter("active", req=req)
    out = []
    for wire, artifact in main.artifact_map("active", req=req).items():
        manifest = main.fixture.manifest("active", artifact.artifact_set_id)
        entry = next(a for a in manifest["artifacts"] if a["artifact_id"] == artifact.local_id)
        out.append((wire, artifact, entry, manifest, main.ok("retrieve_artifact", {"artifact_id": wire}, req=req)))
    return out


@pytest.mark.req("ON-ART-001")
def test_an_artifact_has_its_sets_status_and_type(main):
    with Findings() as findings:
        for wire, artifact, _entry, manifest, body in _retrieved(main):
            findings.check(body.get("status") == manifest["status"],
                           f"status is {short(body.get('status'))}, the set's is {manifest['status']}", case=wire)
            findings.check(body.get("artifact_type") == manifest["artifact_type"],
                           f"artifact_type is {short(body.get('artifact_type'))}, the set's is "
                           f"{manifest['artifact_type']}", case=wire)


@pytest.mark.req("ON-ART-002")
def test_synthesis_metadata_labels_synthesized_artifacts(main):
    with Findings() as findings:
        for wire, _artifact, entry, manifest, body in _retrieved(main):
            got, stored = body.get("synthesis_metadata") or {}, entry["synthesis_metadata"]
            findings.check(got.get("synthesized") is (manifest["status"] == "offered"),
                           f"synthesized is {short(got.get('synthesized'))} in a {manifest['status']} set", case=wire)
            for key in ("confidence_note", "last_refreshed", "staleness_indicator"):
                findings.check(got.get(key) == stored[key],
                               f"{key} is {short(got.get(key))}, the manifest's is {short(stored[key])}", case=wire)


@pytest.mark.req("ON-ART-005")
def test_contents_are_the_full_payload(main):
    with Findings() as findings:
        for wire, artifact, _entry, _manifest, body in _retrieved(main):
            findings.check(body.get("contents") == main.fixture.payload(artifact),
                           f"contents differ from the fixture's {artifact.contents_path.rsplit('/', 1)[-1]}", case=wire)


@pytest.mark.req("ON-ART-006")
def test_provenance_is_the_manifests_chain(main):
    with Findings() as findings:
        for wire, _artifact, entry, _manifest, body in _retrieved(main):
            got, stored = body.get("provenance") or {}, entry["provenance"]
            for key in ("source_notebooks", "created_at", "created_by"):
                findings.check(got.get(key) == stored[key],
                               f"{key} is {short(got.get(key))}, the manifest's is {short(stored[key])}", case=wire)
            steps = [{k: s.get(k) for k in ("step_order", "tool", "timestamp", "parameters")}
                     for s in got.get("transformation_steps") or [] if isinstance(s, dict)]
            findings.check(steps == stored["transformation_steps"],
                           f"transformation_steps {short(steps, 200)} are not the manifest's", case=wire)


@pytest.mark.req("ON-ART-008")
def test_an_unknown_artifact_fails_with_artifact_not_found(main):
    main.enter("active")
    document = main.error("retrieve_artifact", {"artifact_id": "rc-no-such-artifact"},
                          "retrieve_artifact of an unknown id")
    with Findings() as findings:
        findings.check(error_type(document) == "artifact_not_found", f"the error type is {short(error_type(document))}")


def _origin_problems(origin: dict, notebook) -> list[str]:
    expected = {"notebook_id": notebook.notebook_id, "title": notebook.title, "author": notebook.front["author"],
                "created_at": notebook.front["created_at"]}
    return [f"origin_notebook.{k} is {short(origin.get(k))}, the layout's is {short(v)}"
            for k, v in expected.items() if origin.get(k) != v]


@pytest.mark.req("ON-PROV-001")
def test_an_artifacts_provenance_is_its_stored_chain(main):
    main.enter("active")
    with Findings() as findings:
        for wire, artifact in main.artifact_map("active").items():
            entry = next(a for a in main.fixture.manifest("active", artifact.artifact_set_id)["artifacts"]
                         if a["artifact_id"] == artifact.local_id)
            args = {"id": wire, "id_type": "artifact"}
            body = main.ok("explain_provenance", args)
            request = describe_call("explain_provenance", args)
            provenance = body.get("provenance") or {}
            origin = provenance.get("origin_notebook") or {}
            sources = entry["provenance"]["source_notebooks"]
            if findings.check(origin.get("notebook_id") in sources,
                              f"origin_notebook {short(origin.get('notebook_id'))} is not one of {sources}",
                              case=wire, request=request):
                for problem in _origin_problems(origin, main.fixture.notebook("active", origin["notebook_id"])):
                    findings.fail(problem, case=wire, request=request)
            steps = [{k: s.get(k) for k in ("step_order", "tool", "timestamp", "parameters")}
                     for s in provenance.get("transformation_steps") or [] if isinstance(s, dict)]
            stored = entry["provenance"]["transformation_steps"]
            findings.check(steps == stored, f"transformation_steps {short(steps, 200)} are not the "
                           "stored chain", case=wire, request=request)
            tools = provenance.get("tools_involved")
            # Every step's tool is named; naming more (an export tool, the server itself) is not wrong.
            findings.check(isinstance(tools, list) and set(tools) >= {s["tool"] for s in stored},
                           f"tools_involved {short(tools)} lacks a tool of the chain", case=wire, request=request)


@pytest.mark.req("ON-PROV-002")
def test_a_sources_provenance_names_its_notebook(main, notebooks):
    main.enter("active")
    seen: set[str] = set()
    with Findings() as findings:
        for kind in ("probe", "canary", "fence"):
            passage = notebooks.collection("active").passage(kind)
            try:
                found = main.find("active", passage)
            except RequirementFailure as failure:
                why = failure.findings[0]
                findings.block(why.message, by=why.by, case=kind, request=why.request)
                continue
            if found.source_id in seen:  # a stand-in already explained (search did not find this one)
                continue
            seen.add(found.source_id)
            args = {"id": found.source_id, "id_type": "source"}
            body = main.ok("explain_provenance", args)
            request = describe_call("explain_provenance", args)
            provenance = body.get("provenance") or {}
            origin = provenance.get("origin_notebook") or {}
            holders = sorted(str(n) for n, _page in places(notebooks, "active", found, passage))
            named = origin.get("notebook_id") if origin.get("notebook_id") in holders else holders[0]
            if named not in notebooks.collection("active").notebooks:
                findings.fail(f"the passage served is not text of the collection: no notebook to compare",
                              case=kind, request=request)
                continue
            for problem in _origin_problems(origin, notebooks.notebook("active", named)):
                findings.fail(problem, case=kind, request=request)
            for key in ("transformation_steps", "tools_involved", "confidence_notes"):
                findings.check(isinstance(provenance.get(key), list), f"{key} is not a list",
                               case=kind, request=request)


@pytest.mark.req("ON-ART-012")
def test_retrieve_artifact_answers_an_identifier_the_listing_gives(main):
    """Each listed set: an id its entry names, or its artifact_set_id where it names none (the
    seed's own listing), is answered by retrieve_artifact."""
    main.enter("active")
    with Findings() as findings:
        listed = main.artifact_ids()
        findings.check(bool(listed), "list_artifact_sets lists no artifact set")
        for set_id, ids in listed.items():
            answered = [w for w in ids if called_ok(main.raw("retrieve_artifact", {"artifact_id": w})[0])]
            findings.check(bool(answered), f"retrieve_artifact answers none of the identifiers the listing gives "
                           f"for the set ({short(ids)})", case=set_id,
                           request=describe_call("retrieve_artifact", {"artifact_id": ids[0] if ids else set_id}))
