"""A verdict a CI can trust: advisories apart from failures, --strict, a preflight with its own
exit status, findings counted only against the ids they name, and a run that ignores the
caller's pytest configuration."""

from __future__ import annotations

import json
import time

import pytest

from contract_tests.verdicts.findings import EXIT_SERVER_UNUSABLE
from tests.conftest import mutant_command


def test_an_advisory_is_reported_apart_and_does_not_fail_the_default_run(suite_run):
    run = suite_run("--server-cmd", mutant_command("open_input_schema"), "--req", "SSL-TOOL-004")
    assert run.code == 0, run.output[-3000:]
    assert run.status()["SSL-TOOL-004"] == "advisory"
    assert "advisories" in run.output and "[SSL-TOOL-004]" in run.output
    assert "## Advisories" in (run.report_dir / "results.md").read_text()


def test_strict_makes_an_advisory_fail_the_run(suite_run):
    run = suite_run("--server-cmd", mutant_command("open_input_schema"), "--req", "SSL-TOOL-004", "--rc-strict")
    assert run.code == pytest.ExitCode.TESTS_FAILED, run.output[-3000:]
    assert run.status()["SSL-TOOL-004"] == "fail"


def test_a_server_that_cannot_start_ends_the_run_at_once_with_its_stderr(suite_run):
    cmd = ("{python} -c \"import sys; print('not json'); print('boom: config missing', file=sys.stderr); "
           "sys.exit(3)\"")
    started = time.monotonic()
    run = suite_run("--server-cmd", cmd, "-n", "2")
    assert run.code == EXIT_SERVER_UNUSABLE, run.output[-3000:]
    assert time.monotonic() - started < 30
    for text in ("boom: config missing", "not json", "exit status: 3", "No test was run"):
        assert text in run.output, text
    assert run.output.count("Traceback") == 0
    assert run.results["server_unusable"]["exit_status"] == 3
    assert "The server never started" in (run.report_dir / "results.md").read_text()


def test_a_server_that_never_answers_initialize_ends_the_run_within_30_seconds(suite_run):
    started = time.monotonic()
    run = suite_run("--server-cmd", "{python} -c \"import time; time.sleep(120)\"")
    assert run.code == EXIT_SERVER_UNUSABLE, run.output[-3000:]
    assert time.monotonic() - started < 30
    assert "initialize" in run.output


def test_a_leak_found_after_a_test_counts_against_the_leak_requirement_only(suite_run):
    """The canary guard's finding names SSL-SEC-001; the test it ran after checked SSL-OUT-003,
    which passes."""
    run = suite_run("--server-cmd", mutant_command("body_in_output"), "--req", "SSL-OUT-003")
    status = run.status()
    assert status["SSL-OUT-003"] == "pass", status
    assert status["SSL-SEC-001"] == "fail", status
    evidence = next(r for r in run.results["requirements"] if r["id"] == "SSL-SEC-001")["evidence"]
    assert any("request: tools/call get_section_source" in e for e in evidence), evidence  # what carried it


def test_a_deselected_test_makes_its_requirement_partial(suite_run):
    run = suite_run("--req", "SSL-OUT-005", "-k", "not " + "seed-example", "-n", "2")
    assert run.code == 0, run.output[-3000:]
    assert run.status()["SSL-OUT-005"] == "partial"


def test_the_callers_pytest_configuration_changes_nothing(suite_run, tmp_path):
    """filterwarnings = error, an unknown ini key and -p no:xdist in addopts, in the directory the
    suite runs from (as when it runs from the server's repository)."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\nasyncio_mode = "auto"\n'
        'rc_unknown_key = 1\naddopts = "-p no:xdist --strict-config"\n')
    (tmp_path / "pytest.ini").write_text("[pytest]\nfilterwarnings = error\naddopts = -p no:xdist\n")
    run = suite_run("--req", "SSL-OUT-001,SSL-DI-003,MCP-STDIO-002", "-n", "2")
    assert run.code == 0, run.output[-3000:]
    assert {run.status()[r] for r in ("SSL-OUT-001", "SSL-DI-003", "MCP-STDIO-002")} == {"pass"}


def test_a_failure_names_the_request_and_a_command_to_rerun_it(suite_run):
    run = suite_run("--server-cmd", mutant_command("one_attack_accepted"), "--req", "SSL-IN-005")
    assert run.code == pytest.ExitCode.TESTS_FAILED
    assert 'request: tools/call get_section_source {"path": "inbox/../inbox/example.md"}' in run.output
    assert "rerun: retrieval-contract --profile section-source-local --transport stdio --server-cmd" in run.output
    assert "--case traversal-middle-resolves-inside" in run.output
    evidence = next(r for r in run.results["requirements"] if r["id"] == "SSL-IN-005")["evidence"]
    assert any("traversal-middle-resolves-inside" in e for e in evidence), json.dumps(evidence)


def test_the_reports_carry_html_a_baseline_diff_and_redacted_server_output(suite_run, tmp_path):
    first = suite_run("--req", "SSL-OUT-003")
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(first.results))
    run = suite_run("--req", "SSL-OUT-003,SSL-OUT-004", "--baseline", str(baseline),
                    "--docs-url", "https://docs.example.invalid/rc")
    assert run.code == 0, run.output[-2000:]
    assert "SSL-OUT-004: not-run -> pass" in run.output and "SSL-OUT-003:" not in run.output.split("baseline")[-1]
    html = (run.report_dir / "results.html").read_text()
    assert "<select name=\"basis\">" in html and "http" not in html.split("<body>")[0]  # no external assets
    assert run.results["server_logs"] and all("rcpath" not in line for log in run.results["server_logs"]
                                              for line in log["stderr"] + [log["command"]])
    md = (run.report_dir / "results.md").read_text()
    assert "(https://docs.example.invalid/rc/requirements/section-source-local.html#ssl-out-004)" in md


# -- blocked checks and suite errors (faults injected into the suite: tests/faults.py) --------------

# Requirements whose tests need the faulted fixture (the SDK's tool list) from several test
# modules: enough to show how a fixture's fault is reported, without a whole run.
FIXTURE_USERS = "SSL-OUT-003,SSL-OUT-004,SSL-OUT-005,SSL-TOOL-001,SSL-IN-005"


def _faulty(suite_run, fault: str, *args: str, body_log=None):
    from tests.conftest import ROOT
    env = {"RC_FAULT": fault, "PYTHONPATH": str(ROOT)}
    if body_log is not None:
        env["RC_FAULT_BODY_LOG"] = str(body_log)
    return suite_run("-p", "tests.faults", *args, env=env)


def test_a_crash_in_the_suite_is_one_suite_error_never_a_finding(suite_run):
    from contract_tests.verdicts.findings import EXIT_SUITE_ERROR
    run = _faulty(suite_run, "crash-fixture", "-n", "2", "--req", FIXTURE_USERS)
    assert run.code == EXIT_SUITE_ERROR, run.output[-3000:]
    errors = run.results["suite_errors"]
    assert len(errors) == 1 and errors[0]["message"] == "KeyError: 'tampered'" and errors[0]["count"] > 1, errors
    assert "Traceback" in errors[0]["traceback"] or "KeyError" in errors[0]["traceback"]
    rows = run.results["requirements"]
    assert not [r["id"] for r in rows if r["status"] == "fail"], "a suite error was filed against the server"
    assert not any("tampered" in e for r in rows for e in r["evidence"] if r["status"] == "fail")
    hit = [r for r in rows if r["blocked_by"] == ["suite error"]]
    assert hit and all(r["status"] in ("blocked", "partial") for r in hit), [(r["id"], r["status"]) for r in hit]
    assert "suite errors (bugs in retrieval-contract" in run.output
    assert run.output.count("traceback shown once") >= 1
    assert "## Suite errors" in (run.report_dir / "results.md").read_text()


def test_a_worker_that_dies_is_a_suite_error_naming_the_test_it_ran(suite_run):
    from contract_tests.verdicts.findings import EXIT_SUITE_ERROR
    run = _faulty(suite_run, "kill-worker", "-n", "2", "--req", "SSL-OUT-003")
    assert run.code == EXIT_SUITE_ERROR, run.output[-3000:]
    errors = run.results["suite_errors"]
    assert errors and all("worker died" in e["message"] for e in errors), errors
    assert any("test_" in t for e in errors for t in e["tests"]), errors
    assert run.status()["SSL-OUT-003"] == "blocked", run.status()


def test_a_crash_in_a_test_body_is_a_suite_error(suite_run):
    from contract_tests.verdicts.findings import EXIT_SUITE_ERROR
    run = _faulty(suite_run, "crash-check", "--req", "SSL-OUT-003,SSL-OUT-004")
    assert run.code == EXIT_SUITE_ERROR, run.output[-3000:]
    assert {run.status()[r] for r in ("SSL-OUT-003", "SSL-OUT-004")} == {"blocked"}, run.status()


def test_a_blocked_fixture_skips_its_tests_without_running_their_bodies(suite_run, tmp_path):
    """A precondition that fails in a fixture's setup blocks every test using it: pytest reports
    them skipped (JUnit <skipped> naming the blocker), their bodies never run, their
    requirements read blocked, and the run exits 7."""
    from contract_tests.verdicts.findings import EXIT_BLOCKED
    body_log = tmp_path / "bodies.txt"
    run = _faulty(suite_run, "block-fixture", "-n", "2", "--req", FIXTURE_USERS, body_log=body_log)
    assert run.code == EXIT_BLOCKED, run.output[-3000:]
    rows = {r["id"]: r for r in run.results["requirements"]}
    blocked = [r for r in rows.values() if r["status"] == "blocked"]
    assert blocked and all(r["blocked_by"] == ["FAULT-PRECONDITION"] for r in blocked)
    assert not any(r["status"] == "pass" and r["tests_blocked"] for r in rows.values())
    blocked_tests = {t["nodeid"] for r in blocked for t in r["tests"] if t["verdict"] == "blocked"}
    ran = set(body_log.read_text().split()) if body_log.exists() else set()
    assert blocked_tests and not blocked_tests & ran, sorted(blocked_tests & ran)[:5]
    junit = (run.report_dir / "junit.xml").read_text()
    assert "<skipped" in junit and "blocked by FAULT-PRECONDITION" in junit
    checks = run.results["checks"]
    assert checks["blocked"] > 0 and checks["blocked_by"].get("FAULT-PRECONDITION"), checks
    assert f"{checks['checked']} checked, {checks['blocked']} blocked" in run.output
    assert "exit status 7" in run.output


def test_a_check_blocked_in_its_body_reads_blocked_never_pass(suite_run):
    from contract_tests.verdicts.findings import EXIT_BLOCKED
    run = _faulty(suite_run, "block-check", "--req", "SSL-OUT-003,SSL-OUT-005", "-n", "2")
    assert run.code == EXIT_BLOCKED, run.output[-3000:]
    assert run.status()["SSL-OUT-003"] == "blocked" and run.status()["SSL-OUT-005"] == "blocked", run.status()
    assert "blocked requirements" in run.output and "## Blocked" in (run.report_dir / "results.md").read_text()


def test_a_failing_finding_is_never_reported_n_a():
    from collections import Counter

    from contract_tests.verdicts.findings import requirement_status
    assert requirement_status(Counter(fail=1), 0, False, False) == "fail"
    assert requirement_status(Counter(advisory=1), 0, False, False) == "advisory"
    assert requirement_status(Counter(blocked=2), 0, True, False) == "blocked"
    assert requirement_status(Counter(blocked=1, **{"pass": 1}), 0, True, False) == "partial"
    assert requirement_status(Counter(), 0, False, False) == "n/a"


def test_the_console_shows_each_finding_cut_and_results_json_keeps_more():
    from contract_tests.verdicts.findings import CONSOLE_CHARS, Finding
    finding = Finding("SSL-OUT-003", "x" * 100_000, request="tools/call t " + "y" * 50_000)
    shown = finding.render(CONSOLE_CHARS)
    assert len(shown) < 3 * CONSOLE_CHARS and "(100000 chars)" in shown


def test_the_rerun_line_carries_every_option_that_shaped_the_run(suite_run, tmp_path):
    declaration = tmp_path / "my decl.yaml"
    declaration.write_text("profile: section-source-local\n")
    run = suite_run("--server-cmd", mutant_command("one_attack_accepted"), "--req", "SSL-IN-005", "--strict",
                    "--declare", str(declaration), "--protocol-version", "2025-06-18")
    assert run.code == pytest.ExitCode.TESTS_FAILED, run.output[-3000:]
    line = next(x for x in run.output.splitlines() if x.startswith("rerun: "))
    import shlex
    argv = shlex.split(line.removeprefix("rerun: "))
    for option, value in (("--declare", str(declaration)), ("--protocol-version", "2025-06-18"),
                          ("--transport", "stdio"), ("--case", "traversal-middle-resolves-inside")):
        assert argv[argv.index(option) + 1] == value, line
    assert "--strict" in argv and run.results["protocol_version"] == "2025-06-18"


def test_a_server_that_speaks_only_an_older_version_is_negotiated_with(suite_run):
    """Offered newest first, the server's refusals are recorded and the run speaks the first
    version it accepts; the MCP-Protocol-Version header rule of 2025-06-18 is then n/a."""
    cmd = mutant_command("http_only_2025_03_26")
    run = suite_run("--server-cmd", cmd, "--transport", "http", "--req", "MCP-INIT-001,MCP-HTTP-003,SSL-OUT-003")
    assert run.code == 0, run.output[-3000:]
    assert run.results["protocol_version"] == "2025-03-26"
    refused = run.results["protocol_versions_refused"]
    assert [r.split(":")[0] for r in refused] == ["2025-11-25", "2025-06-18"], refused
    assert run.status()["MCP-INIT-001"] == "pass" and run.status()["MCP-HTTP-003"] == "n/a", run.status()


def test_a_server_that_refuses_every_version_offered_says_so(suite_run):
    cmd = mutant_command("http_only_2025_03_26")
    run = suite_run("--server-cmd", cmd, "--transport", "http", "--protocol-version", "2025-11-25")
    assert run.code == EXIT_SERVER_UNUSABLE, run.output[-3000:]
    assert "refused for every protocol version offered" in run.output and "--protocol-version" in run.output


def test_a_server_command_without_the_fixtures_placeholder_is_warned_about(suite_run):
    run = suite_run("--server-cmd", "{python} -m reference.section_source.server --vault .", "--req", "SSL-OUT-003")
    assert "takes none of the profile's fixture placeholders ({vault})" in run.output, run.output[-2000:]
    assert run.results["warnings"], run.results.get("warnings")


def _validation_error_in(filename: str):
    """The ValidationError a pydantic model raises when code that claims to live in `filename`
    (a frame's file is what the server-side rule reads) gives it a string for an int."""
    import pydantic

    class Model(pydantic.BaseModel):
        n: int
    namespace = {"Model": Model}
    try:
        exec(compile("def go():\n    Model(n='not a number')\ngo()\n", filename, "exec"), namespace)
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("pydantic accepted a string for an int")


def test_a_validation_error_is_the_servers_only_when_raised_reading_what_it_sent():
    from contract_tests.verdicts import findings as verdicts

    transport = _validation_error_in("/x/contract_tests/transport/sdk.py")
    upstream = _validation_error_in("/x/contract_tests/synthetic/upstream.py")
    sdk = _validation_error_in("/x/site-packages/mcp/client/session.py")
    suite = _validation_error_in("/x/contract_tests/vault_agent/test_tools.py")
    own = _validation_error_in("/x/contract_tests/implementation/calls.py")
    assert verdicts.server_side(transport) and verdicts.server_side(upstream) and verdicts.server_side(sdk)
    assert not verdicts.server_side(suite) and not verdicts.server_side(own)


def test_pytest_fail_is_the_suites_and_server_fault_is_the_servers():
    from _pytest.outcomes import Failed

    from contract_tests.verdicts import findings as verdicts

    assert verdicts.server_side(verdicts.ServerFault("no answer"))
    assert not verdicts.server_side(Failed("stray pytest.fail"))
    assert not verdicts.server_side(KeyError("tampered"))


def test_a_sweep_keeps_a_bounded_number_of_findings_and_counts_the_rest():
    from contract_tests.verdicts.findings import Findings, RequirementFailure
    findings = Findings()
    for i in range(Findings.KEPT + 250):
        findings.fail("y" * 10_000, req="X-1", case=f"c{i}")
    findings.block("not checked", req="X-2", by="X-1")
    assert findings.failed("X-1", case=f"c{Findings.KEPT + 10}")  # counted though not kept
    with pytest.raises(RequirementFailure) as raised:
        findings.close()
    items = raised.value.findings
    assert len(items) == Findings.KEPT + 2
    assert all(len(f.message) <= Findings.MESSAGE_CHARS + 6 for f in items)
    assert items[-2].req == "X-1" and "250 more" in items[-2].message and items[-2].kind == "fail"
    assert items[-1].req == "X-2" and items[-1].kind == "blocked" and items[-1].by == "X-1"


def test_results_md_shows_every_case_id_grouped_not_only_three_findings():
    """A user with 60 escapes sees all 60 case ids in results.md (grouped by attack, counted),
    beside the first findings quoted in full."""
    from contract_tests.reports.markdown import case_groups, render_markdown
    cases = [f"attack-{n}:{form}@read_text_file.path" for n in range(30) for form in ("relative", "absolute")]
    row = {"id": "GF-ESC-001", "spec": "generic-files", "basis": "mcp", "tiers": ["security"], "status": "fail",
           "tests_failing": 1, "tests_total": 1, "evidence": [f"[GF-ESC-001] {c}: escaped" for c in cases],
           "cases": {"failing": sorted(cases)}}
    doc = {"profile": "generic-files", "target": "x", "transport": "stdio", "phase": None, "summary": {"fail": 1},
           "exit_status": 1, "requirements": [row]}
    md = render_markdown(doc)
    assert "60 cases: " in md and all(f"attack-{n} x2" in md for n in range(30))
    assert "... 57 more in results.json" in md
    assert case_groups(["a:relative@t", "a:absolute@t", "b"]) == "a x2 (relative@t, absolute@t); b"


@pytest.mark.parametrize("request_timeout,initialize,other", [(20.0, 20.0, 20.0), (2.0, 20.0, 2.0),
                                                              (60.0, 60.0, 60.0)])
def test_the_preflight_waits_follow_the_request_timeout(monkeypatch, request_timeout, initialize, other):
    """The first initialize waits for start-up too (20 s at least, more when --request-timeout
    gives more: a server that indexes before it answers); the preflight's other requests (the
    profile's preflight calls, auto's tools/list) wait the request timeout, as every request does."""
    from types import SimpleNamespace

    from contract_tests.implementation import preflight
    from contract_tests.transport.limits import LIMITS
    from contract_tests.transport.stdio import NoResponse
    monkeypatch.setattr(LIMITS, "request_timeout", request_timeout)
    assert preflight.initialize_timeout() == initialize
    waited = []

    class Silent:  # a server that answers nothing, and notes how long it was asked to wait
        def request(self, method, params, timeout):
            waited.append(("request", timeout))
            raise NoResponse(method)

        def call_tool(self, name, arguments, timeout):
            waited.append(("call", timeout))
            raise NoResponse(name)
    assert preflight.tools_of(Silent()) == []
    state = SimpleNamespace(profile=SimpleNamespace(data={"preflight": {"calls": [{"tool": "t", "arguments": {}}]}}))
    assert "got no answer" in preflight._reach(state, Silent())[0]
    assert waited == [("request", other), ("call", other)]
