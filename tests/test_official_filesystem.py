"""The official filesystem server (@modelcontextprotocol/server-filesystem), the most-used file
server, judged by the generic-files profile under `--mapping auto` and under its worked mapping
(examples/generic-files/official-filesystem.yaml), at four pinned versions.

Versions up to 2025.3.28 carry CVE-2025-53110 (a path under `<root>_evil` passes a bare prefix
check) and CVE-2025-53109 (a symlink out of the root is followed): they must fail GF-ESC-001 and
nothing else the mapping reaches. 2025.7.1 (the fix) and 2026.8.31 must pass. Versions up to
2025.7.1 resolve a relative path against their working directory, which the suite sets to a
private, empty home: auto's trial (contract_tests/generic_files/trial.py) keeps the absolute
paths they serve, so their relative-path refusals are never a finding.

Each version is installed from the npm registry into a git-ignored cache (the old ones with
zod 3 beside them, which they need and no longer pin). The test skips, saying why, only when node
or npm is absent or the registry cannot be reached.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "official-filesystem"
MAPPING = ROOT / "examples" / "generic-files" / "official-filesystem.yaml"
PACKAGE = "@modelcontextprotocol/server-filesystem"
ZOD3 = "zod@3.25.76"
# version -> (what sits beside it, the requirements that must fail; every other must not)
VERSIONS = {
    "0.6.2": ((ZOD3,), {"GF-ESC-001"}),
    "2025.3.28": ((ZOD3,), {"GF-ESC-001"}),
    "2025.7.1": ((ZOD3,), set()),
    "2026.8.31": ((), set()),
}


def _installed(version: str, beside: tuple[str, ...]) -> Path:
    folder = CACHE / version
    entry = folder / "node_modules" / PACKAGE / "dist" / "index.js"
    if entry.is_file():
        return entry
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm are needed to install the official filesystem server")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({"private": True}))
    try:
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", f"{PACKAGE}@{version}", *beside],
                       cwd=folder, check=True, timeout=600, capture_output=True, text=True)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(folder, ignore_errors=True)
        output = getattr(exc, "stderr", "") or ""
        pytest.skip(f"npm could not install {PACKAGE}@{version} (is the registry reachable?): {output[-300:]}")
    return entry


def _judged(run, version: str, failing: set[str]) -> None:
    """`failing` fail, every other requirement passes (or has nothing to check), and the exit says so."""
    assert run.results is not None, run.output[-3000:]
    status = run.status()
    wrong = {req: verdict for req, verdict in status.items()
             if (verdict == "fail") != (req in failing) and verdict not in ("skip", "n/a")}
    assert not wrong, f"{version}: {wrong} (want {sorted(failing) or 'no failure'})\n{run.output[-3000:]}"
    assert run.code == (1 if failing else 0), f"{version}: exit {run.code}\n{run.output[-3000:]}"


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_the_official_filesystem_server_is_judged_right_under_auto(suite_run, version):
    beside, failing = VERSIONS[version]
    entry = _installed(version, beside)
    run = suite_run("--profile", "generic-files", "--mapping", "auto", "--server-cmd", f"node {entry} {{root}}")
    _judged(run, version, failing)
    assert "trial:" in (run.report_dir / "mapping.proposed.yaml").read_text()


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_the_official_filesystem_server_is_judged_right_under_its_worked_mapping(suite_run, version):
    """examples/generic-files/official-filesystem.yaml (the fs example's mapping, adapted: absolute
    paths, read_file) gives every version the verdicts auto gives it."""
    beside, failing = VERSIONS[version]
    entry = _installed(version, beside)
    _judged(suite_run("--profile", "generic-files", "--mapping", str(MAPPING), "--server-cmd", f"node {entry} {{root}}"),
            version, failing)
