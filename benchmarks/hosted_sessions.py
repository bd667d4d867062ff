"""Benchmark: the hosted reference get_section_source over Streamable HTTP, alone and under
many concurrent sessions, against named baselines run in the same script.

Baselines (same machine, same process, same canister double):
  canister GET   the one upstream read a call must make, sent straight to the double
  ping           an MCP JSON-RPC round trip to the same server (HTTP + auth + SDK floor)
Measured:
  get_section_source on one session, then N concurrent sessions (different users and vaults,
  each reading its own note at the same path), N = 1, 5, 10, 20, 24 by default. Each session
  checks that every result carries only its own vault's heading and every upstream read only
  its own vault and user; any mix-up is counted and printed.

Calls go over raw JSON-RPC (contract_tests.transport.http.HttpServer), not the SDK client, so the
server is timed and not the client's validation (see FIELD-NOTES).

Run: .venv/bin/python benchmarks/hosted_sessions.py [--calls 200] [--sessions 1,5,10,20,24]
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import threading
import time

import httpx
from _timing import pct, timed  # benchmarks/ is on sys.path when run as a script

from contract_tests.synthetic import tokens
from contract_tests.synthetic.upstream import UpstreamDouble, note_payload, note_url_path
from contract_tests.transport.http import HttpServer, free_port

TOOL = "get_section_source"
PATH = "shared/note.md"
NOTE = "\n\n".join(f"{'#' * (i % 3 + 1)} Heading {i}\n\nParagraph {i} with some text." for i in range(60)) + "\n"


class Session:
    def __init__(self, url: str, secret: str, double: UpstreamDouble, index: int) -> None:
        self.tag = f"tag{index:03d}x{secrets.token_hex(3)}"
        self.vault = f"vault-{index:03d}"
        self.user = f"cu-{index:03d}"
        double.put_note(self.vault, PATH, note_payload(PATH, f"# {self.tag}\n\n" + NOTE))
        token = tokens.mint(secret, sub=f"user-{index:03d}", vault_id=self.vault, role="viewer",
                            canister_user_id=self.user, ttl_s=3600)
        self.conn = HttpServer(url, headers={"Authorization": f"Bearer {token}"})
        assert "result" in self.conn.initialize(), "no session"
        self.latencies: list[float] = []
        self.mixups = 0

    def call(self) -> None:
        start = time.perf_counter()
        response = self.conn.call_tool(TOOL, {"path": PATH}, timeout=120)
        self.latencies.append((time.perf_counter() - start) * 1000)
        text = response["result"]["content"][0]["text"]
        if self.tag not in text:
            self.mixups += 1


def concurrent(url: str, secret: str, double: UpstreamDouble, count: int, calls: int) -> dict[str, float]:
    sessions = [Session(url, secret, double, i) for i in range(count)]
    for s in sessions:
        s.call()  # warm-up
        s.latencies.clear()
    double.clear()
    barrier = threading.Barrier(count)

    def run(s: Session) -> None:
        barrier.wait()
        for _ in range(calls):
            s.call()

    threads = [threading.Thread(target=run, args=(s,)) for s in sessions]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    by_vault = {s.vault: s.user for s in sessions}
    header_mixups = sum(1 for r in double.requests if by_vault.get(r.headers.get("x-vault-id")) != r.headers.get("x-user-id"))
    latencies = [v for s in sessions for v in s.latencies]
    for s in sessions:
        s.conn.close()
    return {"calls": len(latencies), "wall_s": wall, "throughput": len(latencies) / wall,
            "p50": statistics.median(latencies), "p95": pct(latencies, 95),
            "mixups": sum(s.mixups for s in sessions) + header_mixups,
            "reads": len(double.requests)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200, help="calls per measurement (per session when concurrent)")
    parser.add_argument("--sessions", default="1,5,10,20,24")
    args = parser.parse_args()
    secret = tokens.new_secret()
    port = free_port()
    with UpstreamDouble() as double:
        env = dict(os.environ, RC_JWT_SECRET=secret, RC_CANISTER_URL=double.url, RC_GATEWAY_SECRET="bench-gateway",
                   NO_PROXY="127.0.0.1")
        argv = [sys.executable, "-m", "reference.section_source_hosted.server", "--port", str(port), "--phase", "1L"]
        server = HttpServer(f"http://127.0.0.1:{port}/mcp", argv, env=env)
        try:
            base = Session(server.url, secret, double, 999)
            with httpx.Client(trust_env=False) as http:
                direct = timed(lambda: http.get(double.url + note_url_path(PATH),
                                                headers={"X-Vault-Id": base.vault, "X-User-Id": base.user}),
                               args.calls)
            ping = timed(lambda: base.conn.request("ping"), args.calls)
            single = timed(base.call, args.calls)
            base.conn.close()
            rows = [("canister GET (baseline)", direct), ("ping (baseline)", ping), ("get_section_source, 1 session", single)]
            print(f"{'measure':34} {'p50 ms':>8} {'p95 ms':>8}")
            for name, values in rows:
                print(f"{name:34} {statistics.median(values):8.2f} {pct(values, 95):8.2f}")
            print(f"\nratio call/ping (p50): {statistics.median(single) / statistics.median(ping):.2f}; "
                  f"call/canister GET (p50): {statistics.median(single) / statistics.median(direct):.2f}")
            print(f"\n{'sessions':>8} {'calls':>6} {'calls/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'reads':>6} {'mix-ups':>8}")
            for count in (int(x) for x in args.sessions.split(",")):
                row = concurrent(server.url, secret, double, count, max(1, args.calls // count))
                print(f"{count:8d} {row['calls']:6d} {row['throughput']:8.1f} {row['p50']:8.2f} {row['p95']:8.2f} "
                      f"{row['reads']:6d} {row['mixups']:8d}")
        finally:
            server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
