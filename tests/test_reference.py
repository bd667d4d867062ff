"""The bundled reference servers pass the whole suite, with no expected failures."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from contract_tests.contracts import load_profile
from contract_tests.harness.http import free_port
from tests.conftest import ROOT, unchecked_passes

# Checks gated on what a reference does not declare, or on the machine, may skip.
# (MCP-TOOLS-004: the reference declares no outputSchema, so no structured result is held to one.)
ALLOWED_SKIPS = {
    "section-source-local": {"SSL-BLK-002", "MCP-CAP-001", "MCP-TOOLS-004"},
    "retrieval-tools": {"MCP-CAP-001"} | ({"RT-CFG-003"} if os.geteuid() == 0 else set()),
    "section-source-hosted": {"MCP-CAP-001", "MCP-TOOLS-004", "MCP-TOOLS-002"},
}


def _assert_clean(run, profile: str, transport: str, phase: str | None, allowed_skips: set[str]) -> None:
    assert run.code == 0, run.output[-5000:]
    status = run.status()
    assert status, "empty report"
    failing = {k: v for k, v in status.items() if v not in ("pass", "skip", "n/a")}
    assert not failing, failing
    skipped = sorted(k for k, v in status.items() if v == "skip")
    assert set(skipped) <= allowed_skips, skipped
    # Only requirements of another transport or phase are not applicable.
    spec = load_profile(profile)
    not_run = sorted(k for k, v in status.items() if v == "n/a")
    assert all(not spec.applies(k, transport, phase) for k in not_run), not_run
    assert run.results["summary"]["pass"] == len(status) - len(skipped) - len(not_run)
    assert run.results["phase"] == phase
    assert not unchecked_passes(run.results), f"pass with no check run: {unchecked_passes(run.results)}"


@pytest.mark.parametrize("profile,transport,phase", [
    ("section-source-local", "stdio", None), ("section-source-local", "http", None),
    ("retrieval-tools", "stdio", None),
    ("section-source-hosted", "http", "1L"), ("section-source-hosted", "http", "1K"),
])
def test_the_reference_passes_every_requirement(suite_run, profile, transport, phase):
    run = suite_run("--profile", profile, "--transport", transport, *(["--phase", phase] if phase else []))
    _assert_clean(run, profile, transport, phase, ALLOWED_SKIPS[profile])


def test_a_running_hosted_server_passes_through_server_url(suite_run, tmp_path):
    """--server-url: the suite attaches to a server it did not start; its canister double
    listens where that server was told to look."""
    secret, gateway = "rcjwtsecret" + os.urandom(16).hex(), "rcgateway" + os.urandom(8).hex()
    canister_port, port = free_port(), free_port()
    env = dict(os.environ, RC_JWT_SECRET=secret, RC_GATEWAY_SECRET=gateway, NO_PROXY="127.0.0.1",
               RC_CANISTER_URL=f"http://127.0.0.1:{canister_port}")
    proc = subprocess.Popen([sys.executable, "-m", "reference.section_source_hosted.server", "--port", str(port),
                             "--phase", "1L"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        run = suite_run("--profile", "section-source-hosted", "--server-url", f"http://127.0.0.1:{port}/mcp",
                        "--canister-port", str(canister_port),
                        env={"RC_JWT_SECRET": secret, "RC_GATEWAY_SECRET": gateway})
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    # Tests that need a server of the suite's own (its logs, sockets, home, another configuration)
    # are deselected at collection, with one reason: their requirements are not run, never passed.
    assert run.code == 0, run.output[-5000:]
    status = run.status()
    # (a home the running server never used is not evidence that it writes nothing there)
    own = {"MCP-HTTP-005": "not-run", "SSH-DI-003": "not-run", "SSH-DI-004": "not-run", "SSH-UP-007": "not-run",
           "SSH-LOG-001": "partial", "SSH-LOG-002": "partial", "SSH-UP-004": "partial"}
    assert {k: v for k, v in status.items() if v in ("not-run", "partial")} == own
    assert {k: v for k, v in status.items() if v not in ("pass", "skip", "n/a", "not-run", "partial")} == {}
    assert {k for k, v in status.items() if v == "skip"} <= ALLOWED_SKIPS["section-source-hosted"]
    notes = [n for n in run.results["notes"] if "needs a server the suite starts itself" in n]
    assert len(notes) == 1 and notes[0].startswith("6 tests deselected: each needs"), run.results["notes"]
    assert "needs a server the suite starts itself" in run.output
