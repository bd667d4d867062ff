"""The wheel carries the contract data, the entry points and the references, and runs from
outside a checkout: built, installed into a fresh virtual environment, run on one profile."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                   check=True, timeout=600, capture_output=True)
    return next(out.glob("retrieval_contract-*.whl"))


def test_the_wheel_carries_the_contract_data_and_the_entry_points(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("contract_tests/_contracts/specs/mcp-base.yaml", "contract_tests/_contracts/schemas/spec.schema.json",
                   "contract_tests/_contracts/policies/path-attacks.yaml", "contract_tests/suite.ini",
                   "contract_tests/py.typed", "reference/retrieval_tools/declaration.yaml",
                   "contract_tests/_contracts/examples/generic-files/fs.yaml", "reference/generic_files/fs.py"):
        assert needed in names, needed
    # every module of the source tree: a folder that .gitignore shadows (it held `reports/`,
    # which left contract_tests/reports/ out) would be missing from the wheel
    modules = sorted(str(p.relative_to(ROOT)) for folder in ("contract_tests", "reference")
                     for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)
    assert [m for m in modules if m not in names] == []
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "retrieval-contract = contract_tests.cli:main" in text and "[pytest11]" in text


def test_the_installed_wheel_runs_a_profile_from_outside_a_checkout(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=900,
                   capture_output=True)
    run = subprocess.run([str(env_dir / "bin" / "retrieval-contract"), "--profile", "retrieval-tools", "-m",
                          "unit or integration", "-q", "-n", "2", "--report", str(tmp_path / "report")],
                         capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert (tmp_path / "report" / "results.json").is_file()
    mapped = subprocess.run([str(env_dir / "bin" / "retrieval-contract"), "--profile", "generic-files", "-q",
                             "--report", str(tmp_path / "mapped")], capture_output=True, text=True, timeout=900,
                            cwd=tmp_path)  # the first worked example's mapping, from the wheel's data
    assert mapped.returncode == 0, mapped.stdout[-3000:] + mapped.stderr[-2000:]
    version = subprocess.run([str(env_dir / "bin" / "retrieval-contract"), "--version"], capture_output=True,
                             text=True, timeout=60, cwd=tmp_path)
    assert "contract data" in version.stdout
