"""Expectations files: known failures become strict xfails; unexpected passes and stale entries fail."""

from __future__ import annotations

import pytest

from tests.conftest import mutant_command


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


def test_an_unexpected_pass_fails_the_run(suite_run, tmp_path):
    expect = _write(tmp_path, "expected_failures:\n  SSL-DI-003: believed broken\n")
    run = suite_run("--req", "SSL-DI-003", "--expectations", expect)
    assert run.code == pytest.ExitCode.TESTS_FAILED, run.output[-3000:]
    assert run.status()["SSL-DI-003"] == "fail"


@pytest.mark.parametrize("body,message", [
    ("expected_failures:\n  SSL-NOPE-001: gone\n", "not a requirement of this profile"),
    ("profile: open-notebook\nexpected_failures: {}\n", "written for profile"),
    ("expected_failures:\n  SSL-DI-003: ''\n", "reason string"),
    ("surprise: 1\n", "unknown keys"),
])
def test_a_stale_or_malformed_expectations_file_is_a_usage_error(suite_run, tmp_path, body, message):
    run = suite_run("--req", "SSL-DI-003", "--expectations", _write(tmp_path, body))
    assert run.code == pytest.ExitCode.USAGE_ERROR, run.output[-3000:]
    assert message in run.output
