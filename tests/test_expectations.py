"""Expectations files: known failures by requirement or by one case (a vector, an attack);
unexpected passes and stale entries fail the run; a malformed file is a usage error."""

from __future__ import annotations

import pytest

from contract_tests.contracts import specs as contracts
from tests.conftest import mutant_command

FIRST_VECTOR = contracts.load_profile("section-source-local").vectors()[0]["id"]


def _write(tmp_path, body: str):
    path = tmp_path / "impl.yaml"
    path.write_text(body)
    return str(path)


def test_a_known_failure_is_reported_as_xfail_and_the_run_passes(suite_run, tmp_path):
    expect = _write(tmp_path, "implementation: stale-cache-mutant\nprofile: section-source-local\n"
                              "expected_failures:\n  SSL-DI-003: caches outputs per path\n")
    run = suite_run("--server-cmd", mutant_command("stale_cache"), "--req", "SSL-DI-003", "--expectations", expect)
    assert run.code == 0, run.output[-3000:]
    assert run.status()["SSL-DI-003"] == "xfail"


def test_a_requirement_listed_but_passing_everywhere_is_an_unexpected_pass(suite_run, tmp_path):
    expect = _write(tmp_path, "expected_failures:\n  SSL-DI-003: believed broken\n")
    run = suite_run("--req", "SSL-DI-003", "--expectations", expect)
    assert run.code == pytest.ExitCode.TESTS_FAILED, run.output[-3000:]
    assert "unexpected pass: SSL-DI-003" in run.output


def test_one_failing_vector_can_be_baselined_without_the_other_vectors(suite_run, tmp_path):
    """Listing the vector's case keeps the other 77 vectors strict, with no XPASS noise."""
    expect = _write(tmp_path, f"expected_failures:\n  SSL-OUT-005[{FIRST_VECTOR}]: our title differs\n")
    run = suite_run("--server-cmd", mutant_command("one_vector_wrong"), "--req", "SSL-OUT-005",
                    "--expectations", expect, "-n", "2")
    assert run.code == 0, run.output[-3000:]
    assert run.status()["SSL-OUT-005"] == "xfail"
    assert "XPASS" not in run.output


def test_one_failing_attack_of_a_sweep_can_be_baselined(suite_run, tmp_path):
    expect = _write(tmp_path, "expected_failures:\n  SSL-IN-005[traversal-middle-resolves-inside]: we serve it\n")
    run = suite_run("--server-cmd", mutant_command("one_attack_accepted"), "--req", "SSL-IN-005",
                    "--expectations", expect)
    assert run.code == 0, run.output[-3000:]
    assert run.status()["SSL-IN-005"] == "xfail"


def test_a_baselined_case_that_passes_fails_the_run(suite_run, tmp_path):
    expect = _write(tmp_path, "expected_failures:\n  SSL-IN-005[traversal-middle-resolves-inside]: we serve it\n")
    run = suite_run("--req", "SSL-IN-005", "--expectations", expect)
    assert run.code == pytest.ExitCode.TESTS_FAILED, run.output[-3000:]
    assert "unexpected pass: SSL-IN-005[traversal-middle-resolves-inside] is listed as an expected failure, but " \
           "passed" in run.output
    assert run.status()["SSL-IN-005"] == "pass"  # the requirement held; the stale entry fails the run


def test_a_case_no_test_ran_is_a_stale_entry(suite_run, tmp_path):
    expect = _write(tmp_path, "expected_failures:\n  SSL-OUT-005[no-such-vector]: gone\n")
    run = suite_run("--req", "SSL-OUT-005", "--expectations", expect, "-n", "2")
    assert run.code == pytest.ExitCode.TESTS_FAILED, run.output[-3000:]
    assert "stale entry SSL-OUT-005[no-such-vector]" in run.output


@pytest.mark.parametrize("body,message", [
    ("expected_failures:\n  SSL-NOPE-001: gone\n", "stale entry SSL-NOPE-001"),
    ("profile: open-notebook\nexpected_failures: {}\n", "written for profile"),
    ("expected_failures:\n  SSL-DI-003: ''\n", "reason string"),
    ("surprise: 1\n", "unknown keys"),
    ("", "the file is empty"),
    ("[]\n", "the file is empty"),
    ("- SSL-DI-003\n", "expected a mapping"),
])
def test_a_stale_or_malformed_expectations_file_is_a_usage_error(suite_run, tmp_path, body, message):
    run = suite_run("--req", "SSL-DI-003", "--expectations", _write(tmp_path, body))
    assert run.code == pytest.ExitCode.USAGE_ERROR, run.output[-3000:]
    assert message in run.output
    assert "suite is inconsistent" not in run.output
