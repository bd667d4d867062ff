"""Benchmark: the reference get_section_source over stdio, against named baselines run in the
same script on the same machine.

Baselines:
  ping          a JSON-RPC round trip to the same server (the transport floor)
  in-process    build_section_source on the same text, no MCP, no file read
Ratios printed: call / ping, call on a 20,000-note vault / call on a 10-note vault.

Run: .venv/bin/python benchmarks/section_source_calls.py [--calls 500]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import pct, timed  # benchmarks/ is on sys.path when run as a script

from contract_tests.transport.stdio import StdioServer
from reference.section_source.builder import build_section_source

NOTE = "\n\n".join(f"{'#' * (i % 3 + 1)} Heading {i}\n\nParagraph {i} with some text." for i in range(60)) + "\n"


def make_vault(root: Path, notes: int) -> Path:
    for i in range(notes):
        path = root / f"d{i % 100:02d}" / f"note-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {i}\n\nText.\n")
    (root / "target.md").write_text(NOTE)
    return root


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, notes in (("10 notes", 10), ("20,000 notes", 20_000)):
            vault = make_vault(Path(tmp) / label.replace(",", "").replace(" ", "-"), notes)
            srv = StdioServer([sys.executable, "-m", "reference.section_source.server", "--vault", str(vault)])
            try:
                srv.initialize()
                if notes == 10:
                    rows["ping (baseline)"] = timed(lambda: srv.request("ping"), args.calls)
                rows[f"get_section_source, {label}"] = timed(
                    lambda: srv.call_tool("get_section_source", {"path": "target.md"}), args.calls)
            finally:
                srv.close()
    rows["in-process builder (baseline)"] = timed(lambda: build_section_source("target.md", NOTE), args.calls)
    print(f"{'measure':40} {'p50 ms':>8} {'p95 ms':>8}")
    for name, values in rows.items():
        print(f"{name:40} {statistics.median(values):8.3f} {pct(values, 95):8.3f}")
    small = statistics.median(rows["get_section_source, 10 notes"])
    large = statistics.median(rows["get_section_source, 20,000 notes"])
    ping = statistics.median(rows["ping (baseline)"])
    print(f"\nratio call/ping (p50): {small / ping:.2f}")
    print(f"ratio 20,000-note vault / 10-note vault (p50): {large / small:.2f}  (spec budget: 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
