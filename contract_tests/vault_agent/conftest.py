"""Fixtures of the vault-agent tests: the note ids (found by search) and the HTTP API the tools
are compared with (the server's own over HTTP, a `serve` of the same fixture over stdio)."""

from __future__ import annotations

import httpx
import pytest

from contract_tests.vault_agent.common import Ids, api_base


@pytest.fixture(scope="session")
def ids(server, client, names):
    return Ids(server, names)


@pytest.fixture(scope="session")
def api(request, suite, server, contract_fixture):
    """An httpx client on the HTTP API of the fixture the MCP server serves: the server's own over
    HTTP, else a `serve` the suite starts (a server of its own)."""
    srv = server if suite.transport == "http" else \
        request.getfixturevalue("own_servers").start_http(contract_fixture, "serve")
    with httpx.Client(base_url=api_base(srv), timeout=60) as http:
        http.rc_server = srv  # whose output a test scans for what its requests leaked
        yield http
