"""Per-requirement verdicts: the terminal summary, results.json and results.md (JUnit XML comes
from pytest, with requirement ids as properties).

A test's findings count only against the requirement ids they name. Verdicts per
requirement: pass, fail, advisory (a failed requirement of the profile's own reading, not
failing the run unless --strict), xfail (expected by the implementer), partial (some of its
tests were deselected, or stopped at another requirement's failure), not-run, skip, n/a (a
requirement of another transport or phase).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .plugin import SuiteState
    from .preflight import Preflight

EVIDENCE_CHARS = 600
SHOWN_CAUSES = 8


def _skip_reason(report: pytest.TestReport) -> str:
    """A skip's reason as a sentence, without pytest's (path, line, text) tuple."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        text = str(longrepr[2])
    else:
        text = str(longrepr or "")
    return text.removeprefix("Skipped: ")


class ReportCollector:
    """Registered on the controlling process only; xdist forwards workers' reports here."""

    def __init__(self, config: pytest.Config, state: "SuiteState", directory: Path | None) -> None:
        self.config = config
        self.state = state
        self.directory = directory
        self.started = time.time()
        self.tests: dict[str, dict[str, Any]] = {}
        self.collection: dict[str, Any] | None = None
        self.problems: list[str] = []
        self.server_logs: list[dict[str, Any]] = []
        self.baseline = self._load_baseline(config.getoption("--baseline"))

    @staticmethod
    def _load_baseline(path: str | None) -> dict[str, str] | None:
        if not path:
            return None
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
            return {row["id"]: row["status"] for row in doc["requirements"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise pytest.UsageError(f"--baseline {path}: not a results.json of this suite ({exc})") from None

    def changes(self, rows: list[dict[str, Any]]) -> list[dict[str, str]]:
        """Requirements whose verdict differs from the baseline's (new ones included)."""
        if self.baseline is None:
            return []
        return [{"id": r["id"], "was": self.baseline.get(r["id"], "(new)"), "now": r["status"]}
                for r in rows if self.baseline.get(r["id"], "(new)") != r["status"]]

    # -- collecting ------------------------------------------------------------------
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}) or {}
        if self.collection is None and "rc_collection" in output:
            self.collection = output["rc_collection"]
        self.server_logs += output.get("rc_server_logs", [])

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        reqs = [value for name, value in report.user_properties if name == "requirement"]
        if not reqs:
            return
        entry = self.tests.setdefault(report.nodeid, {
            "nodeid": report.nodeid, "requirements": reqs, "outcome": "passed", "duration_s": 0.0,
            "failing": [], "advisory": [], "expected": [], "blocked": [], "skip": "", "error": "", "call": None})
        entry["duration_s"] = round(entry["duration_s"] + report.duration, 4)
        findings = getattr(report, "rc_findings", None) or {}
        for kind in ("failing", "advisory", "expected", "blocked"):
            entry[kind] += findings.get(kind, [])
        if report.when == "call":
            entry["call"] = "xfail" if hasattr(report, "wasxfail") else report.outcome
        if report.failed:
            entry["outcome"] = "failed"
            if not findings:
                entry["error"] = str(report.longrepr)[:EVIDENCE_CHARS]
        elif report.skipped and entry["outcome"] != "failed":
            if hasattr(report, "wasxfail"):
                entry["outcome"] = "xfail"
            else:
                entry["outcome"] = "skipped"
                entry["skip"] = _skip_reason(report)

    # -- verdicts --------------------------------------------------------------------
    def _collection(self) -> tuple[dict[str, list[str]], set[str], set[str]]:
        """(applicable test -> ids, selected tests, tests another shard runs)."""
        if self.collection is not None:
            return (self.collection["applicable"], set(self.collection["selected"]),
                    set(self.collection.get("sharded_out", [])))
        return self.state.applicable, self.state.selected & set(self.state.applicable), self.state.sharded_out

    def rows(self) -> list[dict[str, Any]]:
        applicable, selected, sharded = self._collection()
        per_req: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        for test in self.tests.values():
            named: dict[str, str] = {}
            for kind, verdict in (("blocked", "incomplete"), ("expected", "xfail"), ("advisory", "advisory"),
                                  ("failing", "fail")):
                for f in test[kind]:
                    named[f["req"]] = verdict
            for req in test["requirements"]:
                if req in named:
                    continue
                # The test's own checks ran in its call phase: a teardown finding (the canary
                # guard) names another requirement and does not undo them.
                outcome = test["call"] or test["outcome"]
                named[req] = {"passed": "pass", "skipped": "skip", "xfail": "pass"}.get(outcome, "incomplete")
            for req, verdict in named.items():
                per_req[req].append((verdict, test))
        deselected: Counter[str] = Counter()
        for nodeid, ids in applicable.items():
            if nodeid not in selected and nodeid not in sharded:
                deselected.update(ids)
        rows = []
        for req in self.state.profile.requirements.values():
            runs = per_req.get(req.id, [])
            verdicts = Counter(v for v, _t in runs)
            applies = self.state.profile.applies(req.id, self.state.transport, self.state.phase)
            status = requirement_status(verdicts, deselected[req.id], applies, self.state.strict)
            rows.append({
                "id": req.id, "spec": req.spec, "basis": req.basis, "strength": req.strength,
                "tiers": list(req.tiers), "behavior": req.behavior, "source": req.source, "status": status,
                "quote": list(req.quote), "document": req.document if req.basis == "seed" else None,
                "tests_total": len(runs) + deselected[req.id],
                "tests_failing": verdicts["fail"] + verdicts["advisory"],
                "tests_deselected": deselected[req.id],
                "evidence": self._evidence(req.id, runs),
                "tests": [{"nodeid": t["nodeid"], "verdict": v, "duration_s": t["duration_s"]} for v, t in runs],
            })
        return rows

    @staticmethod
    def _evidence(req: str, runs: list[tuple[str, dict[str, Any]]]) -> list[str]:
        out: list[str] = []
        for verdict, test in runs:
            if verdict in ("fail", "advisory", "xfail"):
                out += [_render(f) for kind in ("failing", "advisory", "expected") for f in test[kind] if f["req"] == req]
            elif verdict == "skip" and test["skip"]:
                out.append(f"skipped: {test['skip']}")
            elif verdict == "incomplete":
                blocked = [_render(f) for f in test["blocked"] if f["req"] == req]
                out += blocked or [f"{test['nodeid']} stopped at another requirement's failure before checking "
                                   "this one"]
        return [e[:EVIDENCE_CHARS] for e in out]

    def expectation_problems(self, rows: list[dict[str, Any]]) -> list[str]:
        """Unexpected passes of whole requirements, and case entries no test or sweep met. In
        a shard these wait for merge-reports: the failing case may be in another shard."""
        if not self.state.expectations.source or self.state.shard:
            return []
        from .verdicts import SELECTION, case_matches
        status = {r["id"]: r for r in rows}
        seen = [(f["req"], f.get("case")) for t in self.tests.values() for kind in ("expected", "failing")
                for f in t[kind] if f.get("case")]
        problems = []
        for key in self.state.expectations.requirement_entries():
            row = status[key]
            if row["status"] in ("pass", "partial") and not row["tests_deselected"]:
                problems.append(f"unexpected pass: {key} is listed as an expected failure, but every test passed")
        for req, case in self.state.expectations.case_entries():
            row = status[req]
            if any(r == req and case_matches(case, c) for r, c in seen) or row["tests_deselected"] \
                    or row["status"] in ("not-run", "n/a"):
                continue
            if SELECTION.only_cases and case not in SELECTION.only_cases:
                continue
            problems.append(f"stale entry {req}[{case}]: no test or sweep case with that id ran")
        return problems

    # -- output ----------------------------------------------------------------------
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        rows = self.rows()
        write = terminalreporter.write_line
        if self.baseline is not None:
            changed = self.changes(rows)
            terminalreporter.section("retrieval-contract: changes since the baseline", sep="-")
            for change in changed:
                write(f"{change['id']}: {change['was']} -> {change['now']}")
            if not changed:
                write("no requirement changed its verdict")
            rows = [r for r in rows if r["id"] in {c["id"] for c in changed}]
        groups = [("fail", "failed requirements"),
                  ("advisory", "advisories: the profile's own reading (basis: profile); they fail the run only "
                               "under --strict")]
        for status, title in groups:
            chosen = [r for r in rows if r["status"] == status]
            if not chosen:
                continue
            terminalreporter.section(f"retrieval-contract: {title}", sep="-")
            for row in chosen:
                write(f"{row['id']} ({row['basis']}): {row['tests_failing']} of {row['tests_total']} tests failing "
                      f"- {row['behavior']}")
                causes = Counter(row["evidence"])
                for text, count in causes.most_common(SHOWN_CAUSES):
                    first, *rest = text.splitlines() or [""]
                    write(f"    {'%dx ' % count if count > 1 else ''}{first}")
                    for line in rest[:3]:
                        write(f"      {line}")
                if len(causes) > SHOWN_CAUSES:
                    write(f"    ... and {len(causes) - SHOWN_CAUSES} more distinct causes")
        self.problems = self.expectation_problems(rows)
        if self.problems:
            terminalreporter.section("retrieval-contract: expectations file", sep="-")
            for problem in self.problems:
                write(problem)
        counts = Counter(r["status"] for r in rows)
        write("retrieval-contract: requirements " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        rows = self.rows()
        if not self.problems:
            self.problems = self.expectation_problems(rows)
        if self.problems and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.directory is None:
            return
        summary = Counter(r["status"] for r in rows)
        document = self._document(rows, int(session.exitstatus), dict(summary))
        document["expectation_problems"] = self.problems
        document["server_logs"] = self.server_logs or self.state.server_logs
        if self.baseline is not None:
            document["changes_since_baseline"] = self.changes(rows)
        self._write(document)

    def _document(self, rows: list[dict[str, Any]], exit_status: int, summary: dict[str, int]) -> dict[str, Any]:
        preflight = self.state.preflight
        return {
            "suite": "retrieval-contract",
            "profile": self.state.profile.id,
            "phase": self.state.phase,
            "transport": self.state.transport,
            "target": self.state.target,
            "commands": dict(self.state.commands),  # the profile's further commands (--rc-command), if it has any
            "strict": self.state.strict,
            "shard": self.state.shard,
            "docs_url": self.config.getoption("--docs-url"),
            "server_info": preflight.server_info if preflight else None,
            "server_unusable": None if preflight is None or preflight.ok else preflight.as_dict(),
            "expectations": self.state.expectations.source,
            "started": dt.datetime.fromtimestamp(self.started, dt.timezone.utc).isoformat(),
            "duration_s": round(time.time() - self.started, 2),
            "exit_status": exit_status,
            "summary": summary,
            "requirements": rows,
        }

    def write_unusable(self, preflight: "Preflight") -> None:
        """The report of a run that never started: every requirement not-run, and why."""
        if self.directory is None:
            return
        from .verdicts import EXIT_SERVER_UNUSABLE
        rows = [{"id": r.id, "spec": r.spec, "basis": r.basis, "strength": r.strength, "tiers": list(r.tiers),
                 "behavior": r.behavior, "source": r.source, "status": "not-run", "quote": list(r.quote),
                 "document": r.document if r.basis == "seed" else None, "tests_total": 0, "tests_failing": 0,
                 "tests_deselected": 0, "evidence": [], "tests": []}
                for r in self.state.profile.requirements.values()]
        self._write(self._document(rows, EXIT_SERVER_UNUSABLE, {"not-run": len(rows)}))

    def _write(self, document: dict[str, Any]) -> None:
        assert self.directory is not None
        (self.directory / "results.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
        (self.directory / "results.md").write_text(render_markdown(document), encoding="utf-8")
        from .report_html import render as render_html
        (self.directory / "results.html").write_text(render_html([document]), encoding="utf-8")


def requirement_status(verdicts: Counter, deselected: int, applies: bool, strict: bool) -> str:
    """One requirement's verdict from its tests' verdicts (pass, fail, advisory, xfail, skip,
    incomplete) and how many of its tests were deselected. The single place the rule lives:
    a run's report and a merge of shard reports both use it."""
    if not applies:
        return "n/a"
    if verdicts["fail"]:
        return "fail"
    if verdicts["advisory"]:
        return "fail" if strict else "advisory"
    if verdicts["xfail"]:
        return "xfail"
    if deselected or verdicts["incomplete"]:
        return "partial" if verdicts["pass"] else "not-run"
    if verdicts["pass"]:
        return "pass"
    if verdicts["skip"]:
        return "skip"
    return "not-run"


def _render(finding: dict[str, Any]) -> str:
    head = f"[{finding['req']}]" + (f" {finding['case']}:" if finding.get("case") else "")
    text = f"{head} {finding['message']}"
    if finding.get("request"):
        text += f"\n    request: {finding['request']}"
    return text


def _cell(text: str, limit: int = 200) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "..."


def render_markdown(doc: dict[str, Any]) -> str:
    lines = [f"# retrieval-contract: {doc['profile']}", ""]
    unusable = doc.get("server_unusable")
    if unusable:
        lines += ["> **The server never started: no test was run.**", ">",
                  f"> {_cell(unusable.get('problem', ''), 500)}", ">", f"> command: `{unusable.get('command')}`"]
        if unusable.get("exit_status") is not None:
            lines.append(f"> exit status: {unusable['exit_status']}")
        if unusable.get("stderr_tail"):
            lines += [">", "> server stderr (tail):", ">", *[f">     {line}" for line in unusable["stderr_tail"]]]
        lines.append("")
    lines += [
        f"- target: `{doc['target']}`",
        *[f"- command {role}: `{command}`" for role, command in sorted((doc.get("commands") or {}).items())],
        f"- transport: {doc['transport']}" + (f", phase {doc['phase']}" if doc["phase"] else "")
        + (", strict (advisories fail the run)" if doc.get("strict") else ""),
        "- summary: " + ", ".join(f"{k} {v}" for k, v in sorted(doc["summary"].items())),
        "",
    ]
    if "changes_since_baseline" in doc:
        lines += ["## Changes since the baseline", ""]
        lines += [f"- {c['id']}: {c['was']} -> {c['now']}" for c in doc["changes_since_baseline"]] or ["- none"]
        lines.append("")
    sections = [("Failures", lambda r: r["status"] == "fail"),
                ("Advisories (basis: profile; fail only under --strict)", lambda r: r["status"] == "advisory"),
                ("All requirements", lambda r: True)]
    for title, keep in sections:
        chosen = [r for r in doc["requirements"] if keep(r)]
        if not chosen:
            continue
        lines += [f"## {title}", "", "| requirement | basis | tiers | verdict | failing | evidence |",
                  "|---|---|---|---|---|---|"]
        for row in chosen:
            evidence = "<br>".join(_cell(e, 160) for e in row["evidence"][:3])
            docs = doc.get("docs_url")
            link = f"[{row['id']}]({docs.rstrip('/')}/requirements/{row['spec']}.html#{row['id'].lower()})" if docs \
                else row["id"]
            lines.append(f"| {link} | {row['basis']} | {', '.join(row['tiers'])} | {row['status']} "
                         f"| {row['tests_failing']}/{row['tests_total']} | {evidence} |")
        lines.append("")
    return "\n".join(lines)
