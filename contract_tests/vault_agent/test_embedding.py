"""vault-agent with embeddings configured but unavailable, through documented configuration only
(Phase 1 configuration.md's [embedding] keys): enabled, a model, and a loopback endpoint on a
port nothing listens on. The index is built with the same configuration, so the server's and the
index's embedding settings agree (incremental-indexing.md: a model change needs a rebuild)."""

from __future__ import annotations

import pytest

from contract_tests.synthetic.vault_agent import NOTES, build_vault_agent
from contract_tests.transport.http import free_port
from contract_tests.vault_agent.common import mcp_payload, profiles_mark, protocol_version
from contract_tests.verdicts.checks import called_ok, short
from contract_tests.verdicts.findings import Findings, describe_call

pytestmark = profiles_mark
REQ = "VA-MODE-002"
# A model name (an OpenAI-compatible provider's) that also names no file (an implementation that
# reads a local model file); the endpoint is localhost (indexing.md: "The embedding endpoint host
# must be `127.0.0.1`, `localhost`, or `::1`") on a port the suite picked and left closed.
CONFIG = ('[embedding]\nenabled = true\nrequire = false\nmodel = "rc-unavailable-model"\n'
          'endpoint = "http://127.0.0.1:{port}/v1/embeddings"\n')


@pytest.fixture(scope="module")
def unavailable(suite, own_servers, contract_fixture, tmp_path_factory):
    """A private fixture indexed with embeddings configured but unreachable (and embedding.require
    false), and its server; or the index command's failure, which indexing.md rules out."""
    fixture = build_vault_agent(tmp_path_factory.mktemp("embedding"))
    fixture.settings = dict(contract_fixture.settings)
    config = fixture.write_config("embedding.toml", CONFIG.format(port=free_port()))
    if not fixture.command("index"):
        pytest.skip("no index command was given (--rc-command index=CMD or the declaration's commands)")
    proc = fixture.run_command("index", values={"config": str(config)})
    if proc.returncode != 0:
        yield None, f"exited {proc.returncode}"
        return
    srv = own_servers.start(fixture, extra={"config": str(config)})
    srv.initialize(protocol_version())
    yield srv, None
    srv.close(timeout=5)


def _note_id(response, path: str) -> str | None:
    results = mcp_payload(response).get("results") if called_ok(response) else None
    mine = [r for r in results or [] if isinstance(r, dict) and r.get("path") == path]
    return mine[0].get("noteId") if mine and isinstance(mine[0].get("noteId"), str) else None


@pytest.mark.integration
@pytest.mark.req(REQ)
def test_with_embeddings_configured_but_unavailable_a_call_without_mode_falls_back_to_lexical_with_a_warning(
        unavailable, names):
    """An error answer (INDEX_INCOMPATIBLE, EMBEDDING_UNAVAILABLE, ...) is the finding, never a
    reason to block: the index was built under the same configuration, and indexing.md has it
    succeed (with a warning) when embedding generation fails and embedding.require is false."""
    srv, failure = unavailable
    with Findings() as findings:
        if failure is not None:
            findings.fail(f"the index command {failure} with embeddings configured but unreachable and "
                          "embedding.require false (indexing.md: indexing then succeeds with a warning)",
                          case="index", request="the index command")
            return
        search = names.args("search", {"query": "tokalpha"})
        calls = [("search", search)]
        response = srv.call_tool("search", search, timeout=60)
        note = _note_id(response, NOTES["alpha"])
        if note is None:
            findings.block(f"search tokalpha did not give the id of {NOTES['alpha']} (see the search case): "
                           "no note to relate from", by="search", case="related")
        else:
            calls.append(("related", names.args("related", {"type": "note", "id": note})))
        for tool, args in calls:
            request = describe_call(tool, args)
            if tool != "search":
                response = srv.call_tool(tool, args, timeout=60)
            if not findings.check(called_ok(response), f"failed instead of falling back to lexical: "
                                  f"{short(response, 160)}", case=tool, request=request):
                continue
            data = mcp_payload(response)
            findings.check(data.get("usedMode") == "lexical", f"usedMode is {short(data.get('usedMode'))}, "
                           "not lexical", case=tool, request=request)
            codes = [w.get("code") for w in data.get("warnings") or [] if isinstance(w, dict)]
            findings.check("EMBEDDING_UNAVAILABLE" in codes, f"warnings {short(codes)} lack "
                           "EMBEDDING_UNAVAILABLE", case=tool, request=request)
