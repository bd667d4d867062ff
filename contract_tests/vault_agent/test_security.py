"""vault-agent data minimisation: compact search and related results, and no absolute path in
an error after the vault vanished under a running server."""

from __future__ import annotations

import json
import time

import pytest

from contract_tests.synthetic import canaries
from contract_tests.synthetic.vault_agent import build_vault_agent, relpath_attachment, token
from contract_tests.vault_agent.common import (
    Ids,
    blocked,
    http_call,
    mcp_payload,
    profiles_mark,
    protocol_version,
    rpc_error,
)
from contract_tests.verdicts.checks import called_ok, short
from contract_tests.verdicts.findings import Findings, describe_call

pytestmark = profiles_mark


def _chunk(server, names, note: str, index: int) -> str | None:
    response = server.call_tool("get_chunk", names.args("get_chunk", {"noteId": note, "chunkIndex": index}))
    return mcp_payload(response).get("content") if called_ok(response) else None


@pytest.mark.security
@pytest.mark.req("VA-OUT-001")
def test_search_and_related_results_carry_no_note_or_chunk_content(server, client, names, ids, contract_fixture,
                                                                   profile):
    front = contract_fixture.canaries["frontmatter"]
    limit = profile.limits["snippet_chars"]
    # The large note's chunks are long: a snippet cut at the wrong length shows only there.
    calls = [("search", {"query": f"{token(name)} lantern meadow", "limit": 50})
             for name in ("alpha", "gamma", "beta", "large")]
    calls += [("related", {"type": "note", "id": ids.note(name), "limit": 50, "mode": "lexical"})
              for name in ("alpha", "gamma")]
    chunks: dict[tuple[str, int], str | None] = {}
    with Findings() as findings:
        for tool, args in calls:
            server_args = names.args(tool, args)
            request = describe_call(tool, server_args)
            response = server.call_tool(tool, server_args)
            if not findings.check(called_ok(response), f"failed: {short(response, 160)}", request=request):
                continue
            data = mcp_payload(response)
            findings.check(front not in json.dumps(data).lower(), "a private frontmatter value is in the results",
                           request=request)
            for result in data.get("results") or []:
                if not isinstance(result, dict):
                    continue
                findings.check("content" not in result, f"a result carries content ({result.get('path')})",
                               request=request)
                snippet = result.get("snippet", "")
                if not findings.check(isinstance(snippet, str) and len(snippet) <= limit,
                                      f"a snippet of {len(snippet) if isinstance(snippet, str) else '?'} characters "
                                      f"(at most {limit})", request=request):
                    continue
                note, index = result.get("noteId"), result.get("chunkIndex")
                if snippet and isinstance(note, str) and isinstance(index, int):
                    if (note, index) not in chunks:
                        chunks[(note, index)] = _chunk(server, names, note, index)
                    whole = chunks[(note, index)]
                    findings.check(whole is None or snippet.strip() != whole.strip(),
                                   f"the snippet of {result.get('path')} chunk {index} is the whole chunk",
                                   request=request)


@pytest.mark.security
@pytest.mark.req("VA-ERR-007")
def test_no_error_names_an_absolute_path_after_the_vault_vanished(suite, own_servers, contract_fixture, profile, names,
                                                                  tmp_path_factory):
    fixture = contract_fixture.private_copy(tmp_path_factory.mktemp("vanish"), profile)
    srv = own_servers.start(fixture)
    srv.initialize(protocol_version())
    moved = fixture.vault.with_name("vault-gone")
    try:
        ids = Ids(srv, names)
        note = ids.notes.get("alpha", "0" * 32)
        fixture.vault.rename(moved)
        calls = [("search", {"query": "tokalpha"}), ("related", {"type": "note", "id": note}),
                 ("get_note", {"noteId": note}), ("get_chunk", {"noteId": note, "chunkIndex": 0}),
                 ("get_attachment", {"vaultRelativePath": "attachments/pic.png"}),
                 ("get_attachment", {"vaultRelativePath": "attachments/readme.txt", "download": True}),
                 ("get_note", {"noteId": ids.notes.get("beta", note)})]
        private = [str(fixture.root), str(fixture.state), fixture.canaries["path"]]
        with Findings() as findings:
            for tool, args in calls:
                args = names.args(tool, args)
                response = srv.call_tool(tool, args)
                error = rpc_error(response)
                result = response.get("result") or {}
                if error is None and not result.get("isError"):
                    continue  # an answer: results are VA-OUT-002's
                text = json.dumps(error if error is not None else result, ensure_ascii=False).lower()
                leaked = [p for p in private if p.lower() in text]
                findings.check(not leaked, "the error names a private absolute path",
                               request=describe_call(tool, args))
    finally:
        if moved.exists():
            moved.rename(fixture.vault)
        srv.close(timeout=5)



def _fetch_attachment(server, names, api, rel: str) -> list[tuple[str, str, object, bool]]:
    """(surface, request, whose logs, served) for the attachment `rel`, metadata and download,
    over MCP on the server under test and over the HTTP API the tools are compared with."""
    done = []
    for extra in ({}, {"download": True}):
        args = names.args("get_attachment", {"vaultRelativePath": rel, **extra})
        served = called_ok(server.call_tool("get_attachment", args, timeout=60))
        done.append(("MCP", describe_call("get_attachment", {**args, "vaultRelativePath": "<relpath>"}), server,
                     served))
        response = http_call(api, "get_attachment", {"vaultRelativePath": rel, **extra})
        done.append(("HTTP API", "GET /attachments/<relpath>" + ("?download=true" if extra else ""), api.rc_server,
                     response is not None and response.status_code == 200))
    return done


@pytest.mark.security
@pytest.mark.req("VA-LOG-002")
def test_no_log_line_names_the_vault_relative_path_of_an_attachment_it_served(server, client, names, api,
                                                                              contract_fixture):
    """Checked only on what served the attachment (its request was handled, and whatever it logs
    of one was written): the server under test over MCP, and the HTTP API (the same server over
    HTTP, a `serve` of the fixture over stdio)."""
    rel = relpath_attachment(contract_fixture.canaries)
    sources = {id(s): s for s in (server, api.rc_server)}
    marks = {key: s.transcript.mark() for key, s in sources.items()}
    fetched = _fetch_attachment(server, names, api, rel)
    time.sleep(1)  # a line written after the answer (an access log) has landed
    logs = {key: s.transcript.since(marks[key])[1] for key, s in sources.items()}
    for s in sources.values():
        s.rc_scanned = s.transcript.mark()  # judged here, not again by the canary guard
    with Findings() as findings:
        for key in sources:
            mine = [(surface, request) for surface, request, source, served in fetched
                    if source is sources[key] and served]
            for surface, request, source, served in fetched:
                if source is sources[key] and not served:
                    findings.block(f"{surface} did not serve the attachment, so no log of serving it was written to "
                                   "check", by="get_attachment", case=surface, request=request)
            if not mine:
                continue
            leaks = canaries.scan_lines(logs[key], contract_fixture.canaries, "stderr", {"relpath": "VA-LOG-002"})
            findings.check(not leaks, "a log line names the vault-relative path of an attachment it was asked for: "
                           f"{'; '.join(map(str, leaks))}", case=" and ".join(sorted({s for s, _ in mine})),
                           request="; ".join(r for _, r in mine))


# User excludes (indexing.md: `[vault].exclude`, gitignore-style, "added to the default
# exclusions"): a note folder and an attachment folder, on a private copy of the fixture indexed
# and served under them. The session server, without them, is the control: there the same note is
# found and the same attachment served.
EXCLUDE = '[vault]\nexclude = ["drafts/", "attachments/sub/"]\n'
EXCLUDED_NOTE, EXCLUDED_ATTACHMENT = "drafts/draft.md", "attachments/sub/nested.txt"


@pytest.fixture(scope="module")
def excluding(own_servers, contract_fixture, tmp_path_factory):
    fixture = build_vault_agent(tmp_path_factory.mktemp("exclude"))
    fixture.settings = dict(contract_fixture.settings)
    config = fixture.write_config("exclude.toml", EXCLUDE)
    if not fixture.command("index"):
        pytest.skip("no index command was given (--rc-command index=CMD or the declaration's commands)")
    proc = fixture.run_command("index", values={"config": str(config)})
    if proc.returncode != 0:
        raise blocked(f"the index command with vault.exclude {EXCLUDE.split('= ')[1].strip()} exited "
                      f"{proc.returncode}: nothing to serve", req="VA-VIS-001", by="the index command")
    srv = own_servers.start(fixture, extra={"config": str(config)})
    srv.initialize(protocol_version())
    yield srv
    srv.close(timeout=5)


def _finds(response, path: str) -> bool:
    results = mcp_payload(response).get("results") if called_ok(response) else None
    return any(isinstance(r, dict) and r.get("path") == path for r in results or [])


@pytest.mark.security
@pytest.mark.req("VA-VIS-001")
def test_user_excluded_paths_are_neither_found_nor_served(excluding, server, client, names):
    """search does not find a note under an excluded folder, and get_attachment (metadata and
    download) does not serve a file under one, where the same calls without the exclude do."""
    with Findings() as findings:
        args = names.args("search", {"query": token("draft"), "limit": 50})
        request = describe_call("search", args)
        if not _finds(server.call_tool("search", args), EXCLUDED_NOTE):
            findings.block(f"without vault.exclude search does not find {EXCLUDED_NOTE} either: no control",
                           by="VA-SRCH-001", case="search", request=request)
        else:
            response = excluding.call_tool("search", args)
            findings.check(called_ok(response), f"search failed: {short(response, 160)}", case="search",
                           request=request)
            findings.check(not _finds(response, EXCLUDED_NOTE), f"with drafts/ excluded search finds "
                           f"{EXCLUDED_NOTE}", case="search", request=request)
        for extra in ({}, {"download": True}):
            args = names.args("get_attachment", {"vaultRelativePath": EXCLUDED_ATTACHMENT, **extra})
            request, case = describe_call("get_attachment", args), "download" if extra else "metadata"
            if not called_ok(server.call_tool("get_attachment", args)):
                findings.block(f"without vault.exclude get_attachment does not serve {EXCLUDED_ATTACHMENT} "
                               "either: no control", by="get_attachment", case=case, request=request)
                continue
            response = excluding.call_tool("get_attachment", args)
            findings.check(not called_ok(response) and rpc_error(response) is not None,
                           f"with attachments/sub/ excluded get_attachment answers {short(response, 160)} "
                           "instead of an error", case=case, request=request)
