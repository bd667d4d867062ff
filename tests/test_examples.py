"""The MCPServer examples under examples/ pass the suite of their profile."""

from __future__ import annotations

import shlex

import pytest

from tests.conftest import ROOT

EXAMPLES = ROOT / "examples"

# Requirements an example may skip: checks gated on what it does not offer (the optional
# adjacent tools, an outputSchema: MCP-TOOLS-004; a tool listed to an anonymous client:
# MCP-TOOLS-002) or on the machine (root reads unreadable directories); and the phases to run.
CASES = {
    "section-source-local": ("{python} %s --vault {vault}", {"SSL-ERR-003", "MCP-CAP-001", "MCP-TOOLS-004"}, (None,)),
    "retrieval-tools": ("{python} %s", {"MCP-CAP-001"}, (None,)),
    "section-source-hosted": ("{python} %s --port {port} --phase {phase}", {"MCP-TOOLS-004", "MCP-TOOLS-002"}, ("1K", "1L")),
}
RUNS = [pytest.param(profile, phase, id=profile + (f"-{phase}" if phase else ""))
        for profile, (_command, _skips, phases) in sorted(CASES.items()) for phase in phases]


@pytest.mark.parametrize("profile,phase", RUNS)
def test_the_mcpserver_example_passes_its_profile(suite_run, profile, phase):
    command, allowed_skips, _phases = CASES[profile]
    server = shlex.quote(str(EXAMPLES / profile / "server.py"))
    phase_args = ("--phase", phase) if phase else ()
    run = suite_run("--profile", profile, *phase_args, "--server-cmd", command % server)
    status = run.status()
    assert status, run.output[-3000:]
    failing = {k: v for k, v in status.items() if v not in ("pass", "skip", "n/a", "advisory")}
    assert not failing, failing
    assert {k for k, v in status.items() if v == "skip"} <= allowed_skips
    assert run.code == 0, run.output[-3000:]


def test_every_profile_with_an_example_has_a_readme():
    for profile in CASES:
        assert (EXAMPLES / profile / "README.md").is_file()
    assert "section-source-hosted" in (EXAMPLES / "README.md").read_text(encoding="utf-8")
