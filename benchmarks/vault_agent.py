"""Benchmark: the reference vault-agent on a generated 10,000-note vault, each measure against a
baseline timed in the same run on the same files.

Measured (baselines in brackets):
  index build     full `Core.index` in process, lexical only and with a 16-dimension model
                  [reading and UTF-8 decoding every note file once: the floor of any indexer]
  search          tools/call search over raw stdio JSON-RPC to `vault-agent mcp`, p50/p95,
                  lexical [a plain scan: read every note, count query-term hits, keep the top
                  10] and hybrid [the same server's lexical search]
  get_note        tools/call get_note over stdio, p50 [an MCP ping on the same connection]

Run: .venv/bin/python benchmarks/vault_agent.py [--notes 10000] [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._timing import pct, timed  # noqa: E402
from reference.vault_agent.config import load_settings  # noqa: E402
from reference.vault_agent.core import Core  # noqa: E402
from reference.vault_agent.embedding import write_model  # noqa: E402
from reference.vault_agent.store import note_id  # noqa: E402

QUERIES = {"rare term": "quasar", "common terms": "river stone"}


def build_vault(root: Path, notes: int) -> list[str]:
    """`notes` notes of three sections of word salad; 'quasar' appears in 5 of them."""
    rng = random.Random(7)
    vocabulary = [f"w{n}" for n in range(2000)] + ["river", "stone", "cloud", "forest"]
    rare = set(rng.sample(range(notes), 5))
    paths = []
    for n in range(notes):
        rel = f"area{n % 100:02d}/note{n:05d}.md"
        sections = []
        for s in range(3):
            words = rng.choices(vocabulary, k=50)
            if n in rare and s == 1:
                words[10] = "quasar"
            sections.append(f"## Section {s}\n\n" + " ".join(words) + "\n")
        text = f"---\ntitle: Note {n}\ntags: [t{n % 17}]\n---\n# Note {n}\n\n" + "\n".join(sections)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(rel)
    return paths


def build_model(path: Path) -> Path:
    rng = random.Random(11)
    words = [f"w{n}" for n in range(2000)] + ["river", "stone", "cloud", "forest", "quasar", "note", "section"]
    return write_model(path, {w: [rng.uniform(-1, 1) for _ in range(16)] for w in words})


def read_all(root: Path, paths: list[str]) -> None:
    for rel in paths:
        (root / rel).read_bytes().decode("utf-8")


def plain_scan(root: Path, paths: list[str], query: str) -> int:
    terms = re.findall(r"\w+", query.casefold())
    scored = []
    for rel in paths:
        text = (root / rel).read_text(encoding="utf-8").casefold()
        hits = sum(text.count(term) for term in terms)
        if hits:
            scored.append((-hits, rel))
    scored.sort()
    return len(scored[:10])


class Stdio:
    """Raw JSON-RPC lines to `vault-agent mcp`, one request at a time."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next = 0

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next += 1
        message = {"jsonrpc": "2.0", "id": self.next, "method": method, **({"params": params} if params else {})}
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next:
                return answer

    def call(self, name: str, arguments: dict) -> dict:
        answer = self.request("tools/call", {"name": name, "arguments": arguments})
        if "error" in answer:
            raise RuntimeError(f"{name} failed: {answer['error']['data']}")
        return answer["result"]["structuredContent"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def row(label: str, values: list[float], base_label: str, base: list[float]) -> str:
    p50, p95, b50, b95 = pct(values, 50), pct(values, 95), pct(base, 50), pct(base, 95)
    return (f"| {label} | {p50:.1f} | {p95:.1f} | {base_label} | {b50:.1f} | {b95:.1f} "
            f"| {p50 / b50:.2f} | {p95 / b95:.2f} |")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        vault = base / "vault"
        paths = build_vault(vault, args.notes)
        model = build_model(base / "model.json")
        lexical = Core(load_settings({"vault.root": str(vault), "index.dir": str(base / "idx-lex")}, env={}))
        flags = {"vault.root": str(vault), "index.dir": str(base / "idx"), "embedding.enabled": "true",
                 "embedding.model": str(model)}
        embedded = Core(load_settings(flags, env={}))

        started = time.perf_counter()
        read_all(vault, paths)
        read_s = time.perf_counter() - started
        started = time.perf_counter()
        summary = lexical.index(full=True).data
        lex_s = time.perf_counter() - started
        started = time.perf_counter()
        embedded.index(full=True)
        emb_s = time.perf_counter() - started

        argv = [sys.executable, "-m", "reference.vault_agent", "mcp", "--vault-root", str(vault),
                "--index-dir", str(base / "idx"), "--embedding-enabled", "--embedding-model", str(model)]
        server = Stdio(argv)
        server.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                      "clientInfo": {"name": "bench", "version": "0"}})
        server.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        server.proc.stdin.flush()
        rows = []
        try:
            for kind, query in QUERIES.items():
                lex = timed(lambda: server.call("search", {"query": query, "mode": "lexical"}), args.runs, warmup=3)
                hyb = timed(lambda: server.call("search", {"query": query, "mode": "hybrid"}), args.runs, warmup=3)
                scan = timed(lambda: plain_scan(vault, paths, query), args.runs, warmup=1)
                rows.append(row(f"search lexical, {kind}", lex, "plain scan", scan))
                rows.append(row(f"search hybrid, {kind}", hyb, "search lexical", lex))
            nid = note_id(paths[len(paths) // 2])
            get = timed(lambda: server.call("get_note", {"noteId": nid}), args.runs * 3, warmup=5)
            ping = timed(lambda: server.request("ping"), args.runs * 3, warmup=5)
            rows.append(row("get_note", get, "MCP ping", ping))
        finally:
            server.close()
    print(f"{args.notes:,} notes ({summary['chunksIndexed']:,} chunks), {args.runs} timed runs per search "
          f"({args.runs * 3} for get_note and ping) after a warm-up; times in ms")
    print()
    print("| build | seconds | baseline | seconds | ratio |")
    print("|---|---|---|---|---|")
    print(f"| index, lexical only | {lex_s:.1f} | read + decode every note | {read_s:.2f} | {lex_s / read_s:.0f} |")
    print(f"| index, with embeddings (16 dims) | {emb_s:.1f} | index, lexical only | {lex_s:.1f} | {emb_s / lex_s:.2f} |")
    print()
    print("| measure | p50 | p95 | baseline | p50 | p95 | ratio p50 | ratio p95 |")
    print("|---|---|---|---|---|---|---|---|")
    for line in rows:
        print(line)
    return 0


if __name__ == "__main__":
    os.environ.pop("VAULT_AGENT_DEBUG_CALL_DELAY_MS", None)
    sys.exit(main())
