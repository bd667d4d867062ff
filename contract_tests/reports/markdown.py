"""results.md: a run's (or a merge's) results document as Markdown."""

from __future__ import annotations

from typing import Any

from contract_tests.verdicts.findings import EXIT_MEANINGS


def _cell(text: str, limit: int = 200) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "..."


EVIDENCE_SHOWN = 3  # findings quoted per requirement in a table cell (results.json keeps them all)


def case_groups(cases: list[str]) -> str:
    """Every case id, grouped by the attack or item it names (the part before `:` or `@`), each
    group with its count and its variants: `sibling-prefix-dotdot x2 (relative@read, absolute@read)`."""
    groups: dict[str, list[str]] = {}
    for case in cases:
        cut = min([i for i in (case.find(":"), case.find("@")) if i > 0], default=len(case))
        groups.setdefault(case[:cut], []).append(case[cut + 1:])
    parts = []
    for stem, rests in groups.items():
        rests = [r for r in rests if r]
        parts.append(f"{stem} x{len(rests)} ({', '.join(rests)})" if len(rests) > 1
                     else f"{stem}{':' + rests[0] if rests else ''}")
    return "; ".join(parts)


def _cases_cell(row: dict[str, Any]) -> str:
    cases = row.get("cases") or {}
    out = []
    if cases.get("failing"):
        out.append(f"{len(cases['failing'])} cases: {case_groups(cases['failing'])}")
    if cases.get("blocked"):
        out.append(f"{len(cases['blocked'])} blocked: {case_groups(cases['blocked'])}")
    return "<br>".join(_cell(text, 1_000_000) for text in out)


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
        *([f"- checks: {doc['checks']['checked']} checked, {doc['checks']['blocked']} blocked"
           + (" (by " + ", ".join(f"{k} {v}" for k, v in doc["checks"]["blocked_by"].items()) + ")"
              if doc["checks"].get("blocked_by") else "")] if doc.get("checks") else []),
        f"- exit status: {doc.get('exit_status')}" + (f" ({EXIT_MEANINGS[doc['exit_status']]})"
                                                      if doc.get("exit_status") in EXIT_MEANINGS else ""),
        "",
    ]
    if doc.get("suite_errors"):
        lines += ["## Suite errors", "",
                  "Crashes of the suite's own code: bugs in retrieval-contract, not findings against the server. "
                  "The requirements those tests cite read `blocked` (by suite error).", ""]
        for error in doc["suite_errors"]:
            lines += [f"- `{_cell(error['message'], 300)}` at `{error['where']}`, in {error['count']} tests "
                      f"(first: `{error['tests'][0]}`)"]
        lines.append("")
    if "changes_since_baseline" in doc:
        lines += ["## Changes since the baseline", ""]
        lines += [f"- {c['id']}: {c['was']} -> {c['now']}" for c in doc["changes_since_baseline"]] or ["- none"]
        lines.append("")
    sections = [("Failures", lambda r: r["status"] == "fail"),
                ("Advisories (basis: profile; fail only under --strict)", lambda r: r["status"] == "advisory"),
                ("Blocked (not checked: a precondition did not hold)",
                 lambda r: r["status"] == "blocked" or r["status"] == "partial" and r.get("tests_blocked")),
                ("All requirements", lambda r: True)]
    for title, keep in sections:
        chosen = [r for r in doc["requirements"] if keep(r)]
        if not chosen:
            continue
        lines += [f"## {title}", "", "| requirement | basis | tiers | verdict | failing | cases | evidence |",
                  "|---|---|---|---|---|---|---|"]
        for row in chosen:
            shown = row["evidence"][:EVIDENCE_SHOWN]
            more = len(row["evidence"]) - len(shown)
            evidence = "<br>".join([_cell(e, 300) for e in shown] + ([f"... {more} more in results.json"] if more > 0
                                                                       else []))
            docs = doc.get("docs_url")
            link = f"[{row['id']}]({docs.rstrip('/')}/requirements/{row['spec']}.html#{row['id'].lower()})" if docs \
                else row["id"]
            status = row["status"] + (f" (by {', '.join(row['blocked_by'])})" if row.get("blocked_by") else "")
            lines.append(f"| {link} | {row['basis']} | {', '.join(row['tiers'])} | {status} "
                         f"| {row['tests_failing']}/{row['tests_total']} | {_cases_cell(row)} | {evidence} |")
        lines.append("")
    return "\n".join(lines)
