"""mcp-base over Streamable HTTP: sessions, the protocol version header, Origin, loopback bind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract_tests.transport.stdio import ServerGone
from contract_tests.transport.system import needs_proc, socket_inodes
from contract_tests.verdicts.checks import check, short


@pytest.fixture
def session(servers, contract_fixture):
    srv = servers.handshake(contract_fixture)
    response = srv.initialize()
    check("result" in response, f"initialize failed: {short(response.get('error'))}", req="MCP-HTTP-001")
    yield srv
    srv.close(timeout=3)


def _post(srv, message, fresh=False, **headers):
    merged = {**srv.headers(message), **headers}
    merged = {k: v for k, v in merged.items() if v is not None}
    return srv.post(json.dumps(message).encode(), merged, fresh=fresh)


LIST = {"jsonrpc": "2.0", "id": "rc-http-1", "method": "tools/list", "params": {}}


@pytest.mark.integration
@pytest.mark.req("MCP-HTTP-001")
def test_a_request_without_the_session_id_gets_400(session):
    if not session.session_id:
        pytest.skip("the server issued no Mcp-Session-Id (stateless server)")
    response = _post(session, LIST, **{"Mcp-Session-Id": None})
    check(response.status_code == 400, f"got HTTP {response.status_code}")


@pytest.mark.integration
@pytest.mark.req("MCP-HTTP-002")
def test_delete_ends_the_session_and_it_then_gets_404(session):
    if not session.session_id:
        pytest.skip("the server issued no Mcp-Session-Id (stateless server)")
    # Both go on new connections: a server may close the ones it kept alive for the session.
    deleted = session.delete()
    if deleted == 405:
        pytest.skip("the server does not let clients end sessions (405)")
    check(deleted < 300, f"DELETE answered HTTP {deleted}")
    response = _post(session, LIST, fresh=True)
    check(response.status_code == 404, f"a request on the ended session got HTTP {response.status_code}")
    session.session_id = None


@pytest.mark.integration
@pytest.mark.req("MCP-HTTP-003")
def test_an_unsupported_protocol_version_header_gets_400(session):
    response = _post(session, LIST, **{"MCP-Protocol-Version": "1999-01-01"})
    check(response.status_code == 400, f"got HTTP {response.status_code}")


@pytest.mark.security
@pytest.mark.req("MCP-HTTP-004")
def test_a_foreign_origin_gets_403(session):
    response = _post(session, LIST, Origin="http://attacker.example")
    check(response.status_code == 403, f"a foreign Origin got HTTP {response.status_code}")
    check('"result"' not in response.text, "a foreign Origin got an MCP result")


def _listening(pid: int) -> list[str]:
    inodes = socket_inodes(pid)
    out = []
    for table in ("tcp", "tcp6"):
        try:
            rows = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except FileNotFoundError:
            raise ServerGone(f"process {pid} exited before its sockets could be read") from None
        for row in rows:
            cols = row.split()
            if cols[3] == "0A" and cols[9] in inodes:  # 0A = LISTEN
                out.append(cols[1].rsplit(":", 1)[0])
    return out


@needs_proc
@pytest.mark.security
@pytest.mark.req("MCP-HTTP-005")
def test_the_server_listens_on_loopback_only(own_servers, contract_fixture):
    srv = own_servers.start(contract_fixture)
    try:
        hosts = _listening(srv.pid)
    finally:
        srv.close(timeout=3)
    loopback = {"0100007F", "00000000000000000000000001000000"}
    wild = [h for h in hosts if h not in loopback and not h.endswith("7F")]
    check(hosts and not wild, f"listening addresses (hex) {hosts}: not loopback only")
