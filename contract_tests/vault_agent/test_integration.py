"""vault-agent over one transport: protocol versions and malformed input, search finding notes,
modes without embeddings, related excluding its input, and the size limits."""

from __future__ import annotations

import base64
import hashlib
import json
import threading

import httpx
import pytest

from contract_tests.contracts.specs import choice
from contract_tests.synthetic.vault_agent import NOTES, token
from contract_tests.transport.http import MCP_HEADERS, messages_of
from contract_tests.transport.stdio import initialize_message, initialize_params
from contract_tests.vault_agent.common import (
    OLDEST_VERSION,
    error_code_of,
    mcp_payload,
    per_requirement,
    profiles_mark,
    rpc_error,
    sweep_verdict,
)
from contract_tests.verdicts.checks import called_ok, short
from contract_tests.verdicts.findings import Findings

pytestmark = profiles_mark
UNSUPPORTED = ("2024-11-05",)  # older than 2025-03-26; MCP-INIT-003 sends one that does not exist


def _initialize_all(suite, servers, server, fixture, params: list[dict], after) -> list[dict]:
    """initialize with each params, each on a session of its own: a fresh stdio process apiece
    (one session per process), or a new session on the running HTTP server. `after(srv)` runs on
    the first stdio server once it is initialized (the malformed-input probes share it)."""
    if suite.transport == "http":
        out = []
        for p in params:
            response = httpx.post(server.url, json={**initialize_message(), "params": p}, headers=MCP_HEADERS,
                                  timeout=30)
            messages = [json.loads(t) for t in messages_of(response)]
            out.append(messages[0] if messages else {"rc_http_status": response.status_code, "error": {}})
        return out
    started = [servers.start(fixture) for _ in params]  # side by side: a fresh process is the point
    results: list[dict] = [{} for _ in params]

    def one(i: int) -> None:
        try:
            results[i] = started[i].request("initialize", params[i], timeout=30)
            if i == 0 and "result" in results[0]:
                started[0].notify("notifications/initialized")
                after(started[0])
        finally:
            started[i].close(timeout=5)
    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(params))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def _malformed(srv, seen: dict) -> None:
    """A line that is not JSON, then a batch of two pings, then one ping (stdio)."""
    srv.send_bytes(b'{"jsonrpc": "2.0", "id": "rc-bad", "method": \n')
    seen["after_bad"] = srv.request("ping", timeout=15)
    srv.send_bytes(b'[{"jsonrpc": "2.0", "id": "rc-b1", "method": "ping"}, '
                   b'{"jsonrpc": "2.0", "id": "rc-b2", "method": "ping"}]\n')
    seen["after_batch"] = srv.request("ping", timeout=15)
    seen["unsolicited"] = list(srv.unsolicited)


def _check_versions(findings, answers) -> None:
    first = answers[OLDEST_VERSION].get("result") or {}
    findings.check(first.get("protocolVersion") == OLDEST_VERSION,
                   f"initialize {OLDEST_VERSION} answered {short(answers[OLDEST_VERSION], 160)}", req="VA-PROTO-001",
                   case=OLDEST_VERSION)
    findings.check("tools" in (first.get("capabilities") or {}), "no tools capability", req="VA-PROTO-001",
                   case=OLDEST_VERSION)
    declared = choice("unsupported_version")
    for version in UNSUPPORTED:
        answer = answers[version]
        offered = (answer.get("result") or {}).get("protocolVersion")
        if "result" in answer:
            findings.check(offered != version and isinstance(offered, str) and offered >= OLDEST_VERSION,
                           f"initialize {version} was answered with {short(offered)}", req="VA-PROTO-002", case=version)
            findings.check(declared in (None, "counter-offer"),
                           "declared an error for an unsupported version, but counter-offered", req="VA-PROTO-002",
                           case=version)
        else:
            findings.check(rpc_error(answer) is not None,
                           f"initialize {version}: neither a result nor a JSON-RPC error: {short(answer, 160)}",
                           req="VA-PROTO-002",
                           case=version)
            findings.check(declared in (None, "error"),
                           "declared a counter-offer for an unsupported version, but answered an error",
                           req="VA-PROTO-002", case=version)
    missing = answers[None]
    code = (rpc_error(missing) or {}).get("code")
    findings.check(code == -32600, f"initialize without protocolVersion answered "
                   f"{short(missing, 160)}; expected the JSON-RPC error -32600", req="VA-PROTO-003", case="no-version")


def _check_malformed_stdio(findings, seen) -> None:
    messages = [m for item in seen["unsolicited"] for m in (item if isinstance(item, list) else [item])
                if isinstance(m, dict)]
    findings.check(any(m.get("error", {}).get("code") == -32700 for m in messages),
                   f"no -32700 error for a line that is not JSON (unsolicited answers: {short(messages, 160)})",
                   req="VA-PROTO-004")
    findings.check("result" in seen["after_bad"], "the server stopped answering after the bad line", req="VA-PROTO-004")
    answered = {m.get("id") for m in messages if "result" in m}
    refused = any(m.get("error", {}).get("code") == -32600 for m in messages)
    declared = choice("batch")
    findings.check("result" in seen.get("after_batch", {}), "the server stopped answering after a batch",
                   req="VA-PROTO-005")
    if declared == "answer":
        findings.check({"rc-b1", "rc-b2"} <= answered, f"declared to answer batches; got "
                       f"{short(messages, 160)}", req="VA-PROTO-005")
    elif declared == "refuse":
        findings.check(refused, f"declared to refuse batches; got {short(messages, 160)}", req="VA-PROTO-005")
    else:
        findings.check({"rc-b1", "rc-b2"} <= answered or refused,
                       f"a batch got neither an answer per request nor -32600: {short(messages, 160)}",
                       req="VA-PROTO-005")


def _check_malformed_http(findings, server) -> None:
    response = httpx.post(server.url, content=b'{"jsonrpc": "2.0", "id": 1, "method": ',
                          headers={**server.headers(), "Mcp-Session-Id": server.session_id or ""}, timeout=30)
    try:
        body = response.json()
    except ValueError:
        body = None
    code = body.get("error", {}).get("code") if isinstance(body, dict) else None
    findings.check(response.status_code == 400 and code == -32700,
                   f"got HTTP {response.status_code} {short(response.text, 160)}", req="VA-PROTO-004")


PROTO = ("VA-PROTO-001", "VA-PROTO-002", "VA-PROTO-003", "VA-PROTO-004", "VA-PROTO-005")


@pytest.mark.integration
@per_requirement(*PROTO)
def test_the_handshake_and_malformed_input_are_answered_as_the_documents_say(req, suite, servers, server, client,
                                                                            contract_fixture):
    sweep_verdict("handshake", req, PROTO, lambda findings: _handshake(suite, servers, server, contract_fixture,
                                                                       findings))


def _handshake(suite, servers, server, contract_fixture, findings) -> None:
    asked = [OLDEST_VERSION, *UNSUPPORTED, None]
    params = [initialize_params(v) for v in asked]
    del params[-1]["protocolVersion"]  # the last asks with no protocolVersion at all
    seen: dict = {}
    answers = dict(zip(asked, _initialize_all(suite, servers, server, contract_fixture, params,
                                              lambda srv: _malformed(srv, seen))))
    _check_versions(findings, answers)
    if suite.transport == "http":
        _check_malformed_http(findings, server)
    elif "after_bad" in seen:
        _check_malformed_stdio(findings, seen)
    else:
        for req in ("VA-PROTO-004", "VA-PROTO-005"):
            findings.block(f"initialize {OLDEST_VERSION} failed on a fresh server", req=req, by="VA-PROTO-001")


@pytest.mark.integration
@pytest.mark.req("VA-SRCH-001")
def test_search_finds_each_note_by_a_word_only_it_holds(ids):
    with Findings() as findings:
        findings.held()  # every note was searched for by its own word when the ids were found
        for problem in ids.problems:
            findings.fail(problem)


@pytest.mark.integration
@pytest.mark.req("VA-SRCH-002")
def test_search_without_a_limit_answers_at_most_ten_results(calls):
    """The large note's token is in each of its many chunks (Phase 1 splits a note over the
    chunk size): with limit 50 the search shows how many results there are to give."""
    req, query = "VA-SRCH-002", {"query": token("large"), "mode": "lexical"}
    with Findings() as findings:
        counts = {}
        for label, args in (("limit 50", {**query, "limit": 50}), ("no limit", query)):
            response, request = calls.raw("search", args)
            results = mcp_payload(response).get("results") if called_ok(response) else None
            if not isinstance(results, list):
                if label == "limit 50":  # nothing to compare with: not this requirement's failure
                    findings.block(f"search with limit 50 failed: {short(response, 160)}", req=req, request=request,
                                   by="search failed")
                else:
                    findings.fail(f"search without a limit failed: {short(response, 160)}", req=req, request=request)
                return
            counts[label] = len(results)
        if counts["limit 50"] <= 10 and counts["no limit"] == counts["limit 50"]:
            # A default of 10 and any larger one answer alike: nothing here tells them apart.
            findings.block(f"search with limit 50 answered only {counts['limit 50']} results for the large note's "
                           "token (its 210 KB in chunks of at most 4,000 characters, indexing.md, are over 50): "
                           "too few to tell a default of 10 from a larger one", req=req, request=request,
                           by="search with limit 50")
            return
        findings.check(counts["no limit"] == min(10, counts["limit 50"]),
                       f"without a limit search answered {counts['no limit']} results; with limit 50 it answered "
                       f"{counts['limit 50']} (the default limit is 10)", req=req, request=request)


def _codes(payload) -> list[str]:
    return [w.get("code") for w in payload.get("warnings", []) if isinstance(w, dict)]


@pytest.mark.integration
@pytest.mark.req("VA-MODE-001")
def test_without_embeddings_search_and_related_use_lexical_with_the_documented_warnings(calls, ids):
    with Findings() as findings:
        for tool, args, warn in (("search", {"query": "tokalpha"}, None),
                                 ("related", {"type": "note", "id": ids.note("alpha")}, False),
                                 ("search", {"query": "tokalpha", "mode": "hybrid"}, True)):
            response, request = calls.raw(tool, args)
            if not findings.check(called_ok(response), f"failed: {short(response, 160)}", request=request):
                continue
            data = mcp_payload(response)
            findings.check(data.get("usedMode") == "lexical",
                           f"usedMode is {short(data.get('usedMode'))}, not lexical", request=request)
            if warn is not None:
                findings.check(("EMBEDDING_UNAVAILABLE" in _codes(data)) is warn,
                               f"warnings {_codes(data)}: EMBEDDING_UNAVAILABLE {'missing' if warn else 'present'}",
                               request=request)


@pytest.mark.integration
@pytest.mark.req("VA-REL-001")
def test_related_never_lists_its_own_input(calls, ids):
    with Findings() as findings:
        for name in ("alpha", "gamma"):
            note = ids.note(name)
            for args, own in (({"type": "note", "id": note, "limit": 50, "mode": "lexical"}, None),
                              ({"type": "chunk", "id": f"{note}:0", "limit": 50, "mode": "lexical"}, 0)):
                response, request = calls.raw("related", args)
                if not findings.check(called_ok(response), f"failed: {short(response, 160)}",
                                      request=request):
                    continue
                results = mcp_payload(response).get("results") or []
                mine = [r for r in results if isinstance(r, dict) and r.get("noteId") == note
                        and (own is None or r.get("chunkIndex") == own)]
                findings.check(not mine, f"related lists its own input: {short(mine[:2], 160)}",
                               request=request)


@pytest.mark.integration
@pytest.mark.req("VA-SIZE-001")
def test_an_oversized_note_needs_allow_large(calls, ids, contract_fixture):
    note = ids.note("large")
    text = (contract_fixture.vault / NOTES["large"]).read_text(encoding="utf-8")
    with Findings() as findings:
        response, request = calls.raw("get_note", {"noteId": note})
        findings.check(error_code_of(response) == "QUERY_TOO_LARGE", f"without allowLarge: {short(response, 160)}",
                       request=request)
        response, request = calls.raw("get_note", {"noteId": note, "allowLarge": True})
        if findings.check(called_ok(response), f"with allowLarge: {short(response, 160)}",
                          request=request):
            findings.check(mcp_payload(response).get("content") == text,
                           "with allowLarge the content is not the whole note", request=request)


@pytest.mark.integration
@pytest.mark.req("VA-SIZE-002")
def test_an_attachment_is_metadata_unless_downloaded_then_base64_with_its_mime_type(calls, names,
                                                                                    contract_fixture):
    vault = contract_fixture.vault
    with Findings() as findings:
        response, request = calls.raw("get_attachment", {"vaultRelativePath": "attachments/readme.txt"})
        if findings.check(called_ok(response), f"metadata: {short(response, 160)}", request=request):
            data = mcp_payload(response)
            findings.check("content" not in data, "metadata carries content", request=request)
            findings.check(data.get("size") == (vault / "attachments/readme.txt").stat().st_size,
                           f"size {short(data.get('size'))} is not the file's", request=request)
        for rel, mime in (("attachments/pic.png", "image/png"), ("attachments/blob.unknownext", "application/octet-stream"),
                          ("attachments/readme.txt", None)):
            response, request = calls.raw("get_attachment", {"vaultRelativePath": rel, "download": True})
            if not findings.check(called_ok(response), f"download: {short(response, 160)}",
                                  request=request):
                continue
            data = mcp_payload(response)
            try:
                decoded = base64.b64decode(str(data.get("content")), validate=True)
            except ValueError:
                decoded = None
            findings.check(decoded == (vault / rel).read_bytes(), "the base64 content is not the file's bytes",
                           request=request)
            findings.check(data.get("encoding") == "base64", f"encoding is {short(data.get('encoding'))}",
                           request=request)
            got = str(data.get("contentType", "")).split(";")[0].strip().lower()
            findings.check(got == mime if mime else bool(got), f"contentType {short(got)}; "
                           f"expected {mime or 'a MIME type'}", request=request)


@pytest.mark.integration
@pytest.mark.req("VA-SIZE-004")
def test_a_download_over_50_mib_fails_even_with_allow_large(calls):
    with Findings() as findings:
        response, request = calls.raw("get_attachment", {"vaultRelativePath": "attachments/huge.bin",
                                                                    "download": True, "allowLarge": True})
        findings.check(error_code_of(response) == "QUERY_TOO_LARGE", f"64 MiB with allowLarge: {short(response, 160)}",
                       request=request)


@pytest.mark.integration
@pytest.mark.req("VA-SIZE-003")
def test_a_download_over_10_mib_needs_allow_large(calls, contract_fixture):
    path = contract_fixture.vault / "attachments/eleven.bin"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with Findings() as findings:
        args = {"vaultRelativePath": "attachments/eleven.bin", "download": True}
        response, request = calls.raw("get_attachment", args)
        findings.check(error_code_of(response) == "QUERY_TOO_LARGE",
                       f"11 MiB without allowLarge: {short(response, 160)}", request=request)
        response, request = calls.raw("get_attachment", {**args, "allowLarge": True})
        if findings.check(called_ok(response), f"11 MiB with allowLarge: {short(response, 160)}",
                          request=request):
            content = str(mcp_payload(response).get("content", ""))
            findings.check(hashlib.sha256(base64.b64decode(content)).hexdigest() == digest,
                           "the downloaded bytes are not the file's", request=request)
