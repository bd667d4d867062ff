"""vault-agent result fields the documents fix: no echo of the raw query, scores from 0 to 1,
the Markdown content type of notes and chunks, a note's whole text and a chunk's own text only;
and a stdio server that listens on no port."""

from __future__ import annotations

import json

import pytest

from contract_tests.synthetic.vault_agent import NOTES
from contract_tests.transport.system import inet_sockets, needs_proc, process_tree
from contract_tests.vault_agent.common import mcp_payload, profiles_mark
from contract_tests.verdicts.checks import called_ok, short
from contract_tests.verdicts.findings import Findings, describe_call

pytestmark = profiles_mark
MARKDOWN = "text/markdown; charset=utf-8"


@pytest.mark.security
@pytest.mark.req("VA-OUT-003")
def test_search_does_not_echo_the_raw_query(calls, contract_fixture):
    """The query holds a word no note has (the query canary), so no snippet can carry it."""
    word = contract_fixture.canaries["query"]
    with Findings() as findings:
        for args in ({"query": f"tokalpha {word}"}, {"query": f"tokbeta {word}", "mode": "lexical", "limit": 3}):
            response, request = calls.raw("search", args)
            if findings.check(called_ok(response), f"failed: {short(response, 160)}", request=request):
                findings.check(word not in json.dumps(mcp_payload(response)).lower(),
                               "the payload carries the raw query", request=request)


@pytest.mark.integration
@pytest.mark.req("VA-OUT-004")
def test_every_search_and_related_score_is_between_0_and_1(calls, ids):
    cases = [("search", {"query": "tokalpha lantern meadow", "limit": 50}),
             ("search", {"query": "lantern", "mode": "hybrid", "limit": 50}),
             ("related", {"type": "note", "id": ids.note("alpha"), "limit": 50, "mode": "lexical"})]
    with Findings() as findings:
        for tool, args in cases:
            response, request = calls.raw(tool, args)
            if not findings.check(called_ok(response), f"failed: {short(response, 160)}",
                                  request=request):
                continue
            results = [r for r in mcp_payload(response).get("results") or [] if isinstance(r, dict)]
            bad = [r.get("score") for r in results if not (isinstance(r.get("score"), (int, float))
                                                         and not isinstance(r.get("score"), bool)
                                                         and 0 <= r["score"] <= 1)]
            findings.check(results and not bad, f"scores outside 0..1: {short(bad[:5])}"
                           if results else "no result to read a score from", request=request)


@pytest.mark.integration
@pytest.mark.req("VA-OUT-005")
def test_notes_and_chunks_come_as_utf_8_markdown(calls, ids):
    note = ids.note("alpha")
    with Findings() as findings:
        for tool, args in (("get_note", {"noteId": note}), ("get_chunk", {"noteId": note, "chunkIndex": 0})):
            response, request = calls.raw(tool, args)
            if findings.check(called_ok(response), f"failed: {short(response, 160)}", request=request):
                got = mcp_payload(response).get("contentType")
                findings.check(isinstance(got, str) and got.replace(" ", "").lower() == MARKDOWN.replace(" ", ""),
                               f"contentType {short(got)}, not {MARKDOWN}", request=request)


@needs_proc
@pytest.mark.e2e
@pytest.mark.req("VA-STDIO-009")
def test_the_stdio_server_listens_on_no_port(suite, server, client, names):
    if suite.transport != "stdio" or server.proc is None:
        pytest.skip("a requirement of the stdio process the suite started")
    server.call_tool("search", names.args("search", {"query": "tokalpha"}))
    listening = [s for pid in process_tree(server.pid) for s in inet_sockets(pid)
                 if s.startswith("tcp") and s.split()[2].endswith(":0000")]
    with Findings() as findings:
        findings.check(not listening, f"the stdio process holds listening sockets: {listening[:3]}")


@pytest.mark.integration
@pytest.mark.req("VA-CHUNK-001")
def test_chunk_content_excludes_the_frontmatter(calls, ids, contract_fixture):
    """The alpha note opens with frontmatter holding the frontmatter canary in a private key."""
    note, front = ids.note("alpha"), contract_fixture.canaries["frontmatter"]
    with Findings() as findings:
        for index in ids.chunks.get("alpha") or [0]:
            response, request = calls.raw("get_chunk", {"noteId": note, "chunkIndex": index})
            if findings.check(called_ok(response), f"failed: {short(response, 160)}",
                              request=request):
                content = mcp_payload(response).get("content")
                findings.check(isinstance(content, str) and front not in content.lower()
                               and not content.lstrip().startswith("---"),
                               f"chunk {index} carries the note's frontmatter", request=request)


@pytest.mark.integration
@pytest.mark.req("VA-OUT-006")
def test_get_note_returns_the_whole_file_text_frontmatter_included(calls, ids, contract_fixture):
    """alpha opens with frontmatter; gamma has headings and none."""
    with Findings() as findings:
        for name in ("alpha", "gamma"):
            text = (contract_fixture.vault / NOTES[name]).read_text(encoding="utf-8")
            response, request = calls.raw("get_note", {"noteId": ids.note(name)})
            if findings.check(called_ok(response), f"failed: {short(response, 160)}", request=request):
                content = mcp_payload(response).get("content")
                findings.check(content == text, f"the content of {NOTES[name]} is not the file's text "
                               f"({len(content) if isinstance(content, str) else short(content)} characters, the file "
                               f"{len(text)})", request=request)


def _chunks(calls, note: str, most: int = 10) -> list[str]:
    """The contents of chunks 0, 1, ... of a note, up to the first call that does not answer."""
    contents = []
    for index in range(most):
        response, _request = calls.raw("get_chunk", {"noteId": note, "chunkIndex": index})
        content = mcp_payload(response).get("content") if called_ok(response) else None
        if not isinstance(content, str):
            break
        contents.append(content)
    return contents


@pytest.mark.integration
@pytest.mark.req("VA-OUT-007")
def test_get_chunk_returns_only_its_own_chunk(calls, names, ids):
    """alpha has three heading sections and gamma two (indexing.md: notes are split into heading
    sections), so each has two chunks or more; one chunk never holds the whole of its neighbour."""
    with Findings() as findings:
        pairs = 0
        for name in ("alpha", "gamma"):
            contents = _chunks(calls, ids.note(name))
            for index, (this, following) in enumerate(zip(contents, contents[1:])):
                pairs += 1
                a, b = this.strip(), following.strip()
                request = describe_call("get_chunk", names.args("get_chunk", {"noteId": ids.notes[name],
                                                                              "chunkIndex": index}))
                findings.check(not (b and b in a) and not (a and a in b),
                               f"chunk {index} of {NOTES[name]} holds the whole of chunk {index + 1}, or the other "
                               "way round: get_chunk answered more than the requested chunk", request=request)
        if not pairs:
            findings.block("neither alpha nor gamma answered two chunks (get_chunk 0 and 1)",
                           by="fewer than two chunks")
