"""Helpers for the project's self-tests: run the suite in a subprocess and read its report."""

from __future__ import annotations

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
