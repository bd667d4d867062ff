"""The run's summary on the terminal (the report collector's pytest_terminal_summary)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from contract_tests.implementation.sessions import OWN_SERVER
from contract_tests.verdicts.findings import EXIT_MEANINGS

SHOWN_CAUSES = 8
CONSOLE_EVIDENCE_CHARS = 300


def write_summary(collector: Any, terminalreporter: Any) -> None:
    """The run's summary on the console: failed, advisory and blocked requirements with their
    distinct causes, suite errors, why the run stopped, floods, warnings, then the counts and
    what the exit status means."""
    rows = collector.final_rows if collector.final_rows is not None else collector.rows()
    write = terminalreporter.write_line
    all_rows = rows
    if collector.baseline is not None:
        changed = collector.changes(rows)
        terminalreporter.section("retrieval-contract: changes since the baseline", sep="-")
        for change in changed:
            write(f"{change['id']}: {change['was']} -> {change['now']}")
        if not changed:
            write("no requirement changed its verdict")
        rows = [r for r in rows if r["id"] in {c["id"] for c in changed}]
    groups = [("fail", "failed requirements"),
              ("advisory", "advisories: the profile's own reading (basis: profile); they fail the run only "
                           "under --strict"),
              ("blocked", "blocked requirements: not checked, a precondition they need did not hold")]
    for status, title in groups:
        chosen = [r for r in rows if r["status"] == status or status == "blocked" and r["tests_blocked"]
                  and r["status"] == "partial"]
        if not chosen:
            continue
        terminalreporter.section(f"retrieval-contract: {title}", sep="-")
        for row in chosen:
            if status == "blocked":
                write(f"{row['id']} ({row['basis']}): {row['tests_blocked']} of {row['tests_total']} tests blocked "
                      f"by {', '.join(row['blocked_by'])} - {row['behavior']}")
            else:
                write(f"{row['id']} ({row['basis']}): {row['tests_failing']} of {row['tests_total']} tests "
                      f"failing - {row['behavior']}")
            _write_causes(write, row["evidence"])
    if collector.suite_errors:
        terminalreporter.section("retrieval-contract: suite errors (bugs in retrieval-contract, not findings "
                                 "against the server; please report them)", sep="-")
        for error in collector.suite_errors:
            write(f"{error['message']}")
            write(f"    at {error['where']}, in {error['count']} test{'s' if error['count'] > 1 else ''}: "
                  f"{', '.join(error['tests'][:3])}{' ...' if error['count'] > 3 else ''}")
    if collector.stopped:
        terminalreporter.section("retrieval-contract: the run stopped talking to the server", sep="-")
        for why in collector.stopped:
            write(why)
        write("the checks that needed it were blocked (listed above); raise --request-timeout or --run-budget if the "
              "server is only slow")
    floods = [log for log in (collector.server_logs or collector.state.server_logs) if log.get("flood")]
    if floods:
        terminalreporter.section("retrieval-contract: floods (what servers sent beyond what the suite keeps)",
                                 sep="-")
        for log in floods[:10]:
            write(f"{log['flood']}: {log['command'][:200]}")
        if len(floods) > 10:
            write(f"... and {len(floods) - 10} more servers (results.json, server_logs)")
    preflight = collector.state.preflight
    if preflight is not None and preflight.warnings:
        terminalreporter.section("retrieval-contract: warnings", sep="-")
        for warning in preflight.warnings:
            write(warning)
    if collector.problems:
        terminalreporter.section("retrieval-contract: expectations file", sep="-")
        for problem in collector.problems:
            write(problem)
    own = collector.own_server_deselected()
    if own:  # the deprecation notes were shown in the header
        write(f"retrieval-contract: NOTE: {len(own)} tests deselected: each {OWN_SERVER}")
    counts = Counter(r["status"] for r in rows)
    checks = collector.checks(all_rows)
    by = ", ".join(f"{k} {v}" for k, v in checks["blocked_by"].items())
    write("retrieval-contract: requirements " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
          + f"; checks: {checks['checked']} checked, {checks['blocked']} blocked" + (f" (by {by})" if by else ""))
    meaning = EXIT_MEANINGS.get(collector.exit_status)
    if meaning and collector.exit_status:
        write(f"retrieval-contract: exit status {collector.exit_status}: {meaning}")


def _write_causes(write: Any, evidence: list[str]) -> None:
    """The distinct causes, most frequent first, each line cut for the console."""
    causes = Counter(evidence)
    for text, count in causes.most_common(SHOWN_CAUSES):
        first, *rest = text.splitlines() or [""]
        write(f"    {'%dx ' % count if count > 1 else ''}{_console(first)}")
        for line in rest[:3]:
            write(f"      {_console(line)}")
    if len(causes) > SHOWN_CAUSES:
        write(f"    ... and {len(causes) - SHOWN_CAUSES} more distinct causes")


def _console(line: str) -> str:
    return line if len(line) <= CONSOLE_EVIDENCE_CHARS else line[:CONSOLE_EVIDENCE_CHARS] + f"... ({len(line)} chars)"
