"""vault-agent serve on a non-loopback bind: it refuses to start without an API key (or, where
the documents allow it, generates and stores one), and with one every route asks for it
(VA-HTTP-005, VA-SEC-001, VA-HTTP-010..012)."""

from __future__ import annotations

import socket
import threading
import time
import tomllib
from dataclasses import dataclass, field

import httpx
import pytest

from contract_tests.contracts.specs import choice
from contract_tests.synthetic import canaries
from contract_tests.transport.http import free_port
from contract_tests.vault_agent.common import (
    answers_mcp,
    api_base,
    initialize_http,
    per_requirement,
    profiles_mark,
    protocol_version,
    scan_own,
    sweep_verdict,
)
from contract_tests.verdicts.checks import called_ok
from contract_tests.verdicts.findings import RequirementFailure, describe_call

pytestmark = profiles_mark


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class Keyless:
    """What the public command did with no key configured: ('refused', status), ('served', what
    /mcp did) or ('hung', ...); its output lines (stdout and stderr, the vault root of its startup
    output spared, as Phase 1 allows); whether {config} changed; the keys found in the TOML files
    it wrote under its own HOME (the default user-local configuration)."""
    outcome: str
    detail: str
    logs: list[str]
    config_changed: bool = False
    generated: list[str] = field(default_factory=list)


def _keyless_public(own_servers, suite, fixture) -> Keyless:
    port = free_port()
    before = fixture.config.read_bytes()
    proc = own_servers.spawn(fixture, "public", values={"port": str(port), "api_key": ""}, merge_stderr=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None and not _listening(port):
            time.sleep(0.1)
        if proc.poll() is not None:
            result = Keyless("refused", f"exited {proc.returncode}", _logs(proc, fixture, True))
        elif not _listening(port):
            result = Keyless("hung", "neither exited nor listened within 30 s", _logs(proc, fixture, False))
        else:
            response = initialize_http(f"http://127.0.0.1:{port}", "/mcp")
            result = Keyless("served", f"{response.status_code}" + (" with an MCP answer" if answers_mcp(response)
                                                                     else ""), _logs(proc, fixture, False))
    finally:
        if proc.poll() is None:
            proc.kill(grace=0)
    result.config_changed = fixture.config.read_bytes() != before
    result.generated = _stored_keys(proc.cwd)
    return result


def _stored_keys(home) -> list[str]:
    """server.api_key (or a top-level api_key) of every TOML file under `home`."""
    found = []
    for path in home.rglob("*.toml"):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        server = data.get("server") if isinstance(data.get("server"), dict) else {}
        found += [v for v in (server.get("api_key"), data.get("api_key")) if isinstance(v, str) and v]
    return found


def _logs(proc, fixture, exited: bool) -> list[str]:
    """What the process wrote on stderr (it is stopped first when still running)."""
    if not exited:
        proc.kill(grace=10)
    text = proc.finished().stdout
    for root in sorted({str(fixture.vault), str(fixture.vault.resolve())}, key=len, reverse=True):
        text = text.replace(root, "{vault}")  # a line naming the vault root: startup output may (indexing.md)
    return text.splitlines()


PUBLIC = ("VA-HTTP-005", "VA-SEC-001", "VA-HTTP-010", "VA-HTTP-011", "VA-HTTP-012")


@pytest.mark.security
@per_requirement(*PUBLIC)
def test_a_non_loopback_bind_requires_the_api_key(req, suite, own_servers, contract_fixture, names, profile):
    """Over HTTP runs only: VA-HTTP-005 is a requirement of that transport (a stdio run's verdict
    on it would read n/a, hiding a failure)."""
    if suite.transport != "http":
        pytest.skip("a requirement of Streamable HTTP runs (VA-HTTP-005)")
    try:
        sweep_verdict("public", req, PUBLIC, lambda findings: _public_sweep(suite, own_servers, contract_fixture,
                                                                            names, profile, findings))
    except RequirementFailure as failure:
        if req in _UNCHECKED and all(f.kind == "blocked" for f in failure.findings):
            pytest.skip(_UNCHECKED[req])  # nothing of it was there to check: skipped, never passed
        raise


# Requirements of the public sweep that had nothing to check on this server, and why.
_UNCHECKED: dict[str, str] = {}


def _public_sweep(suite, own_servers, contract_fixture, names, profile, findings) -> None:
    key = contract_fixture.api_key
    keyless: list[tuple[str, str]] = []
    thread = threading.Thread(target=lambda: keyless.append(_keyless_public(own_servers, suite, contract_fixture)))
    thread.start()
    srv = own_servers.start_http(contract_fixture, "public")
    base, path = api_base(srv), httpx.URL(srv.url).path
    refusals = {"no key": {}, "wrong key": {"Authorization": "Bearer " + "x" * len(key)},
                "key in the query string": {"query": f"?api_key={key}&apiKey={key}&key={key}"}}
    for what, headers in refusals.items():
        query = headers.pop("query", "")
        response = initialize_http(base, path + query, **headers)
        allowed = (401, 403) if what == "wrong key" else (401,)
        findings.check(response.status_code in allowed and not answers_mcp(response),
                       f"{what}: HTTP {response.status_code}{' with an MCP answer' if answers_mcp(response) else ''}",
                       req="VA-HTTP-005",
                       case=what)
        findings.check(key not in response.text and key not in str(response.headers),
                       f"{what}: the answer carries the API key", req="VA-SEC-001", case=what)
        scan_own(srv, contract_fixture, profile, findings, f"POST {path}{'?<key>' if query else ''} initialize",
                 case=what)
    for what, headers, want in (("no key", {}, 401), ("right key", {"Authorization": f"Bearer {key}"}, 200)):
        health = httpx.get(base + "/health", headers=headers, timeout=30)
        findings.check(health.status_code == want, f"GET /health with {what} on 0.0.0.0: HTTP "
                       f"{health.status_code} (expected {want})", req="VA-HTTP-012", case=what, request="GET /health")
        findings.check(key not in health.text and key not in str(health.headers),
                       f"GET /health with {what}: the answer carries the API key", req="VA-SEC-001", case=what)
    granted = initialize_http(base, path, Authorization=f"Bearer {key}")
    if findings.check(answers_mcp(granted), f"the right key: HTTP {granted.status_code}", req="VA-HTTP-005",
                      case="right key"):
        session = own_servers.session(srv, headers={"Authorization": f"Bearer {key}"})
        session.initialize(protocol_version())
        args = names.args("search", {"query": "tokalpha"})
        request = describe_call("search", args)
        findings.check(called_ok(session.call_tool("search", args)), "a tool call with the right key failed",
                       req="VA-HTTP-005", case="right key", request=request)
        for each in (session, srv):
            scan_own(each, contract_fixture, profile, findings, request, case="right key")
    srv.close(timeout=5)
    scan_own(srv, contract_fixture, profile, findings, "shutting down", case="right key")
    thread.join(60)
    result = keyless[0] if keyless else Keyless("hung", "no outcome", [])
    outcome, detail, logs = result.outcome, result.detail, result.logs
    findings.check(not result.config_changed, "started on 0.0.0.0 with no key, the command changed "
                   "the configuration file it was given ({config}, outside the default user-local location)",
                   req="VA-HTTP-010",
                   case="no key configured")
    if outcome == "served" and not result.generated:
        findings.block("it served without a configured key, but no TOML file under its HOME holds "
                       "a generated key to look for", req="VA-HTTP-011", case="no key configured")
    if outcome == "refused":
        _UNCHECKED["VA-HTTP-011"] = (f"without a key on 0.0.0.0 the public command {detail}: it generated no "
                                     "key, so there is no generated key whose printing to check")
    elif outcome != "served":
        findings.block(f"without a key on 0.0.0.0 the public command {detail}: no start-up to check",
                       req="VA-HTTP-011", case="no key configured", by="VA-HTTP-005")
    for key in result.generated:
        findings.check(not any(key in line for line in logs), "the generated API key (stored under "
                       "its HOME) is in its start-up output", req="VA-HTTP-011", case="no key configured")
    rules = profile.leak_requirements("stderr")
    for leak in canaries.scan_lines(logs, contract_fixture.canaries, "stderr", rules):
        findings.fail(f"server log leaked: {leak}", req=rules[leak.cls], case="no key configured",
                      request="the public command with no key")
    declared = choice("public_without_key")
    if outcome == "served":
        findings.check(detail.startswith("401") and "MCP answer" not in detail and declared != "refuse",
                       f"started without a key on 0.0.0.0, and a request without a key got {detail}", req="VA-HTTP-005",
                       case="no key configured")
    else:
        findings.check(outcome == "refused" and declared != "generate",
                       f"without a key on 0.0.0.0 the server {detail}", req="VA-HTTP-005", case="no key configured")
