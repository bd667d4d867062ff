"""`retrieval-contract merge-reports OUT shard1/results.json shard2/results.json ...`: join the
reports of the shards of one run (same profile, transport and phase) into the report a single
run gives, with the same per-requirement verdicts (verdicts.requirement_status decides both)."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from contract_tests.contracts import specs as contracts
from contract_tests.reports.markdown import render_markdown
from contract_tests.verdicts.findings import requirement_status


def merge(documents: list[dict[str, Any]]) -> dict[str, Any]:
    first = documents[0]
    for doc in documents[1:]:
        for key in ("profile", "transport", "phase", "target", "commands", "protocol_version"):
            if doc.get(key) != first.get(key):
                raise ValueError(f"the reports are of different runs: {key} {doc.get(key)!r} vs {first.get(key)!r}")
    shards = sorted(doc.get("shard") or "" for doc in documents)
    counts = {s.partition("/")[2] for s in shards}
    if "" in shards or len(counts) != 1 or len(set(shards)) != len(shards) or len(shards) != int(counts.pop()):
        raise ValueError(f"expected every shard i/n of one run exactly once, got {shards}")
    profile = contracts.load_profile(first["profile"])
    strict = bool(first.get("strict"))
    rows = []
    for req_id, req in profile.requirements.items():
        parts = [next(r for r in doc["requirements"] if r["id"] == req_id) for doc in documents]
        tests = [t for part in parts for t in part["tests"]]
        verdicts = Counter(t["verdict"] for t in tests)
        deselected = sum(part["tests_deselected"] for part in parts)
        applies = profile.applies(req_id, first["transport"], first["phase"], first.get("protocol_version"))
        row = dict(parts[0])
        row.update(status=requirement_status(verdicts, deselected, applies, strict), tests=tests,
                   tests_total=len(tests) + deselected, tests_deselected=deselected,
                   tests_failing=verdicts["fail"] + verdicts["advisory"], tests_blocked=verdicts["blocked"],
                   blocked_by=sorted({b for part in parts for b in part.get("blocked_by", [])}),
                   evidence=[e for part in parts for e in part["evidence"]])
        rows.append(row)
    merged = dict(first)
    merged.update(shard=None, shards=shards, requirements=rows, summary=dict(Counter(r["status"] for r in rows)),
                  duration_s=round(max(d.get("duration_s", 0) for d in documents), 2),
                  exit_status=exit_status([d.get("exit_status", 0) for d in documents]),
                  suite_errors=[e for d in documents for e in d.get("suite_errors", [])],
                  run_stopped=[s for d in documents for s in d.get("run_stopped", [])],
                  checks=_checks([d.get("checks") or {} for d in documents]),
                  server_unusable=next((d["server_unusable"] for d in documents if d.get("server_unusable")), None))
    return merged


def _checks(parts: list[dict[str, Any]]) -> dict[str, Any]:
    by: Counter[str] = Counter()
    for part in parts:
        by.update(part.get("blocked_by") or {})
    return {"checked": sum(p.get("checked", 0) for p in parts), "blocked": sum(p.get("blocked", 0) for p in parts),
            "blocked_by": dict(by.most_common())}


def exit_status(codes: list[int]) -> int:
    """The merged run's status: the shards' by the suite's precedence (a suite error, then a
    stopped run, then a failure, then blocked checks; other statuses by their own value)."""
    from contract_tests.verdicts.findings import EXIT_BLOCKED, EXIT_RUN_STOPPED, EXIT_SUITE_ERROR
    order = {0: 0, EXIT_BLOCKED: 1, 1: 2, EXIT_RUN_STOPPED: 3, EXIT_SUITE_ERROR: 4}
    return max(codes, key=lambda c: (c not in order, order.get(c, c)))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="retrieval-contract merge-reports", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="directory for the merged results.json and results.md")
    parser.add_argument("reports", nargs="+", help="the shards' results.json files (or their directories)")
    args = parser.parse_args(argv)
    paths = [Path(p) / "results.json" if Path(p).is_dir() else Path(p) for p in args.reports]
    try:
        merged = merge([json.loads(p.read_text(encoding="utf-8")) for p in paths])
    except (OSError, ValueError, KeyError) as exc:
        print(f"retrieval-contract merge-reports: {exc}")
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(merged, indent=2), encoding="utf-8")
    (out / "results.md").write_text(render_markdown(merged), encoding="utf-8")
    from contract_tests.reports.html import render as render_html
    (out / "results.html").write_text(render_html([merged]), encoding="utf-8")
    failing = merged["summary"].get("fail", 0)
    print(f"retrieval-contract merge-reports: {len(paths)} shards, {failing} failing requirements -> {out}")
    return merged["exit_status"] if merged["exit_status"] else (1 if failing else 0)
