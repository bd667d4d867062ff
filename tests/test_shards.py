"""Sharded runs merge to the verdicts of one run."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import run_suite
from tests.mutants import command, registry, suite_args

# Any server that passes its profile: a correct variant of the retrieval-tools reference, whose
# starts go through the worker's fork server (tests/forkserver.py).
SERVER = registry()["rt_variant_jsonrpc_errors"]
# Two tiers of the profile (29 tests, not the whole run): the merge meets passes, n/a, not-run
# and a partial requirement (one of its tests deselected), split across the shards.
ARGS = [*suite_args(SERVER), "--server-cmd", command(SERVER), "-m", "unit or security"]


def test_two_shards_merged_give_the_verdicts_of_one_run(tmp_path, suite_run):
    whole = suite_run(*ARGS)
    assert whole.code == 0, whole.output[-2000:]
    reports = []
    for i in (1, 2):
        (tmp_path / f"shard{i}").mkdir()
        part = run_suite(tmp_path / f"shard{i}", *ARGS, "--shard", f"{i}/2")
        assert part.code == 0, part.output[-2000:]
        reports.append(str(part.report_dir / "results.json"))
    shard_counts = [len([t for r in json.load(open(p))["requirements"] for t in r["tests"]]) for p in reports]
    assert all(shard_counts), shard_counts  # both shards ran something
    merged = subprocess.run([sys.executable, "-m", "contract_tests.cli", "merge-reports", str(tmp_path / "merged"),
                             *reports], capture_output=True, text=True, timeout=120)
    assert merged.returncode == 0, merged.stdout
    result = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert {r["id"]: r["status"] for r in result["requirements"]} == whole.status()
    assert {"pass", "partial", "not-run"} <= set(whole.status().values()), whole.status()


def test_merging_reports_of_different_runs_is_refused(tmp_path):
    for name, profile in (("a", "retrieval-tools"), ("b", "section-source-local")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(
            {"profile": profile, "transport": "stdio", "phase": None, "target": "x", "shard": "1/2",
             "requirements": []}))
    out = subprocess.run([sys.executable, "-m", "contract_tests.cli", "merge-reports", str(tmp_path / "m"),
                          str(tmp_path / "a"), str(tmp_path / "b")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "different runs" in out.stdout
