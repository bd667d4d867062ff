"""The console script's own help, version and listing (not pytest's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "contract_tests.cli", *args], capture_output=True, text=True,
                          timeout=120)


def test_help_lists_every_option_of_the_suite_and_nothing_of_pytests_own():
    out = _cli("--help")
    assert out.returncode == 0
    for option in ("--profile", "--server-cmd", "--transport", "--phase", "--server-url", "--server-path",
                   "--canister-port", "--declare", "--expectations", "--report", "--req", "--case", "--strict"):
        assert option in out.stdout, option
    assert "{port}" in out.stdout and "declare --profile" in out.stdout
    assert len(out.stdout.splitlines()) < 120 and "--cov" not in out.stdout and "--pdb" not in out.stdout


def test_help_for_a_profile_shows_its_placeholders_and_choices():
    out = _cli("--profile", "retrieval-tools", "--help")
    assert "{docs_root}" in out.stdout and "declarable choice open_hidden" in out.stdout
    assert len(out.stdout.splitlines()) < 140


def test_help_for_a_profile_with_further_commands_names_each_role_and_the_references_own():
    out = _cli("--profile", "vault-agent", "--help")
    for role in ("index", "serve", "public", "hold"):
        assert f"--rc-command {role}=CMD" in out.stdout, role
    assert "command hold (optional)" in out.stdout
    assert "    index: {python} -m reference.vault_agent index" in out.stdout
    assert "--rc-command ROLE=CMD" in _cli("--help").stdout


def test_help_of_all_is_its_own_and_runs_nothing():
    """`all --help` once printed the suite's help per run, after starting every run."""
    out = _cli("all", "--help")
    assert out.returncode == 0
    assert out.stdout.startswith("usage: retrieval-contract all") and "-n N" in out.stdout
    assert "runs in" not in out.stdout and "pass " not in out.stdout


def test_version_names_the_suite_and_the_contract_data():
    out = _cli("--version")
    assert out.returncode == 0
    assert out.stdout.startswith("retrieval-contract ") and "contract data " in out.stdout
    assert "pytest" not in out.stdout


def test_list_shows_requirements_with_their_basis_and_what_proves_them():
    out = _cli("list", "--profile", "retrieval-tools", "--basis", "seed", "--format", "json")
    rows = json.loads(out.stdout)
    assert rows and all(r["basis"] == "seed" for r in rows)
    path = next(r for r in rows if r["id"] == "RT-PATH-002")
    assert path["tests"] and path["corpus_attacks"] > 100


def test_plain_pytest_runs_a_profile_beside_a_plugin_with_a_profile_option(tmp_path):
    """Under plain pytest every suite option is prefixed --rc-: pytest-profiling, installed
    beside the plugin (autoloaded, as in a user's environment), keeps its own --profile, and
    both work in one run."""
    pytest.importorskip("pytest_profiling")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    run = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "contract_tests", "-p", "no:cacheprovider",
                          "--rc-profile", "retrieval-tools", "--rc-req", "RT-TOOL-001", "--profile",
                          "--rc-report", str(tmp_path / "report"), "-q"],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    status = {row["id"]: row["status"] for row in json.loads((tmp_path / "report" / "results.json").read_text())["requirements"]}
    assert status["RT-TOOL-001"] == "pass", status
    assert (tmp_path / "prof").is_dir(), "pytest-profiling did not profile the run"
