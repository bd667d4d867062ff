"""vault-agent data minimisation: compact search and related results, and no absolute path in
an error after the vault vanished under a running server."""

from __future__ import annotations

import json

import pytest

from contract_tests.checks import called_ok, short
from contract_tests.harness.vault_agent import token
from contract_tests.verdicts import Findings, describe_call
from contract_tests.vault_agent.common import Ids, mcp_payload, profiles_mark, protocol_version, rpc_error

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
