"""Fixtures of the vault-agent tests: the note ids (found by search) and the HTTP API the tools
are compared with (the server's own over HTTP, a `serve` of the same fixture over stdio)."""

from __future__ import annotations

import httpx
import pytest

from contract_tests.vault_agent.common import Ids, api_base, start_http


@pytest.fixture(scope="session")
def ids(server, client, names):
    return Ids(server, names)


@pytest.fixture(scope="session")
def api(suite, servers, server, contract_fixture):
    """An httpx client on the HTTP API of the fixture the MCP server serves."""
    base = api_base(server) if suite.transport == "http" else api_base(
        start_http(servers, suite, contract_fixture, "serve"))
    with httpx.Client(base_url=base, timeout=60) as http:
        yield http
