"""Integration tier: an identifier names one item. Two different passages and two different
artifacts fetched by their ids come back different, each the one its id names (a server that
answers every id with one record fails); another collection's source is not explained."""

from __future__ import annotations

from typing import Any

import pytest

from contract_tests.open_notebook.common import profiles_mark
from contract_tests.verdicts.checks import called_ok, short, tool_output
from contract_tests.verdicts.findings import Findings, describe_call
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark]
KINDS = ("probe", "fence", "unicode", "list")  # fixture passages on different notebooks or pages


def _top_result(main, passage, taken: set[str], *, req: str | None = None) -> dict[str, Any] | None:
    """The best-ranked search result of a passage's own text that points at its notebook, else
    its best-ranked result: a reference not yet taken (which passages a query finds is the
    server's, ON-SRCH-011)."""
    req = own(req)
    response, _ = main.raw("semantic_search", {"query": passage.exact_text})
    results = (tool_output(response, req=req) or {}).get("results") or [] if called_ok(response) else []
    usable = [r for r in results if isinstance(r, dict) and isinstance(r.get("reference_id"), str)
              and isinstance(r.get("source_pointer"), dict) and r["reference_id"] not in taken]
    return next((r for r in usable if r["source_pointer"].get("notebook_id") == passage.notebook_id),
                usable[0] if usable else None)


def _outside_pointer(notebooks, pointer: dict[str, Any], exact: Any) -> str | None:
    """Why exact_text is not text of the notebook (and page) a search result points at."""
    notebook = notebooks.collection("active").notebooks.get(pointer.get("notebook_id"))
    if notebook is None:
        return f"the search result points at {short(pointer.get('notebook_id'))}, not a notebook of the collection"
    page = pointer.get("page")
    within = notebook.page_texts[page - 1] if isinstance(page, int) and 1 <= page <= len(notebook.page_texts) \
        else notebook.text
    if not isinstance(exact, str) or not exact or exact not in within:
        return f"exact_text is not text of the notebook and page the search result points at: {short(exact, 80)}"
    return None


@pytest.mark.integration
@pytest.mark.req("ON-PASS-009")
def test_each_source_id_answers_its_own_passage(main, notebooks):
    main.enter("active")
    picked = []
    for passage in (notebooks.collection("active").passage(kind) for kind in KINDS):
        result = _top_result(main, passage, {r["reference_id"] for _p, r in picked})
        if result is not None:
            picked.append((passage, result))
    with Findings() as findings:
        if len(picked) < 2:
            findings.block("search gave fewer than two different references to fetch (see "
                           "ON-SRCH-012)", by="ON-SRCH-012")
        texts: dict[str, str] = {}
        for passage, result in picked:
            ident, pointer = result["reference_id"], result["source_pointer"]
            args = {"source_id": ident}
            request = describe_call("fetch_passage", args)
            body = main.ok("fetch_passage", args)
            exact = (body.get("passage") or {}).get("exact_text")
            findings.check(body.get("source_id") == ident,
                           f"source_id is {short(body.get('source_id'))}, not the one fetched", case=passage.kind,
                           request=request)
            notebook = (body.get("provenance") or {}).get("notebook_id")
            findings.check(notebook == pointer.get("notebook_id"), f"provenance names "
                           f"{short(notebook)}, the search result that gave the id {short(pointer.get('notebook_id'))}",
                           case=passage.kind, request=request)
            problem = _outside_pointer(notebooks, pointer, exact)
            findings.check(problem is None, str(problem), case=passage.kind, request=request)
            if isinstance(exact, str):
                texts[ident] = exact
        findings.check(len(set(texts.values())) == len(texts),
                       f"{len(texts)} different ids gave {len(set(texts.values()))} different passages")


@pytest.mark.integration
@pytest.mark.req("ON-ART-010")
def test_each_artifact_id_answers_its_own_artifact(main):
    main.enter("active")
    listed = [wire for ids in main.artifact_ids().values() for wire in ids]
    with Findings() as findings:
        if len(listed) < 2:
            findings.block("list_artifact_sets names fewer than two artifact ids (see ON-ART-012)",
                           by="ON-ART-012")
        contents: dict[str, str] = {}
        for wire in listed:
            args = {"artifact_id": wire}
            body = main.ok("retrieve_artifact", args)
            findings.check(body.get("artifact_id") == wire,
                           f"artifact_id is {short(body.get('artifact_id'))}, not the one retrieved", case=wire,
                           request=describe_call("retrieve_artifact", args))
            contents[wire] = repr(body.get("contents"))
        # The fixture's artifacts all differ: as many different contents as ids.
        findings.check(len(set(contents.values())) == len(contents),
                       f"{len(contents)} different ids gave {len(set(contents.values()))} different contents")


@pytest.mark.security
@pytest.mark.req("ON-PROV-004")
def test_another_collections_source_is_not_explained(main, notebooks):
    main.enter("other")
    foreign = main.find("other", notebooks.collection("other").passage("probe")).source_id
    main.enter("active")
    args = {"id": foreign, "id_type": "source"}
    response, request = main.raw("explain_provenance", args)
    with Findings() as findings:
        findings.check(not called_ok(response), "another collection's source was explained",
                       request=request)
