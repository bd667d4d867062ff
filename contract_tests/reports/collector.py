"""Per-requirement verdicts: the terminal summary, results.json and results.md (JUnit XML comes
from pytest, with requirement ids as properties).

A test's findings count only against the requirement ids they name. Verdicts per
requirement: pass, fail, advisory (a failed requirement of the profile's own reading, not
failing the run unless --strict), xfail (expected by the implementer), blocked (no check of it
could run: a precondition it needs did not hold; `blocked_by` names what), partial (some of its
checks ran and held, others were deselected, blocked or stopped at another requirement's
failure), not-run, skip, n/a (a requirement of another transport or phase).

Crashes of the suite's own code are suite errors: reported once each, apart from every
requirement, with their traceback, and the run exits EXIT_SUITE_ERROR.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from contract_tests.implementation.options import get
from contract_tests.implementation.sessions import OWN_SERVER
from contract_tests.reports.console import write_summary
from contract_tests.reports.evidence import cases, evidence
from contract_tests.reports.markdown import render_markdown
from contract_tests.transport.limits import HEALTH
from contract_tests.transport.stdio import protocol_version
from contract_tests.verdicts.findings import (
    EXIT_BLOCKED,
    EXIT_RUN_STOPPED,
    EXIT_SERVER_UNUSABLE,
    EXIT_SUITE_ERROR,
    requirement_status,
)
from contract_tests.verdicts.running import SELECTION, case_matches

if TYPE_CHECKING:
    from contract_tests.implementation.preflight import Preflight
    from contract_tests.implementation.state import SuiteState

SUITE_ERROR = "suite error"


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
        self.suite_errors: list[dict[str, Any]] = []
        self.stopped: list[str] = []  # why the run stopped talking to the server (per process that did)
        self.crashed: list[tuple[str, str]] = []  # (test, xdist's message) for tests whose worker died
        self.final_rows: list[dict[str, Any]] | None = None
        self.blocked_checks: Counter[str] = Counter()
        self.exit_status = 0
        self.server_logs: list[dict[str, Any]] = []
        self.baseline = self._load_baseline(get(config, "--baseline"))

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
        for why in output.get("rc_stopped", []):
            if why not in self.stopped:
                self.stopped.append(why)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        reqs = [value for name, value in report.user_properties if name == "requirement"]
        if not reqs and report.failed and report.when == "???":
            # xdist's report for a test whose worker died under it (killed, out of memory): a
            # suite error, reported once with the test it was running, never a missing verdict.
            # Its requirements are known once a worker has sent the collection (at the end).
            self.crashed.append((report.nodeid, str(report.longrepr)))
            return
        if not reqs:
            return
        entry = self.tests.setdefault(report.nodeid, {
            "nodeid": report.nodeid, "requirements": reqs, "outcome": "passed", "duration_s": 0.0,
            "failing": [], "advisory": [], "expected": [], "blocked": [], "skip": "", "error": "", "call": None,
            "cases_checked": [], "held": [], "checked": []})
        entry["duration_s"] = round(entry["duration_s"] + report.duration, 4)
        entry["checked"] = sorted(set(entry["checked"]) | set(getattr(report, "rc_checked", None) or []))
        findings = getattr(report, "rc_findings", None) or {}
        for kind in ("failing", "advisory", "expected", "blocked"):
            entry[kind] += findings.get(kind, [])
        entry["cases_checked"] += getattr(report, "rc_cases", None) or []
        entry["held"] += getattr(report, "rc_held", None) or []
        suite_error = getattr(report, "rc_suite_error", None)
        if suite_error is not None:
            self._suite_error(report.nodeid, suite_error)
            entry["outcome"] = SUITE_ERROR
            entry["blocked"] += [{"req": req, "message": f"the suite crashed ({suite_error['message'][:200]})",
                                  "kind": "blocked", "by": SUITE_ERROR} for req in reqs]
            return
        if report.when == "call":
            entry["call"] = ("xfail" if hasattr(report, "wasxfail")
                             else "blocked" if report.skipped and findings.get("blocked") else report.outcome)
        if report.failed:
            entry["outcome"] = "failed"
            if not findings:
                entry["error"] = str(report.longrepr)[:EVIDENCE_CHARS]
        elif report.skipped and entry["outcome"] not in ("failed", SUITE_ERROR):
            if hasattr(report, "wasxfail"):
                entry["outcome"] = "xfail"
            elif findings.get("blocked"):
                entry["outcome"] = "blocked"
            else:
                entry["outcome"] = "skipped"
                entry["skip"] = _skip_reason(report)

    def _worker_crashes(self) -> None:
        applicable = self._collection()[0]
        for nodeid, text in self.crashed:
            reqs = list(applicable.get(nodeid, []))
            first = text.strip().splitlines()[0][:300] if text.strip() else "no message"
            self._suite_error(nodeid, {"message": f"a suite worker died while running a test ({first})",
                                       "where": "a pytest-xdist worker", "traceback": text[-2000:]})
            self.tests[nodeid] = {
                "nodeid": nodeid, "requirements": reqs, "outcome": SUITE_ERROR, "duration_s": 0.0, "failing": [],
                "advisory": [], "expected": [], "blocked": [
                    {"req": req, "message": "a suite worker died while running it", "kind": "blocked",
                     "by": SUITE_ERROR} for req in reqs],
                "skip": "", "error": "", "call": None, "cases_checked": [], "held": [], "checked": []}
        self.crashed = []

    def _suite_error(self, nodeid: str, error: dict[str, Any]) -> None:
        """One record per distinct crash (message and place), with every test it hit."""
        key = (error["message"], error["where"])
        for known in self.suite_errors:
            if (known["message"], known["where"]) == key:
                known["count"] += 1
                known["tests"].append(nodeid)
                return
        self.suite_errors.append({**error, "count": 1, "tests": [nodeid]})

    @property
    def protocol_version(self) -> str:
        return protocol_version()

    # -- verdicts --------------------------------------------------------------------
    def _collection(self) -> tuple[dict[str, list[str]], set[str], set[str]]:
        """(applicable test -> ids, selected tests, tests another shard runs)."""
        if self.collection is not None:
            return (self.collection["applicable"], set(self.collection["selected"]),
                    set(self.collection.get("sharded_out", [])))
        return self.state.applicable, self.state.selected & set(self.state.applicable), self.state.sharded_out

    def own_server_deselected(self) -> list[str]:
        """Tests deselected under --server-url because they start servers of their own."""
        if self.collection is not None:
            return list(self.collection.get("own_server", []))
        return list(self.state.own_server_deselected)

    def notes(self) -> list[str]:
        """What the run was told in an older spelling, and what it left out and why."""
        own = self.own_server_deselected()
        return list(self.state.notes) + ([f"{len(own)} tests deselected: each {OWN_SERVER}"] if own else [])

    def rows(self) -> list[dict[str, Any]]:
        applicable, selected, sharded = self._collection()
        per_req: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        self.blocked_checks: Counter[str] = Counter()  # blocker -> blocked checks (one per test and requirement)
        blockers: dict[str, Counter[str]] = defaultdict(Counter)
        for test in self.tests.values():
            named: dict[str, str] = {}
            for kind, verdict in (("blocked", "blocked"), ("expected", "xfail"), ("advisory", "advisory"),
                                  ("failing", "fail")):
                for f in test[kind]:
                    named[f["req"]] = verdict
            test_blockers = sorted({f.get("by") or "a precondition" for f in test["blocked"]})
            for req in test["requirements"]:
                if req in named:
                    continue
                # The test's own checks ran in its call phase: a teardown finding (the canary
                # guard) names another requirement and does not undo them.
                outcome = test["call"] or test["outcome"]
                if outcome == "failed" and req in test.get("held", ()):
                    outcome = "passed"  # checked to the end of its sweep, and held
                named[req] = {"passed": "pass", "skipped": "skip", "xfail": "pass",
                              "blocked": "blocked"}.get(outcome, "incomplete")
            for req, verdict in named.items():
                per_req[req].append((verdict, test))
                if verdict == "blocked":
                    own = sorted({f.get("by") or "a precondition" for f in test["blocked"] if f["req"] == req})
                    blockers[req].update(own or test_blockers)
                    self.blocked_checks.update((own or test_blockers)[:1])
        deselected: Counter[str] = Counter()
        for nodeid, ids in applicable.items():
            if nodeid not in selected and nodeid not in sharded:
                deselected.update(ids)
        rows = []
        for req in self.state.profile.requirements.values():
            runs = per_req.get(req.id, [])
            verdicts = Counter(v for v, _t in runs)
            applies = self.state.profile.applies(req.id, self.state.transport, self.state.phase,
                                                 self.protocol_version)
            status = requirement_status(verdicts, deselected[req.id], applies, self.state.strict)
            rows.append({
                "id": req.id, "spec": req.spec, "basis": req.basis, "strength": req.strength,
                "tiers": list(req.tiers), "behavior": req.behavior, "source": req.source, "status": status,
                "blocked_by": sorted(blockers[req.id]),
                "quote": list(req.quote), "document": req.document if req.basis == "seed" else None,
                "tests_total": len(runs) + deselected[req.id],
                "tests_failing": verdicts["fail"] + verdicts["advisory"],
                "tests_blocked": verdicts["blocked"],
                "tests_deselected": deselected[req.id],
                "evidence": evidence(req.id, runs),
                "cases": cases(req.id, runs),
                # Tests in which a check of it ran (held or not): a pass needs one (tests/test_reference.py).
                "tests_checking": sum(1 for _v, t in runs if req.id in t.get("checked", ())),
                "tests": [{"nodeid": t["nodeid"], "verdict": v, "duration_s": t["duration_s"]} for v, t in runs],
            })
        return rows

    def checks(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """How many checks (a test's verdict on one requirement) ran, and how many were blocked
        and by what."""
        counts: Counter[str] = Counter(test["verdict"] for row in rows for test in row["tests"])
        return {"checked": sum(counts[v] for v in ("pass", "fail", "advisory", "xfail")),
                "blocked": counts["blocked"], "blocked_by": dict(self.blocked_checks.most_common())}

    def blocked_exit(self, rows: list[dict[str, Any]]) -> bool:
        """A run with a blocked check of a seed or MCP requirement (any, under --strict)."""
        return any(row["tests_blocked"] and row["status"] in ("blocked", "partial")
                   and (self.state.strict or row["basis"] != "profile") for row in rows)

    def expectation_problems(self, rows: list[dict[str, Any]]) -> list[str]:
        """Unexpected passes of whole requirements, and case entries no test or sweep met. In
        a shard these wait for merge-reports: the failing case may be in another shard."""
        if not self.state.expectations.source or self.state.shard:
            return []
        status = {r["id"]: r for r in rows}
        failed = [(f["req"], f.get("case")) for t in self.tests.values() for kind in ("expected", "failing")
                  for f in t[kind] if f.get("case")]
        checked = [(r, c) for t in self.tests.values() for r, c in t.get("cases_checked", [])]
        problems = []
        for key in self.state.expectations.requirement_entries():
            row = status[key]
            if row["status"] in ("pass", "partial") and not row["tests_deselected"] and not row["tests_blocked"]:
                problems.append(f"unexpected pass: {key} is listed as an expected failure, but every test passed")
        for req, case in self.state.expectations.case_entries():
            row = status[req]
            if any(r == req and case_matches(case, c) for r, c in failed) or row["tests_deselected"] \
                    or row["status"] in ("not-run", "n/a", "blocked"):
                continue
            if SELECTION.only_cases and case not in SELECTION.only_cases:
                continue
            if any(r == req and case_matches(case, c) for r, c in checked):
                problems.append(f"unexpected pass: {req}[{case}] is listed as an expected failure, but passed "
                                "everywhere it was checked")
            else:
                problems.append(f"stale entry {req}[{case}]: no test or sweep case with that id ran")
        return problems

    # -- output ----------------------------------------------------------------------
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        write_summary(self, terminalreporter)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        for why in HEALTH.reasons():
            if why not in self.stopped:
                self.stopped.append(why)
        self._worker_crashes()
        rows = self.rows()
        self.final_rows = rows
        self.problems = self.expectation_problems(rows)
        code = int(session.exitstatus)
        if code in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            if self.suite_errors:
                code = EXIT_SUITE_ERROR
            elif self.stopped:
                code = EXIT_RUN_STOPPED
            elif code == pytest.ExitCode.OK and self.problems:
                code = pytest.ExitCode.TESTS_FAILED
            elif code == pytest.ExitCode.OK and self.blocked_exit(rows):
                code = EXIT_BLOCKED
            session.exitstatus = code
        self.exit_status = int(code)
        if self.directory is None:
            return
        summary = Counter(r["status"] for r in rows)
        document = self._document(rows, int(code), dict(summary))
        document["checks"] = self.checks(rows)
        document["suite_errors"] = self.suite_errors
        document["run_stopped"] = self.stopped
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
            "protocol_version": self.protocol_version,
            "protocol_versions_refused": preflight.refused if preflight else [],
            "warnings": preflight.warnings if preflight else [],
            "notes": self.notes(),
            "target": self.state.target,
            "commands": dict(self.state.commands),  # the profile's further commands (--rc-command), if it has any
            # a mapped profile's mapping, as the run used it (a file's, or the one --mapping auto proposed)
            "mapping": {"source": self.state.mapping_source, "mapping": self.state.mapping} if self.state.mapping_source
            else None,
            "strict": self.state.strict,
            "shard": self.state.shard,
            "docs_url": get(self.config, "--docs-url"),
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
        rows = [{"id": r.id, "spec": r.spec, "basis": r.basis, "strength": r.strength, "tiers": list(r.tiers),
                 "behavior": r.behavior, "source": r.source, "status": "not-run", "quote": list(r.quote),
                 "document": r.document if r.basis == "seed" else None, "tests_total": 0, "tests_failing": 0,
                 "tests_blocked": 0, "blocked_by": [], "tests_deselected": 0, "evidence": [], "tests": []}
                for r in self.state.profile.requirements.values()]
        self._write(self._document(rows, EXIT_SERVER_UNUSABLE, {"not-run": len(rows)}))

    def _write(self, document: dict[str, Any]) -> None:
        assert self.directory is not None
        (self.directory / "results.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
        (self.directory / "results.md").write_text(render_markdown(document), encoding="utf-8")
        from contract_tests.reports.html import render as render_html
        (self.directory / "results.html").write_text(render_html([document]), encoding="utf-8")

