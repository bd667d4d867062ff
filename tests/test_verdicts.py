"""A verdict a CI can trust: advisories apart from failures, --strict, a preflight with its own
exit status, findings counted only against the ids they name, and a run that ignores the
caller's pytest configuration."""

from __future__ import annotations

import json
import time

import pytest

from contract_tests.verdicts import EXIT_SERVER_UNUSABLE
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
    assert "rerun: retrieval-contract --profile section-source-local --server-cmd" in run.output
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
