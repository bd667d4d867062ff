"""Benchmark: the reference retrieval-tools `search` over stdio, against named baselines run in
the same script on the same generated corpus.

Measured:
  reference     tools/call search {"query", "repo": "both", "limit"} over raw stdio JSON-RPC
Baselines:
  rg            `rg --sort path -F -n QUERY docs code` from the corpus root (skipped if rg is
                not on PATH). rg has no limit: it always returns every hit.
  python scan   sorted os.walk, read each file, find the literal in each line, stop at the
                limit; no ignore-file handling (the floor of a naive implementation)
Ratios printed: reference p95 / rg p95, reference p95 / python scan p95.

Run: .venv/bin/python benchmarks/retrieval_tools_search.py [--lines 1000000] [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from contract_tests.synthetic.roots import build_corpus
from contract_tests.transport.stdio import StdioServer

QUERIES = (  # kind, query, limit
    ("rare term", "rareterm", 200),
    ("common term", "commonterm", 200),
    ("no match", "nomatchterm-zz", 200),
    ("limit hit", "commonterm", 10000),
)
RARE_TARGET = 3.0  # the target: reference p95 within 3x of ripgrep on rare terms


def timed(fn, runs: int) -> tuple[list[float], int]:
    """Warm up once, then time `runs` calls in ms; also return the last call's hit count."""
    hits = fn()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        hits = fn()
        out.append((time.perf_counter() - start) * 1000)
    return out, hits


def p50_p95(values: list[float]) -> tuple[float, float]:
    return statistics.median(values), statistics.quantiles(values, n=100)[94]


def reference_search(srv: StdioServer, query: str, limit: int) -> int:
    response = srv.call_tool("search", {"query": query, "repo": "both", "limit": limit}, timeout=300)
    result = response.get("result", {})
    if "error" in response or result.get("isError"):
        raise RuntimeError(f"search failed: {response}")
    return len(result["structuredContent"]["result"]["matches"])


def rg_search(rg: str, base: Path, query: str) -> int:
    proc = subprocess.run([rg, "--sort", "path", "-F", "-n", query, "docs", "code"], cwd=base,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    if proc.returncode not in (0, 1):  # 1 means no match
        raise RuntimeError(f"rg exited {proc.returncode}")
    return proc.stdout.count(b"\n")


def python_scan(base: Path, query: str, limit: int) -> int:
    hits: list[tuple[str, int, str]] = []
    for repo in ("docs", "code"):
        for dirpath, dirnames, filenames in os.walk(base / repo):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    for number, line in enumerate(fh, 1):
                        if query in line:
                            hits.append((path, number, line))
                            if len(hits) >= limit:
                                return len(hits)
    return len(hits)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    rg = shutil.which("rg")
    if rg is None:
        print("rg is not installed: the ripgrep column is skipped")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        build_corpus(base, args.lines)
        env = {**os.environ, "DOCS_ROOT": str(base / "docs"), "CODE_ROOT": str(base / "code")}
        srv = StdioServer([sys.executable, "-m", "reference.retrieval_tools.server"], env=env)
        try:
            srv.initialize()
            for kind, query, limit in QUERIES:
                ref = timed(lambda: reference_search(srv, query, limit), args.runs)
                rgt = timed(lambda: rg_search(rg, base, query), args.runs) if rg else None
                py = timed(lambda: python_scan(base, query, limit), args.runs)
                rows.append((f"{kind} ({query}, limit {limit})", ref, rgt, py))
        finally:
            srv.close()

    def cell(t):
        return f"{'%.1f / %.1f' % p50_p95(t[0]) if t else 'skipped':>17}"

    print(f"{args.lines:,} lines, {args.runs} timed runs per query after one warm-up; "
          f"hits = matches returned (rg returns all)")
    print(f"{'query kind':38} | {'reference p50/p95':>17} | {'rg p50/p95':>17} | {'python p50/p95':>17} "
          f"| {'ref/rg p95':>10} | {'ref/py p95':>10} | hits ref/rg/py")
    rare_ratio = None
    for label, ref, rgt, py in rows:
        ref95 = p50_p95(ref[0])[1]
        vs_rg = ref95 / p50_p95(rgt[0])[1] if rgt else None
        vs_py = ref95 / p50_p95(py[0])[1]
        if label.startswith("rare term"):
            rare_ratio = vs_rg
        hits = f"{ref[1]}/{rgt[1] if rgt else '-'}/{py[1]}"
        print(f"{label:38} | {cell(ref)} | {cell(rgt)} | {cell(py)} "
              f"| {f'{vs_rg:.2f}' if vs_rg else '-':>10} | {vs_py:10.2f} | {hits}")
    if rare_ratio is None:
        print("target: reference p95 within 3x of ripgrep on rare terms: NOT MEASURED (rg not installed)")
    else:
        verdict = "MET" if rare_ratio <= RARE_TARGET else "NOT MET"
        print(f"target: reference p95 within 3x of ripgrep on rare terms: {verdict} (ratio {rare_ratio:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
