"""vault-agent index freshness, produced by the suite: stale, pending or updating after an edit
until the index (or a watcher) runs, pending and updating while a held writer runs (the optional hold command), and
stale or incompatible when the server's vault.exclude differs from the index's."""

from __future__ import annotations

import os
import time

import pytest

from contract_tests.contracts.specs import choice
from contract_tests.synthetic.vault_agent import NOTES
from contract_tests.transport.limits import patience
from contract_tests.vault_agent.common import (
    Ids,
    error_code_of,
    mcp_payload,
    profiles_mark,
    protocol_version,
    rpc_error,
    wait_for,
)
from contract_tests.verdicts.checks import called_ok, short, structured_error
from contract_tests.verdicts.findings import Findings, RequirementFailure, describe_call

pytestmark = profiles_mark
LEXICAL = {"query": "tokbeta lantern", "mode": "lexical", "limit": 5}
# After an edit the Phase 2 documents allow any of these (status-api.md): `stale` ("changes may
# exist but are not reflected"), `pending` (a watcher knows and waits for debounce or the writer),
# `updating` (a writer is applying them). Each comes with a warning ("Stale, pending, and updating
# states include visible warnings").
NOT_FRESH = ("stale", "pending", "updating")
SETTLE_S = 30  # how long a watcher may take to finish what it started (the index command's own wait aside)
GRACE_S = 5  # how long search may take to show a hold after the hold command itself has exited


def _knows_edit(srv, names) -> bool:
    """The edited text is found and reported fresh: the edit is already indexed."""
    response, _ = _search(srv, names, {"query": "tokeditedword", "mode": "lexical"})
    paths = [r.get("path") for r in (mcp_payload(response).get("results") or [])] if called_ok(response) else []
    return _state(response)[0] == "fresh" and NOTES["beta"] in paths


@pytest.fixture(scope="module")
def fresh(suite, own_servers, contract_fixture, profile, tmp_path_factory, names):
    """A private fixture (edits and index runs are the point) with its own server and ids."""
    fixture = contract_fixture.private_copy(tmp_path_factory.mktemp("freshness"), profile)
    srv = own_servers.start(fixture)
    srv.initialize(protocol_version())
    yield fixture, srv, Ids(srv, names)
    srv.close(timeout=5)


def _search(srv, names, args=LEXICAL):
    server_args = names.args("search", args)
    return srv.call_tool("search", server_args, timeout=60), describe_call("search", server_args)


def _state(response) -> tuple[str | None, list]:
    if not called_ok(response):
        return None, []
    data = mcp_payload(response)
    warnings = data.get("warnings")
    return data.get("freshness"), warnings if isinstance(warnings, list) else []


def _edit(fixture, word: str) -> None:
    path = fixture.vault / NOTES["beta"]
    path.write_text(f"Beta was edited; it now holds {word} and tokbeta. lantern meadow river stone.\n", encoding="utf-8")
    later = time.time() + 2  # a size and mtime the index has never seen, whatever the clock's resolution
    os.utime(path, (later, later))


@pytest.mark.data_integrity
@pytest.mark.req("VA-FRESH-001")
def test_an_edit_makes_search_and_related_stale_with_a_warning_until_the_index_runs(fresh, names):
    fixture, srv, ids = fresh
    note = ids.note("alpha")
    related = {"type": "note", "id": note, "mode": "lexical"}
    with Findings() as findings:
        baseline = {}
        for tool, args in (("search", LEXICAL), ("related", related)):
            response = srv.call_tool(tool, names.args(tool, args))
            state, warnings = _state(response)
            if not findings.check(state == "fresh", f"before any edit {tool} reports freshness {short(state)}: "
                                  f"{short(response, 160)}", request=describe_call(tool, args)):
                return
            baseline[tool] = warnings
        _edit(fixture, "tokeditedword")
        for tool, args in (("search", LEXICAL), ("related", related)):
            response = srv.call_tool(tool, names.args(tool, args))
            state, warnings = _state(response)
            request = describe_call(tool, args)
            if state == "fresh" and _knows_edit(srv, names):
                continue  # a watcher already indexed the edit: nothing was ever out of date
            findings.check(state in NOT_FRESH, f"after an edit {tool} reports freshness {short(state)} "
                           f"(expected one of {', '.join(NOT_FRESH)})", case="after-edit", request=request)
            findings.check(len(warnings) > len(baseline[tool]), f"after an edit {tool} carries no freshness "
                           f"warning (warnings {short(warnings, 160)})", case="after-edit", request=request)
        fixture.index()
        seen: list = []

        def settled() -> bool:  # a watcher may still be applying the edit when the index command returns
            seen[:] = [_search(srv, names, {"query": "tokeditedword", "mode": "lexical"})]
            return _state(seen[0][0])[0] == "fresh"
        wait_for(settled, SETTLE_S, 0.5)
        response, request = seen[0]
        state, warnings = _state(response)
        findings.check(state == "fresh" and warnings == baseline["search"],
                       f"after the index command: freshness {short(state)}, warnings {short(warnings, 120)}",
                       case="reindexed", request=request)
        paths = [r.get("path") for r in (mcp_payload(response).get("results") or [])] if called_ok(response) else []
        findings.check(NOTES["beta"] in paths, f"after the index command the edited text is not found "
                       f"(found {short(paths)})", case="reindexed", request=request)


@pytest.mark.data_integrity
@pytest.mark.req("VA-FRESH-002")
def test_a_held_writer_shows_as_pending_then_updating_with_a_warning(fresh, names, own_servers):
    fixture, srv, _ids = fresh
    if not own_servers.command("hold"):
        pytest.skip("no hold command was given (--rc-command hold=CMD): pending and updating cannot be produced")
    with Findings() as findings:
        before, _request = _search(srv, names)
        _state_before, baseline = _state(before)
        for phase in ("pending", "updating"):
            _edit(fixture, f"tokheld{phase}")
            hold = fixture.state / f"hold-{phase}"
            hold.write_text("held by retrieval-contract\n")
            writer = own_servers.spawn(fixture, "hold", values={"hold_state": phase, "hold_file": str(hold)})
            seen: list = []
            try:
                def settled() -> bool:
                    """The state shows, or the writer ended GRACE_S ago without it (a command that
                    hands the lock to a process of its own and exits gets that long)."""
                    gone = writer.poll() is not None and time.monotonic() - writer.ended > GRACE_S
                    response, _ = _search(srv, names)
                    seen[:] = [response]
                    return _state(response)[0] == phase or gone
                wait_for(settled, patience(1.5), 0.2)  # 30 s by default; no document sets it
                response = seen[0] if seen else {}
                state, warnings = _state(response)
                ended = "" if writer.poll() is None else f" (the hold command exited {writer.poll()} while held)"
                if findings.check(state == phase, f"while the writer is held {phase} search reports freshness "
                                  f"{short(state)}{ended}", case=phase):
                    findings.check(len(warnings) > len(baseline), f"{phase} carries no warning "
                                   f"(warnings {short(warnings, 160)})", case=phase)
                    results = mcp_payload(response).get("results") if called_ok(response) else None
                    findings.check(bool(results), f"while {phase} search answers nothing from the last index",
                                   case=phase)
            finally:
                hold.unlink(missing_ok=True)
                code = writer.wait(60)
                writer.finished()
            findings.check(code == 0, f"the held index command exited {code} once released" if code is not None
                           else "the held index command did not exit within 60 s once released (killed)",
                           case=phase)


@pytest.fixture(scope="module")
def incompatible(suite, own_servers, contract_fixture):
    """A server whose vault.exclude differs from the one the index was built with."""
    config = contract_fixture.write_config("incompatible.toml", '[vault]\nexclude = ["drafts/"]\n')
    srv = own_servers.start(contract_fixture, extra={"config": str(config)})
    srv.initialize(protocol_version())
    yield srv
    srv.close(timeout=5)


@pytest.mark.data_integrity
@pytest.mark.req("VA-FRESH-003")
def test_a_changed_exclude_makes_search_and_related_fail_actionably_or_answer_stale(incompatible, server, names,
                                                                                   ids, profile):
    """indexing.md: a changed fingerprint leaves the index "stale or incompatible". An error must
    be INDEX_INCOMPATIBLE; an answer must say stale and warn (one warning more than the same call
    on the fresh index the session server serves), never fresh and never incompatible."""
    calls = [("search", {"query": "tokalpha"}), ("related", {"type": "note", "id": ids.note("alpha")})]
    declared = choice("exclude_change")
    with Findings() as findings:
        for tool, args in calls:
            args = names.args(tool, args)
            request = describe_call(tool, args)
            response = incompatible.call_tool(tool, args)
            if called_ok(response):
                state, warnings = _state(response)
                _fresh_state, baseline = _state(server.call_tool(tool, args))
                findings.check(state == "stale", f"{tool} after a vault.exclude change answers with freshness "
                               f"{short(state)} (an answer must report stale; incompatible must fail)",
                               case=tool,
                               request=request)
                findings.check(len(warnings) > len(baseline), f"{tool} answers a stale index without a "
                               f"warning (warnings {short(warnings, 160)})", case=tool, request=request)
                findings.check(declared != "incompatible", f"declared incompatible, but {tool} answered",
                               case=tool, request=request)
                continue
            error = rpc_error(response) or {}
            findings.check(error_code_of(response) == "INDEX_INCOMPATIBLE" and error.get("code") == -32002,
                           f"{tool} on an incompatible index: {short(response, 160)}", case=tool,
                           request=request)
            message = error.get("message")
            findings.check(not error or (isinstance(message, str) and message.strip()), "the error has no message", case=tool, request=request)
            findings.check(declared != "stale", f"declared stale, but {tool} failed", case=tool,
                           request=request)


@pytest.mark.data_integrity
@pytest.mark.req("VA-FRESH-004")
def test_get_note_and_get_chunk_on_an_incompatible_index_resolve_safely_or_refuse(incompatible, names, ids,
                                                                                  contract_fixture, profile):
    note = ids.note("alpha")
    text = (contract_fixture.vault / NOTES["alpha"]).read_text(encoding="utf-8")
    declared = choice("incompatible_get")
    with Findings() as findings:
        for tool, args in (("get_note", {"noteId": note}), ("get_chunk", {"noteId": note, "chunkIndex": 0})):
            args = names.args(tool, args)
            request = describe_call(tool, args)
            response = incompatible.call_tool(tool, args)
            if called_ok(response):
                content = mcp_payload(response).get("content")
                right = content == text if tool == "get_note" else isinstance(content, str) and content.strip() and \
                    content.strip() in text
                findings.check(right, f"{tool} answered content that is not the requested note's", case=tool,
                               request=request)
                findings.check(declared != "refuse", f"declared to refuse, but {tool} answered", case=tool,
                               request=request)
                continue
            try:
                structured_error(response, profile, f"{tool} on an incompatible index", request=request,
                                 case=tool)
            except RequirementFailure as failure:
                findings.items.extend(failure.findings)
            findings.check(declared != "resolve", f"declared to resolve, but {tool} refused", case=tool,
                           request=request)
