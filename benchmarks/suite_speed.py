"""Where the suite's time goes: per run of the matrix, and per file and kind of the self-tests.

    .venv/bin/python benchmarks/suite_speed.py [--runs NAME,...] [-n N] [--repeat K] [--json FILE]
    .venv/bin/python benchmarks/suite_speed.py --selftests JUNIT.xml

The first form runs the suite against the bundled references, one run of the matrix after the
other (`retrieval-contract all`'s runs, by name), each with `-n N` (default: what `all` uses), and
the timing plugin `benchmarks/_suite_timing.py` loaded. It prints, per run, the wall time and
its phases: interpreter start and imports, the preflight, xdist bring-up, the fixture build, the
processes started (how many, and the seconds spent starting them), and the tests themselves (call
and setup phases, summed over workers, so they may exceed the wall time). The imports line at the
top is `python -X importtime` of the plugin, and of each reference server.

The second form reads a JUnit file of the self-tests (`pytest -n 2 tests --junitxml FILE`) and
prints the test-seconds per file and per kind: mutant runs, variant runs, hostile runs, real
clients, builder vectors, the rest. Test-seconds are summed over both workers (wall is about half).

No figure here is an assertion: this is a measuring tool, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KINDS = [  # (kind, test module names)
    ("mutant runs", {"tests.test_mutants"}),
    ("variant runs", {"tests.test_variants"}),
    ("hostile runs", {"tests.test_hostile"}),
    ("real clients", {"tests.test_real_clients"}),
    ("builder vectors", {"tests.test_builder", "tests.test_builder_differential"}),
]


def import_seconds(module: str) -> float:
    """Seconds of `import module` as `python -X importtime` counts them (the outermost total)."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True,
                         text=True, cwd=ROOT).stderr
    totals = [int(m.group(1)) for m in re.finditer(r"^import time:\s+\d+ \|\s+(\d+) \| \S", out, re.M)]
    return max(totals, default=0) / 1e6


def run_one(name: str, argv: list[str], workers: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="rc-bench-") as tmp:
        log = Path(tmp) / "timing.jsonl"
        env = {**os.environ, "RC_BENCH_LOG": str(log), "RC_BENCH_T0": repr(time.time()),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        began = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "contract_tests.cli", *argv, "-n", workers, "-q",
                               "-p", "benchmarks._suite_timing", "--report", str(Path(tmp) / "report")],
                              capture_output=True, text=True, env=env, cwd=tmp)
        wall = time.monotonic() - began
        rows = [json.loads(line) for line in log.read_text().splitlines()] if log.is_file() else []
    ctl = next((r for r in rows if r["process"] == "controller"), {})
    workers_rows = [r for r in rows if r["process"] != "controller"] or [ctl]
    return {"run": name, "exit": proc.returncode, "wall": wall, "imports": ctl.get("imports", 0.0),
            "preflight": ctl.get("preflight", 0.0),
            "bringup": max((r.get("bringup", 0.0) for r in workers_rows), default=0.0),
            "fixture": sum(r.get("fixture", 0.0) for r in workers_rows),
            "starts": sum(r.get("starts", 0) for r in rows), "start_s": sum(r.get("start_s", 0.0) for r in rows),
            "tests": sum(r.get("tests", 0.0) for r in workers_rows),
            "setup": sum(r.get("setup", 0.0) for r in workers_rows),
            "per_test": {k: v for r in rows for k, v in (r.get("per_test") or {}).items()}}


def matrix_runs() -> list[tuple[str, list[str]]]:
    from contract_tests.cli.retrieval_contract import matrix
    runs = []
    for profile_id, transport, phase, mapping in matrix():
        example = Path(mapping).stem if mapping else None
        name = "-".join(x for x in (profile_id, example, transport, phase) if x)
        argv = ["--profile", profile_id, "--transport", transport] + (["--phase", phase] if phase else []) + (
            ["--mapping", mapping] if mapping else [])
        runs.append((name, argv))
    return runs


COLUMNS = [("wall", "wall s"), ("imports", "imports"), ("preflight", "preflight"), ("bringup", "bring-up"),
           ("fixture", "fixture"), ("starts", "starts"), ("start_s", "start s"), ("setup", "setup"),
           ("tests", "tests")]


def table(rows: list[dict]) -> str:
    head = "| run | exit | " + " | ".join(label for _k, label in COLUMNS) + " |"
    lines = [head, "|---|---:|" + "---:|" * len(COLUMNS)]
    for row in rows:
        cells = [f"{row[k]:.0f}" if k == "starts" else f"{row[k]:.1f}" for k, _label in COLUMNS]
        lines.append(f"| {row['run']} | {row['exit']} | " + " | ".join(cells) + " |")
    walls = [r["wall"] for r in rows]
    if walls:
        lines.append(f"\n{len(rows)} runs: wall {sum(walls):.1f} s in all, median {statistics.median(walls):.1f} s, "
                     f"longest {max(walls):.1f} s; {sum(r['starts'] for r in rows)} processes started")
    return "\n".join(lines)


def selftests(junit: Path) -> str:
    per_file: Counter = Counter()
    count: Counter = Counter()
    for case in ET.parse(junit).iter("testcase"):
        module = case.get("classname") or "?"
        per_file[module] += float(case.get("time") or 0)
        count[module] += 1
    kinds: Counter = Counter()
    for module, seconds in per_file.items():
        kind = next((k for k, modules in KINDS if module in modules), "the rest")
        kinds[kind] += seconds
    total = sum(per_file.values())
    lines = ["| kind | test-seconds | share |", "|---|---:|---:|"]
    for kind, seconds in kinds.most_common():
        lines.append(f"| {kind} | {seconds:.0f} | {seconds / total:.0%} |")
    lines += ["", "| file | tests | test-seconds |", "|---|---:|---:|"]
    for module, seconds in per_file.most_common():
        if seconds >= 1:
            lines.append(f"| {module} | {count[module]} | {seconds:.0f} |")
    lines.append(f"\n{sum(count.values())} tests, {total:.0f} test-seconds (both workers summed)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", help="comma-separated run names (default: every run of the matrix)")
    parser.add_argument("-n", default=None, help="xdist workers per run (default: 2)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each (the table gives the median)")
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--detail", action="store_true", help="with --json: processes started and seconds per test")
    parser.add_argument("--selftests", help="summarise a JUnit file of the self-tests instead")
    args = parser.parse_args(argv)
    if args.selftests:
        print(selftests(Path(args.selftests)))
        return 0
    print(f"imports (python -X importtime): contract_tests.plugin {import_seconds('contract_tests.plugin'):.2f} s, "
          f"mcp.server.lowlevel {import_seconds('mcp.server.lowlevel'):.2f} s, "
          f"reference.section_source.server {import_seconds('reference.section_source.server'):.2f} s")
    if args.detail:
        os.environ["RC_BENCH_DETAIL"] = "1"
    wanted = set(args.runs.split(",")) if args.runs else None
    rows = []
    for name, run_argv in matrix_runs():
        if wanted and name not in wanted:
            continue
        trials = [run_one(name, run_argv, args.n or "2") for _ in range(args.repeat)]
        trials.sort(key=lambda r: r["wall"])
        rows.append(trials[len(trials) // 2])
        print(f"  {name}: {rows[-1]['wall']:.1f} s (exit {rows[-1]['exit']})", file=sys.stderr, flush=True)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
