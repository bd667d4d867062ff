"""vault-agent serve outside the MCP endpoint's own settings: an invalid configuration stops it
at start-up, and a configured API key guards every endpoint on a loopback bind too."""

from __future__ import annotations

import httpx
import pytest

from contract_tests.vault_agent.common import (
    answers_mcp,
    api_base,
    initialize_http,
    profiles_mark,
    scan_own,
    serve_refusals,
)
from contract_tests.verdicts.findings import Findings

pytestmark = profiles_mark
MCP_ENABLED = "VAULT_AGENT_MCP_ENABLED"

# Configurations serve must refuse: an unknown key (configuration.md: "Unknown configuration
# keys are validation errors"), a file that is not TOML, a boolean variable that is not one.
INVALID_CONFIG = [("unknown-key", "[server]\nrc_no_such_key = 1\n", {}),
                  ("not-toml", "[server\nport = \n", {}),
                  ("bad-boolean", None, {MCP_ENABLED: "maybe"})]


@pytest.mark.integration
@pytest.mark.req("VA-CFG-003")
def test_an_invalid_configuration_stops_serve_at_start_up(suite, own_servers, contract_fixture):
    if suite.transport != "http":
        pytest.skip("a requirement of Streamable HTTP runs (VA-CFG-003)")
    cases = {name: ({"config": str(contract_fixture.write_config(f"invalid-{name}.toml", toml))} if toml else {},
                    env) for name, toml, env in INVALID_CONFIG}
    with Findings() as findings:
        for name, outcome in serve_refusals(own_servers, contract_fixture, cases).items():
            findings.check(outcome is None, f"serve {outcome}; a configuration validation error must "
                           "prevent start-up", case=name)


@pytest.mark.security
@pytest.mark.req("VA-HTTP-009")
def test_a_configured_api_key_guards_every_endpoint_on_loopback_too(suite, own_servers, contract_fixture, profile):
    if suite.transport != "http":
        pytest.skip("a requirement of Streamable HTTP runs (VA-HTTP-009)")
    key = contract_fixture.api_key
    srv = own_servers.start_http(contract_fixture, "serve", env={"VAULT_AGENT_API_KEY": key, MCP_ENABLED: "true"})
    base = api_base(srv)
    calls = {"GET /health": lambda **h: httpx.get(base + "/health", headers=h, timeout=30),
             "POST /search": lambda **h: httpx.post(base + "/search", json={"query": "tokalpha"}, headers=h,
                                                    timeout=30),
             "POST /mcp initialize": lambda **h: initialize_http(base, "/mcp", **h)}
    with Findings() as findings:
        for what, call in calls.items():
            bare = call()
            findings.check(bare.status_code == 401 and not answers_mcp(bare),
                           f"without Authorization on 127.0.0.1 with a key configured: HTTP {bare.status_code}",
                           case=what, request=what)
            granted = call(Authorization=f"Bearer {key}")
            ok = answers_mcp(granted) if what.endswith("initialize") else granted.status_code == 200
            findings.check(ok, f"with the right key: HTTP {granted.status_code}", case=what,
                           request=what)
            scan_own(srv, contract_fixture, profile, findings, what, case=what)
        srv.close(timeout=5)
