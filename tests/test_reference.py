"""The bundled reference servers pass the whole suite, with no expected failures: the standard
`retrieval-contract all` holds each of its runs to, and a run through --server-url."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from contract_tests.cli.reference_check import narrowed, reference_problems
from contract_tests.contracts.specs import available_profiles, load_profile
from contract_tests.transport.http import free_port
from contract_tests.transport.system import MACHINE_LACKS
from tests.conftest import ROOT

# The whole suite against each bundled reference is README command 1 (`retrieval-contract all`),
# which holds every run to the reference's standard (contract_tests/cli/reference_check.py); these
# tests prove that standard, and --server-url against a running reference.


def _results(rows, transport="stdio", phase=None, protocol="2025-11-25"):
    return {"transport": transport, "phase": phase, "protocol_version": protocol, "requirements": [
        {"id": req, "status": status, "tests_checking": checking, "evidence": [f"skipped: why {req}"]}
        for req, status, checking in rows]}


def test_a_clean_reference_run_has_no_problem():
    spec = load_profile("section-source-local")
    rows = [("SSL-IN-001", "pass", 2), ("MCP-CAP-001", "skip", 0), ("MCP-HTTP-001", "n/a", 0)]
    assert reference_problems(_results(rows), spec) == []


def test_every_way_a_reference_run_falls_short_is_named_once():
    spec = load_profile("section-source-local")
    rows = [("SSL-IN-001", "pass", 0),          # a pass no check earned
            ("SSL-IN-002", "skip", 0),          # a skip the spec does not allow
            ("SSL-IN-003", "n/a", 0),           # n/a although it applies to a stdio run
            ("MCP-HTTP-001", "n/a", 0),         # n/a: an HTTP requirement on a stdio run (fine)
            ("SSL-IN-004", "fail", 1), ("SSL-IN-005", "blocked", 0), ("SSL-IN-006", "not-run", 0)]
    problems = reference_problems(_results(rows), spec)
    assert [p.split()[0] for p in problems] == ["SSL-IN-001", "SSL-IN-002", "SSL-IN-003", "SSL-IN-004", "SSL-IN-005",
                                                "SSL-IN-006"], problems
    assert "no check of it ran" in problems[0] and "why SSL-IN-002" in problems[1]
    assert reference_problems(None, spec) == ["no results.json was written"]
    # a skip for what the machine lacks is not the reference's doing; one reason of the reference's is
    lacks = _results([("SSL-PERF-001", "skip", 0)])
    lacks["requirements"][0]["evidence"] = [f"skipped: {MACHINE_LACKS} Linux inotify"]
    assert reference_problems(lacks, spec) == []
    lacks["requirements"][0]["evidence"].append("skipped: the server declares nothing")
    assert [p.split()[0] for p in reference_problems(lacks, spec)] == ["SSL-PERF-001"]


def test_every_allowed_skip_names_a_requirement_of_its_profile_and_says_why():
    for profile in available_profiles():
        spec = load_profile(profile)
        for req, why in spec.data["reference"].get("skips", {}).items():
            assert req in spec.requirements and why.strip(), (profile, req)


def test_narrowing_options_are_recognised():
    assert narrowed(["--strict", "-n", "2"]) is None
    assert narrowed(["--req", "SSL-IN-001"]) == "--req" and narrowed(["--req=SSL-IN-001"]) == "--req"
    assert narrowed(["-kpaths"]) == "-k" and narrowed(["-m", "stress"]) == "-m"
    assert narrowed(["--server-cmd", "x"]) == "--server-cmd"


def test_all_fails_a_run_that_exits_zero_but_falls_short(tmp_path, monkeypatch, capsys):
    """The wiring: a run whose process exits 0 with an undeclared skip fails `all` with exit 1
    and says why; the same run with the skip declared passes."""
    import contract_tests.cli.retrieval_contract as cli

    def fake_call(argv, **_kwargs):
        report = Path(argv[argv.index("--report") + 1])
        report.mkdir(parents=True, exist_ok=True)
        (report / "results.json").write_text(json.dumps(_results([("SSL-IN-002", "skip", 0)])))
        return 0
    monkeypatch.setattr(cli, "matrix", lambda: [("section-source-local", "stdio", None, None)])
    monkeypatch.setattr(subprocess, "call", fake_call)
    assert cli.run_matrix(["--report", str(tmp_path / "a"), "-n", "1"]) == 1
    out = capsys.readouterr().out
    assert "SSL-IN-002 was skipped" in out and "FAIL (exit 1)" in out
    assert "SSL-IN-002 was skipped" in (tmp_path / "a" / "section-source-local-stdio" / "output.txt").read_text()
    spec = load_profile("section-source-local")
    monkeypatch.setitem(spec.data["reference"].setdefault("skips", {}), "SSL-IN-002", "declared for this test")
    monkeypatch.setattr("contract_tests.contracts.load_profile", lambda _p: spec)
    assert cli.run_matrix(["--report", str(tmp_path / "b"), "-n", "1"]) == 0
    assert cli.run_matrix(["--report", str(tmp_path / "c"), "-n", "1", "--req", "SSL-IN-002"]) == 0


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
    assert {k for k, v in status.items() if v == "skip"} <= set(load_profile("section-source-hosted").data["reference"]["skips"])
    notes = [n for n in run.results["notes"] if "needs a server the suite starts itself" in n]
    assert len(notes) == 1 and notes[0].startswith("6 tests deselected: each needs"), run.results["notes"]
    assert "needs a server the suite starts itself" in run.output
