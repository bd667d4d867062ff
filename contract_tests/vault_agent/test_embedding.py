"""vault-agent with embeddings configured but unavailable, through documented configuration only
(Phase 1 configuration.md's [embedding] keys): enabled, a model, and a loopback endpoint on a
port nothing listens on. The index is built with the same configuration, so the server's and the
index's embedding settings agree (incremental-indexing.md: a model change needs a rebuild)."""

from __future__ import annotations

import pytest

from contract_tests.checks import called_ok, short
from contract_tests.harness.http import free_port
from contract_tests.harness.vault_agent import build_vault_agent
from contract_tests.verdicts import Findings, describe_call
from contract_tests.vault_agent.common import Ids, blocked, mcp_payload, profiles_mark, protocol_version

pytestmark = profiles_mark
REQ = "VA-MODE-002"
# A model name (an OpenAI-compatible provider's) that also names no file (an implementation that
# reads a local model file); the endpoint is localhost (indexing.md: "The embedding endpoint host
# must be `127.0.0.1`, `localhost`, or `::1`") on a port the suite picked and left closed.
CONFIG = ('[embedding]\nenabled = true\nmodel = "rc-unavailable-model"\n'
          'endpoint = "http://127.0.0.1:{port}/v1/embeddings"\n')


@pytest.fixture(scope="module")
def unavailable(suite, own_servers, contract_fixture, tmp_path_factory, names):
    """A private fixture indexed with embeddings configured but unreachable, its server and ids."""
    fixture = build_vault_agent(tmp_path_factory.mktemp("embedding"))
    fixture.settings = dict(contract_fixture.settings)
    config = fixture.write_config("embedding.toml", CONFIG.format(port=free_port()))
    if not fixture.command("index"):
        pytest.skip("no index command was given (--rc-command index=CMD or the declaration's commands)")
    proc = fixture.run_command("index", values={"config": str(config)})
    if proc.returncode != 0:
        # indexing.md: "If lexical indexing succeeds and `embedding.require` is false, indexing
        # succeeds with a warning when embedding generation fails." Without an index there is
        # nothing to search: the check cannot run.
        raise blocked(f"the index command with embeddings configured but unreachable exited "
                      f"{proc.returncode}; nothing to search", req=REQ)
    srv = own_servers.start(fixture, extra={"config": str(config)})
    srv.initialize(protocol_version())
    yield srv, Ids(srv, names)
    srv.close(timeout=5)


@pytest.mark.integration
@pytest.mark.req(REQ)
def test_with_embeddings_configured_but_unavailable_a_call_without_mode_falls_back_to_lexical_with_a_warning(
        unavailable, names):
    srv, ids = unavailable
    calls = [("search", {"query": "tokalpha"}), ("related", {"type": "note", "id": ids.note("alpha", req=REQ)})]
    with Findings() as findings:
        for tool, args in calls:
            args = names.args(tool, args)
            request = describe_call(tool, args)
            response = srv.call_tool(tool, args, timeout=60)
            if not findings.check(called_ok(response), f"failed: {short(response, 160)}", req=REQ, case=tool,
                                  request=request):
                continue
            data = mcp_payload(response)
            findings.check(data.get("usedMode") == "lexical", f"usedMode is {short(data.get('usedMode'))}, "
                           "not lexical", req=REQ, case=tool, request=request)
            codes = [w.get("code") for w in data.get("warnings") or [] if isinstance(w, dict)]
            findings.check("EMBEDDING_UNAVAILABLE" in codes, f"warnings {short(codes)} lack "
                           "EMBEDDING_UNAVAILABLE", req=REQ, case=tool, request=request)
