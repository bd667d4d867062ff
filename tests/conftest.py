"""Helpers for the project's self-tests: run the suite in a subprocess and read its report."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "tests" / "mutants"


@dataclass
class SuiteRun:
    code: int
    output: str
    results: dict | None
    report_dir: Path | None = None

    def status(self) -> dict[str, str]:
        return {row["id"]: row["status"] for row in (self.results or {}).get("requirements", [])}


def run_suite(tmp_path: Path, *args: str, timeout: int = 900, env: dict[str, str] | None = None) -> SuiteRun:
    report = tmp_path / "report"
    cmd = [sys.executable, "-m", "contract_tests.cli", "-q", "-p", "no:randomly",
           "--report", str(report), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp_path,
                          env=None if env is None else {**os.environ, **env})
    results_file = report / "results.json"
    results = json.loads(results_file.read_text()) if results_file.is_file() else None
    return SuiteRun(proc.returncode, proc.stdout + proc.stderr, results, report)


def mutant_command(name: str) -> str:
    """The suite's --server-cmd for a registered mutant or variant."""
    from tests.mutants import command, registry
    return command(registry()[name])


@pytest.fixture
def suite_run(tmp_path):
    def run(*args: str, timeout: int = 900, env: dict[str, str] | None = None) -> SuiteRun:
        return run_suite(tmp_path, *args, timeout=timeout, env=env)
    return run


# -- the machine, shared between xdist workers ---------------------------------------------------
# A test marked `alone` (the hostile runs, which time a whole suite run against a bound stated
# for two cores) has the machine to itself: it waits for the test running on the other worker
# to end, and no other test starts until it is done. Every other test shares the machine. The
# turnstile gives the waiting `alone` test priority over tests that would start after it.

@pytest.fixture(autouse=True)
def _the_machine(request, tmp_path_factory):
    locks = tmp_path_factory.getbasetemp().parent  # one folder for every worker of the run
    alone = request.node.get_closest_marker("alone") is not None
    with (locks / "rc-turnstile.lock").open("w") as turnstile, (locks / "rc-machine.lock").open("w") as machine:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(machine, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(machine, fcntl.LOCK_UN)
            if alone:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
