"""Benchmark: the open-notebook reference's semantic_search and fetch_passage over stdio on a
1,000-notebook collection, against an MCP ping to the same server in the same run.

Measured (raw JSON-RPC over stdio, the whole round trip, after entering the collection):
  semantic_search   {"query": q} (default k = 10), q cycling through the generator's probe
                    queries of the collection and a few common-word queries
  fetch_passage     {"source_id": s}, s cycling through a fixed sample of the collection's
                    source ids (each read from disk and checked against its checksum)
Baseline:
  ping              a JSON-RPC `ping` to the same server (the transport floor)
Also printed: process start to an answered initialize (the index is built at start-up).
The three measures are interleaved call by call, so load on the machine hits them alike.

Run: .venv/bin/python benchmarks/open_notebook.py [--notebooks 1000] [--calls 500]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _timing import pct  # benchmarks/ is on sys.path when run as a script

from contract_tests.synthetic import notebook_generator as fixture
from contract_tests.transport.stdio import StdioServer

COMMON_QUERIES = ("ledger survey harvest", "river orchard tide gauge", "the current valve and spindle",
                  "frost on the kelp", "quince weir bearing lathe")


def call(srv: StdioServer, name: str, arguments: dict) -> None:
    response = srv.call_tool(name, arguments, timeout=60)
    if "error" in response or response["result"].get("isError"):
        raise RuntimeError(f"{name} failed: {str(response)[:300]}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notebooks", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        built = fixture.build(Path(tmp) / "root", seed=0, collections=1, bench_notebooks=args.notebooks)
        bench = built.collections[fixture.BENCH_COLLECTION]
        queries = [p.query for p in bench.passages] + list(COMMON_QUERIES)
        sources = random.Random(0).sample(bench.source_ids, min(200, len(bench.source_ids)))
        started = time.perf_counter()
        srv = StdioServer([sys.executable, "-m", "reference.open_notebook", "--notebooks", str(built.root)])
        rows: dict[str, list[float]] = {"ping (baseline)": [], "semantic_search": [], "fetch_passage": []}
        try:
            srv.initialize()
            startup_ms = (time.perf_counter() - started) * 1000
            call(srv, "enter_collection", {"collection_id": fixture.BENCH_COLLECTION})
            steps = [("ping (baseline)", lambda i: srv.request("ping")),
                     ("semantic_search", lambda i: call(srv, "semantic_search", {"query": queries[i % len(queries)]})),
                     ("fetch_passage", lambda i: call(srv, "fetch_passage", {"source_id": sources[i % len(sources)]}))]
            for i in range(-50, args.calls):  # 50 untimed warm-up rounds
                for label, step in steps:
                    begin = time.perf_counter()
                    step(i)
                    if i >= 0:
                        rows[label].append((time.perf_counter() - begin) * 1000)
        finally:
            srv.close()
        passages = len(bench.source_ids)
    print(f"{args.notebooks:,} notebooks, {passages:,} passages in the collection; {args.calls} interleaved calls "
          f"per measure after 50 warm-up rounds; start-up to initialize: {startup_ms:.0f} ms")
    ping50, ping95 = statistics.median(rows["ping (baseline)"]), pct(rows["ping (baseline)"], 95)
    print(f"| {'measure':18} | {'p50 ms':>7} | {'p95 ms':>7} | {'p50 / ping p50':>14} | {'p95 / ping p95':>14} |")
    print(f"|{'-' * 20}|{'-' * 9}|{'-' * 9}|{'-' * 16}|{'-' * 16}|")
    for label, values in rows.items():
        p50, p95 = statistics.median(values), pct(values, 95)
        print(f"| {label:18} | {p50:7.2f} | {p95:7.2f} | {p50 / ping50:14.1f} | {p95 / ping95:14.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
