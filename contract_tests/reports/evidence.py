"""What a requirement's row in results.json keeps of the findings against it: every case id it
failed or was blocked on, and its evidence, each finding rendered with its request, capped in
number (EVIDENCE_ITEMS) and length (EVIDENCE_CHARS) so that a report stays small whatever the
server sends."""

from __future__ import annotations

from typing import Any

EVIDENCE_CHARS = 4000
EVIDENCE_ITEMS = 200      # evidence items kept per requirement: reports stay small whatever the server sends


def cases(req: str, runs: list[tuple[str, dict[str, Any]]]) -> dict[str, list[str]]:
    """Every case id `req` failed (or, for an advisory, was reported) on, and every case of it
    that was blocked: all of them, however many (evidence keeps EVIDENCE_ITEMS messages)."""
    out: dict[str, set[str]] = {"failing": set(), "blocked": set()}
    for _verdict, test in runs:
        for kind, into in (("failing", "failing"), ("advisory", "failing"), ("expected", "failing"),
                           ("blocked", "blocked")):
            out[into].update(f["case"] for f in test[kind] if f["req"] == req and f.get("case"))
    return {kind: sorted(found) for kind, found in out.items() if found}


def evidence(req: str, runs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    out: list[str] = []
    for verdict, test in runs:
        if verdict in ("fail", "advisory", "xfail"):
            out += [render(f) for kind in ("failing", "advisory", "expected") for f in test[kind] if f["req"] == req]
        elif verdict == "skip" and test["skip"]:
            out.append(f"skipped: {test['skip']}")
        elif verdict == "blocked":
            own = [render(f) for f in test["blocked"] if f["req"] == req]
            out += own or [f"{test['nodeid']} was not checked: " + "; ".join(render(f) for f in test["blocked"][:3])]
        elif verdict == "incomplete":
            out.append(f"{test['nodeid']} stopped at another requirement's failure before checking this one")
    more = len(out) - EVIDENCE_ITEMS
    out = [e if len(e) <= EVIDENCE_CHARS else e[:EVIDENCE_CHARS] + f"... ({len(e)} chars)"
           for e in out[:EVIDENCE_ITEMS]]
    return out + ([f"... and {more} more findings, not kept (the report keeps {EVIDENCE_ITEMS} per requirement)"]
                  if more > 0 else [])


def render(finding: dict[str, Any]) -> str:
    head = f"[{finding['req']}]" + (f" {finding['case']}:" if finding.get("case") else "")
    text = f"{head} {finding['message']}"
    if finding.get("kind") == "blocked":
        text = f"{head} not checked (blocked{' by ' + finding['by'] if finding.get('by') else ''}): {finding['message']}"
    if finding.get("request"):
        text += f"\n    request: {finding['request']}"
    return text
