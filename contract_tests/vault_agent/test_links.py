"""vault-agent link summaries: the fixture's linker note links one note that exists once
([[gamma]]), one title two notes share ([[rc twin]]) and one that names nothing ([[rc-ghost-note]]).
Link summaries are optional (retrieval.md: note and chunk retrieval "may include" them): only what
an answer that carries them says is checked (a server whose answers carry none has nothing to
check: the requirement is skipped, saying so, never passed), and that unresolved links raise no
warning."""

from __future__ import annotations

import json

import pytest

from contract_tests.synthetic.vault_agent import AMBIGUOUS, LINKER, MISSING
from contract_tests.vault_agent.common import blocked, mcp_payload, profiles_mark
from contract_tests.verdicts.checks import called_ok, short
from contract_tests.verdicts.findings import Findings
from contract_tests.verdicts.running import own

pytestmark = profiles_mark
TARGETS = (AMBIGUOUS, MISSING, "gamma")
NO_SUMMARY = "carries no link summary (optional: retrieval.md's 'may include'), so there is nothing to check"


def _linker(calls, *, req: str | None = None) -> tuple[str, list[int], dict]:
    """The linker note's id, the chunk indexes search showed for it, and that search's payload."""
    req = own(req)
    response, _ = calls.raw("search", {"query": "toklinker", "limit": 50})
    data = mcp_payload(response) if called_ok(response) else {}
    mine = [r for r in data.get("results") or [] if isinstance(r, dict) and r.get("path") == LINKER]
    if not mine or not isinstance(mine[0].get("noteId"), str):
        raise blocked(f"search toklinker did not find {LINKER}", req=req, by="VA-SRCH-001")
    chunks = sorted({r["chunkIndex"] for r in mine if isinstance(r.get("chunkIndex"), int)})
    return mine[0]["noteId"], chunks, data


def _named(value, target: str) -> bool:
    """Whether `target` appears in any string of a summary entry (entries' fields are left open)."""
    return target.casefold() in json.dumps(value, ensure_ascii=False).casefold()


@pytest.mark.integration
@pytest.mark.req("VA-LINK-001")
def test_an_ambiguous_or_missing_wikilink_is_never_listed_as_resolved(calls):
    note, _chunks, _ = _linker(calls)
    response, request = calls.raw("get_note", {"noteId": note})
    if called_ok(response) and "links" not in mcp_payload(response):
        pytest.skip(f"get_note of {LINKER} {NO_SUMMARY}")
    with Findings() as findings:
        if not findings.check(called_ok(response), f"get_note failed: {short(response, 160)}",
                              request=request):
            return
        data = mcp_payload(response)
        links = data["links"]
        if not findings.check(isinstance(links, dict) and isinstance(links.get("resolved"), list)
                              and isinstance(links.get("unresolved"), list),
                              f"links is not {{resolved: [...], unresolved: [...]}}: {short(links, 160)}",
                              request=request):
            return
        for target in (AMBIGUOUS, MISSING):
            wrong = [entry for entry in links["resolved"] if _named(entry, target)]
            findings.check(not wrong, f"[[{target}]] ({'two' if target == AMBIGUOUS else 'no'} matching notes) "
                           f"is listed as resolved: {short(wrong, 160)}", case=target, request=request)


@pytest.mark.integration
@pytest.mark.req("VA-LINK-002")
def test_a_chunk_summarises_only_the_links_it_contains(calls):
    note, chunks, _ = _linker(calls)
    if not chunks:
        raise blocked(f"search toklinker showed no chunk index of {LINKER}", by="VA-SRCH-001")
    summarised = 0
    with Findings() as findings:
        for index in chunks:
            response, request = calls.raw("get_chunk", {"noteId": note, "chunkIndex": index})
            if not findings.check(called_ok(response), f"get_chunk failed: {short(response, 160)}",
                                  case=str(index), request=request):
                continue
            data = mcp_payload(response)
            content = data.get("content") if isinstance(data.get("content"), str) else ""
            if "links" not in data:
                continue
            summarised += 1
            foreign = [t for t in TARGETS if f"[[{t}]]" not in content and _named(data["links"], t)]
            findings.check(not foreign, f"chunk {index} lists links it does not contain: {foreign}",
                           case=str(index), request=request)
        if not summarised and not findings.items:
            pytest.skip(f"get_chunk of {LINKER}'s chunks {chunks} {NO_SUMMARY}")


def _codes(data) -> set:
    return {w.get("code") for w in data.get("warnings") or [] if isinstance(w, dict)}


@pytest.mark.integration
@pytest.mark.req("VA-LINK-003")
def test_unresolved_and_ambiguous_wikilinks_raise_no_warning(calls, ids):
    note, _chunks, _search = _linker(calls)
    pairs = [("get_note", {"noteId": note}, {"noteId": ids.note("alpha")}),
             ("search", {"query": "toklinker"}, {"query": "tokalpha"})]
    with Findings() as findings:
        for tool, linked, plain in pairs:
            got, request = calls.raw(tool, linked)
            base, base_request = calls.raw(tool, plain)
            if not (findings.check(called_ok(got), f"failed: {short(got, 160)}", case=tool, request=request)
                    and findings.check(called_ok(base), f"failed: {short(base, 160)}", case=tool,
                                       request=base_request)):
                continue
            extra = _codes(mcp_payload(got)) - _codes(mcp_payload(base))
            findings.check(not extra, f"warnings {sorted(map(str, extra))} that the same call on a note "
                           "without wikilinks does not carry", case=tool, request=request)
