"""Helpers for the project's self-tests: run the suite in a subprocess and read its report."""

from __future__ import annotations

import json
import os
import shlex
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
    return SuiteRun(proc.returncode, proc.stdout + proc.stderr, results)


def mutant_command(name: str) -> str:
    """The suite's --server-cmd for a mutant (rt_* mutants belong to retrieval-tools)."""
    if name.startswith("rt_"):
        return f"{{python}} {shlex.quote(str(MUTANTS / 'launch_retrieval_tools.py'))} {name}"
    if name.startswith("hosted_"):
        return f"{{python}} {shlex.quote(str(MUTANTS / 'launch_hosted.py'))} {name} --port {{port}} --phase {{phase}}"
    http = " --http --port {port}" if name.startswith("http_") else ""
    return f"{{python}} {shlex.quote(str(MUTANTS / 'launch.py'))} {name} --vault {{vault}}{http}"


def mutant_suite_args(name: str) -> list[str]:
    """--profile (and --transport or --phase) for a mutant, by its name."""
    if name.startswith("rt_"):
        return ["--profile", "retrieval-tools"]
    if name.startswith("hosted_"):
        return ["--profile", "section-source-hosted", "--phase", "1K" if name.endswith("_1k") else "1L"]
    if name.startswith("http_"):
        return ["--profile", "section-source-local", "--transport", "http"]
    return ["--profile", "section-source-local"]


@pytest.fixture
def suite_run(tmp_path):
    def run(*args: str, timeout: int = 900, env: dict[str, str] | None = None) -> SuiteRun:
        return run_suite(tmp_path, *args, timeout=timeout, env=env)
    return run
