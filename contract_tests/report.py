"""Per-requirement results: results.json and results.md (JUnit XML comes from pytest)."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

EVIDENCE_CHARS = 600


def _outcome(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return "xfail" if report.skipped else "xpass"
    return report.outcome  # passed / failed / skipped


def _evidence(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr or "")
    if hasattr(report, "wasxfail") and report.skipped:
        text = report.wasxfail
    return text[:EVIDENCE_CHARS]


class ReportCollector:
    """Registered on the controlling process only; xdist forwards workers' reports here."""

    def __init__(self, config: pytest.Config, state: Any, directory: Path) -> None:
        self.config = config
        self.state = state
        self.directory = directory
        self.started = time.time()
        self.tests: dict[str, dict[str, Any]] = {}
        self.server_info: dict[str, Any] | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        entry = self.tests.setdefault(report.nodeid, {
            "nodeid": report.nodeid, "outcome": "passed", "duration_s": 0.0, "evidence": "",
            "requirements": props.get("requirements", []), "leaks": []})
        entry["requirements"] = props.get("requirements", entry["requirements"])
        entry["leaks"] = props.get("leak_requirements", entry["leaks"])
        entry["duration_s"] = round(entry["duration_s"] + report.duration, 4)
        self.server_info = props.get("server_info", self.server_info)
        outcome = _outcome(report)
        if report.when == "call" or outcome in ("failed", "skipped", "xfail"):
            if entry["outcome"] != "failed":
                entry["outcome"] = outcome
            if outcome in ("failed", "xfail", "skipped", "xpass"):
                entry["evidence"] = _evidence(report) if outcome != "xpass" else "unexpected pass"
                if outcome == "xpass":
                    entry["outcome"] = "failed"

    def _rows(self) -> list[dict[str, Any]]:
        per_req: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for test in self.tests.values():
            for req in test["requirements"]:
                per_req[req].append(test)
            for req in test["leaks"]:
                if req not in test["requirements"]:
                    per_req[req].append({**test, "outcome": "failed"})
        rows = []
        for req in self.state.profile.requirements.values():
            tests = per_req.get(req.id, [])
            outcomes = {t["outcome"] for t in tests}
            if not self.state.profile.applies(req.id, self.state.transport, self.state.phase):
                status = "n/a"  # a requirement of another transport or phase
            elif "failed" in outcomes:
                status = "fail"
            elif "xfail" in outcomes:
                status = "xfail"
            elif "passed" in outcomes:
                status = "pass"
            elif "skipped" in outcomes:
                status = "skip"
            else:
                status = "not-run"
            rows.append({
                "id": req.id, "spec": req.spec, "strength": req.strength, "tiers": list(req.tiers),
                "behavior": req.behavior, "source": req.source, "status": status,
                "tests": [{k: t[k] for k in ("nodeid", "outcome", "duration_s", "evidence")} for t in tests],
            })
        return rows

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        rows = self._rows()
        summary: dict[str, int] = defaultdict(int)
        for row in rows:
            summary[row["status"]] += 1
        document = {
            "suite": "retrieval-contract",
            "profile": self.state.profile.id,
            "phase": self.state.phase,
            "transport": self.state.transport,
            "target": self.state.target,
            "server_info": self.server_info,
            "expectations": self.state.expectations.source,
            "started": dt.datetime.fromtimestamp(self.started, dt.timezone.utc).isoformat(),
            "duration_s": round(time.time() - self.started, 2),
            "exit_status": int(exitstatus),
            "summary": dict(summary),
            "requirements": rows,
        }
        (self.directory / "results.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
        (self.directory / "results.md").write_text(render_markdown(document), encoding="utf-8")


def render_markdown(doc: dict[str, Any]) -> str:
    lines = [
        f"# retrieval-contract: {doc['profile']}",
        "",
        f"- target: `{doc['target']}`",
        f"- transport: {doc['transport']}" + (f", phase {doc['phase']}" if doc["phase"] else ""),
        "- summary: " + ", ".join(f"{k} {v}" for k, v in sorted(doc["summary"].items())),
        "",
        "| requirement | strength | tiers | status | tests | evidence |",
        "|---|---|---|---|---|---|",
    ]
    for row in doc["requirements"]:
        evidence = next((t["evidence"] for t in row["tests"] if t["evidence"]), "")
        evidence = evidence.replace("|", "\\|").replace("\n", " ")[:200]
        lines.append(f"| {row['id']} | {row['strength']} | {', '.join(row['tiers'])} | {row['status']} "
                     f"| {len(row['tests'])} | {evidence} |")
    return "\n".join(lines) + "\n"
