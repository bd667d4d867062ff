"""results.html: one self-contained file (no external assets, no network) that opens with the
verdict: a summary of counts per run, tier and basis with small bars, the suite's own errors
apart from findings, then failures, advisories, blocked checks and everything else, filterable
by profile, tier, basis and verdict, and the servers' captured output (canary tokens redacted).

Everything a server sent (evidence, stderr, messages) is hostile text: every value goes through
html.escape, and class names come from a fixed table, never from the document."""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import Any, Callable

# Display order, and the colour of each status in text and bars.
STATUSES = ("fail", "advisory", "blocked", "partial", "xfail", "not-run", "skip", "pass", "n/a")
ALWAYS_COUNTED = ("pass", "fail", "advisory", "blocked", "n/a")
_COLOURS = {"fail": "#c62828", "advisory": "#e08600", "blocked": "#7b4fb3", "partial": "#3b82c4",
            "xfail": "#8d8d8d", "not-run": "#b5b5b5", "skip": "#cfcfcf", "pass": "#2e7d32", "n/a": "#e4e4e7"}
_TEXT = {"not-run": "#6b6b6b", "skip": "#6b6b6b", "n/a": "#6b6b6b", "xfail": "#6b6b6b"}
EXIT_MEANINGS = {0: "pass", 1: "failures", 2: "interrupted", 3: "internal error", 4: "usage error",
                 5: "no tests collected", 6: "server not usable", 7: "checks blocked (no failure, but seed/MCP "
                 "requirements could not be checked)", 8: "suite error"}
SHOWN_EVIDENCE = 3

_STYLE = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;padding:1.5rem;max-width:1400px;color:#1d1d1f}
h1{font-size:1.4rem;margin:0 0 .6rem}h2{font-size:1.1rem;margin:1.8rem 0 .5rem}h3{font-size:1rem;margin:1rem 0 .3rem}
table{border-collapse:collapse;width:100%;table-layout:fixed}
th,td{border-bottom:1px solid #e2e2e6;padding:.35rem .5rem;vertical-align:top;text-align:left;overflow-wrap:anywhere}
th{background:#f4f4f6;position:sticky;top:0;z-index:1;overflow-wrap:normal}
code,.id,.ev,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
.id{font-size:13px}td.v{font-weight:600;overflow-wrap:normal}
.ev{font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word;color:#333;margin-top:.3rem;
max-height:10rem;overflow-y:auto;border-left:3px solid #e2e2e6;padding-left:.5rem}
pre{background:#f6f6f8;padding:.5rem;max-height:24rem;overflow-y:auto;font-size:12px;
white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word}
.verdict{font-size:1.15rem;font-weight:600;padding:.7rem 1rem;border-radius:6px;margin:.4rem 0 1rem;color:#fff}
.banner{background:#fdecee;border:1px solid #c62828;border-radius:6px;padding:.8rem;margin:1rem 0}
.suite-error{background:#fff7e0;border:1px solid #d19a00;border-radius:6px;padding:.8rem;margin:1rem 0}
.runline{margin:.6rem 0 .2rem}.runline .exit{color:#555}
.bar{display:flex;height:12px;border-radius:3px;overflow:hidden;background:#f0f0f2;min-width:60px;max-width:640px}
.bar span{display:block;height:100%}
.counts{max-width:1000px;table-layout:auto}
.counts td,.counts th{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap;overflow-wrap:normal}
.counts td:first-child,.counts th:first-child{text-align:left;width:11rem}.counts .chart{width:32%;text-align:left}
.zero{color:#c4c4c8}.blocker{font-size:12px;color:#7b4fb3;margin-top:.2rem}
.filters{margin:1rem 0}.filters label{margin-right:1rem}
.rest-note{color:#555}
"""

_SCRIPT = """
const rows=[...document.querySelectorAll('table.reqs tbody tr')];
function apply(){const f={};document.querySelectorAll('.filters select').forEach(s=>f[s.name]=s.value);
rows.forEach(r=>{let ok=true;for(const k in f){if(f[k]&&!(r.dataset[k]||'').split(' ').includes(f[k]))ok=false}
r.style.display=ok?'':'none'});
document.querySelectorAll('section.group').forEach(s=>{
s.style.display=[...s.querySelectorAll('tbody tr')].some(r=>r.style.display!=='none')?'':'none'})}
document.querySelectorAll('.filters select').forEach(s=>s.addEventListener('change',apply));
"""

_e = html.escape


def _css(status: str) -> str:
    """A class name from the fixed table, never from the document's text."""
    return "s" + str(STATUSES.index(status)) if status in STATUSES else "s-other"


def _status_css() -> str:
    return "".join(f".s{i}{{color:{_TEXT.get(s, _COLOURS[s])}}}.bar .s{i}{{background:{_COLOURS[s]}}}"
                   for i, s in enumerate(STATUSES)) + ".s-other{color:#555}.bar .s-other{background:#999}"


def _run_name(doc: dict[str, Any]) -> str:
    phase = f", phase {doc['phase']}" if doc.get("phase") else ""
    return f"{doc.get('profile', '?')} ({doc.get('transport', '?')}{phase})"


def _columns(counts: Counter) -> list[str]:
    present = [s for s in STATUSES if s in ALWAYS_COUNTED or counts[s]]
    return present + sorted(s for s in counts if s not in STATUSES)


def _bar(counts: Counter, columns: list[str]) -> str:
    total = sum(counts.values()) or 1
    parts = "".join(f'<span class="{_css(s)}" style="width:{100 * counts[s] / total:.2f}%" '
                    f'title="{_e(s)}: {counts[s]}"></span>' for s in columns if counts[s])
    return f'<div class="bar" role="img" aria-label="{_e(_count_text(counts, columns))}">{parts}</div>'


def _count_text(counts: Counter, columns: list[str]) -> str:
    return ", ".join(f"{s} {counts[s]}" for s in columns if counts[s]) or "no requirements"


def _count_table(rows: list[tuple[str, dict[str, Any]]], columns: list[str]) -> str:
    """Counts of all requirements, then per tier, then per basis, each with its bar."""
    groups: list[tuple[str, Callable[[dict[str, Any]], bool]]] = [("all requirements", lambda r: True)]
    tiers = sorted({t for _run, r in rows for t in r.get("tiers", [])})
    bases = sorted({str(r.get("basis", "")) for _run, r in rows})
    groups += [(f"tier {t}", lambda r, t=t: t in r.get("tiers", [])) for t in tiers]
    groups += [(f"basis {b}", lambda r, b=b: str(r.get("basis", "")) == b) for b in bases]
    head = "".join(f'<th class="{_css(s)}">{_e(s)}</th>' for s in columns)
    body = []
    for label, keep in groups:
        counts = Counter(str(r.get("status")) for _run, r in rows if keep(r))
        cells = "".join(f'<td class="{_css(s) if counts[s] else "zero"}">{counts[s]}</td>' for s in columns)
        body.append(f"<tr><td>{_e(label)}</td>{cells}<td>{_bar(counts, columns)}</td></tr>")
    return (f'<table class="counts"><thead><tr><th>group</th>{head}<th class="chart">chart</th></tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def _headline(documents: list[dict[str, Any]], counts: Counter) -> str:
    """One sentence, the first thing on the page: what a reader gating CI needs to know."""
    errors = sum(len(d.get("suite_errors") or []) for d in documents)
    unusable = [d for d in documents if d.get("server_unusable")]
    if counts["fail"]:
        text, colour = f"FAIL: {counts['fail']} requirement{'s' * (counts['fail'] != 1)} failed", "fail"
    elif unusable:
        text, colour = f"NOT CHECKED: the server was not usable in {len(unusable)} run(s)", "fail"
    elif counts["blocked"]:
        text, colour = f"BLOCKED: no failure, but {counts['blocked']} requirement(s) could not be checked", "blocked"
    elif errors:
        text, colour = "INCOMPLETE: the suite itself crashed (see suite errors); no failure found", "blocked"
    elif not (counts["pass"] or counts["partial"] or counts["xfail"]):
        text, colour = "NOTHING CHECKED: no requirement's check ran", "xfail"  # no verdict nothing earned
    else:
        text, colour = "PASS: no requirement failed", "pass"
    if counts["advisory"] and not counts["fail"]:
        text += f" ({counts['advisory']} advisor{'ies' if counts['advisory'] != 1 else 'y'})"
    if errors:
        text += f"; {errors} suite error{'s' * (errors != 1)}"
    return f'<div class="verdict" id="verdict" style="background:{_COLOURS[colour]}">{_e(text)}</div>'


def _banners(doc: dict[str, Any]) -> str:
    run, out = _run_name(doc), []
    unusable = doc.get("server_unusable")
    if unusable:
        out.append(f'<div class="banner"><b>{_e(run)}: the server was not usable; no test ran.</b>'
                   f"<br>{_e(str(unusable.get('problem', '')))}"
                   + (f"<br>command: <code>{_e(str(unusable['command']))}</code>" if unusable.get("command") else "")
                   + f"<pre>{_e(chr(10).join(map(str, unusable.get('stderr_tail') or [])))}</pre></div>")
    stopped = doc.get("stopped")
    if stopped:
        out.append(f'<div class="banner"><b>{_e(run)}: the run was stopped early; later checks did not run.</b>'
                   f"<br>{_e(str(stopped.get('reason', '')))}</div>")
    return "".join(out)


def _suite_errors(documents: list[dict[str, Any]]) -> str:
    items = []
    for doc in documents:
        for err in doc.get("suite_errors") or []:
            tests = [str(t) for t in err.get("tests") or []]
            shown = "".join(f"<li><code>{_e(t)}</code></li>" for t in tests[:10])
            more = f"<li>and {len(tests) - 10} more</li>" if len(tests) > 10 else ""
            items.append(f'<div class="suite-error"><b>{_e(str(err.get("message", "")))}</b>'
                         f" <span class='rest-note'>({_e(_run_name(doc))}; {int(err.get('count') or 1)}x"
                         + (f", at <code>{_e(str(err['where']))}</code>" if err.get("where") else "") + ")</span>"
                         + (f"<ul>{shown}{more}</ul>" if tests else "")
                         + f"<details><summary>traceback</summary><pre>{_e(str(err.get('traceback', '')))}</pre>"
                         "</details></div>")
    if not items:
        return ""
    return ('<section id="suite-errors"><h2>Suite errors: bugs in retrieval-contract, not findings</h2>'
            "<p>The suite's own code crashed. These say nothing against the server; the requirements of "
            "the tests listed may not have been checked. Please report them to the suite's maintainers.</p>"
            + "".join(items) + "</section>")


def _evidence(row: dict[str, Any]) -> str:
    # The same cause seen by several tests or cases is shown once, with its count.
    evidence = [f"{n}x {e}" if n > 1 else e for e, n in Counter(str(e) for e in row.get("evidence") or []).items()]
    out = "".join(f'<div class="ev">{_e(e)}</div>' for e in evidence[:SHOWN_EVIDENCE])
    if len(evidence) > SHOWN_EVIDENCE:
        out += (f"<details><summary>{len(evidence) - SHOWN_EVIDENCE} more</summary>"
                + "".join(f'<div class="ev">{_e(e)}</div>' for e in evidence[SHOWN_EVIDENCE:]) + "</details>")
    return out


def _row(run: str, profile: str, row: dict[str, Any], with_run: bool) -> str:
    status, tiers = str(row.get("status", "")), [str(t) for t in row.get("tiers") or []]
    basis = str(row.get("basis", ""))
    blockers = [str(b) for b in row.get("blocked_by") or []]
    blocked = f'<div class="blocker">blocked by {_e(", ".join(blockers))}</div>' if blockers else ""
    return (f'<tr data-profile="{_e(profile)}" data-tier="{_e(" ".join(tiers))}" data-basis="{_e(basis)}" '
            f'data-verdict="{_e(status)}"><td class="id">{_e(str(row.get("id", "")))}</td>'
            + (f"<td>{_e(run)}</td>" if with_run else "")
            + f'<td>{_e(basis)}</td><td>{_e(", ".join(tiers))}</td><td class="v {_css(status)}">{_e(status)}</td>'
            f'<td>{int(row.get("tests_failing") or 0)}/{int(row.get("tests_total") or 0)}</td>'
            f'<td>{_e(str(row.get("behavior", "")))}{blocked}{_evidence(row)}</td></tr>')


_SECTIONS = (("failures", "Failures", lambda s: s == "fail"),
             ("advisories", "Advisories (basis: profile; they fail the run only under --strict)",
              lambda s: s == "advisory"),
             ("blocked", "Blocked: a precondition did not hold, so the check could not run (neither pass nor fail)",
              lambda s: s == "blocked"),
             ("rest", "Everything else", lambda s: s not in ("fail", "advisory", "blocked")))


def _sections(rows: list[tuple[dict[str, Any], dict[str, Any]]], with_run: bool) -> str:
    rank = {s: i for i, s in enumerate(STATUSES)}
    head = ("<thead><tr><th style='width:8.5rem'>requirement</th>"
            + ("<th style='width:9rem'>run</th>" if with_run else "")
            + "<th style='width:4.5rem'>basis</th><th style='width:7rem'>tiers</th><th style='width:5.8rem'>verdict"
              "</th><th style='width:4.5rem'>failing</th><th>behavior and evidence</th></tr></thead>")
    out = []
    for key, title, keep in _SECTIONS:
        chosen = [(d, r) for d, r in rows if keep(str(r.get("status")))]
        if not chosen:
            continue
        chosen.sort(key=lambda dr: rank.get(str(dr[1].get("status")), len(rank)))  # stable: run order kept
        body = "".join(_row(_run_name(d), str(d.get("profile", "")), r, with_run) for d, r in chosen)
        out.append(f'<section class="group" id="{key}"><h2>{_e(title)} ({len(chosen)})</h2>'
                   f'<table class="reqs">{head}<tbody>{body}</tbody></table></section>')
    return "".join(out)


def _select(name: str, values: list[str]) -> str:
    options = "".join(f"<option>{_e(v)}</option>" for v in sorted(set(values)))
    return f'<label>{name} <select name="{name}"><option value="">all</option>{options}</select></label>'


def _run_line(doc: dict[str, Any], counts: Counter, columns: list[str]) -> str:
    code = doc.get("exit_status")
    meaning = EXIT_MEANINGS.get(code, "unknown") if isinstance(code, int) else "unknown"
    exit_text = "" if code is None else f" exit {_e(str(code))}: {_e(meaning)}"
    strict = ", strict" if doc.get("strict") else ""
    target = f" &middot; target <code>{_e(str(doc['target']))}</code>" if doc.get("target") else ""
    return (f'<div class="runline"><b>{_e(_run_name(doc))}</b>{strict} &middot;<span class="exit">{exit_text}'
            f"</span>{target}<br>{_e(_count_text(counts, columns))}</div>{_bar(counts, columns)}")


def render(documents: list[dict[str, Any]]) -> str:
    rows = [(doc, row) for doc in documents for row in doc.get("requirements") or []]
    counts = Counter(str(r.get("status")) for _d, r in rows)
    columns = _columns(counts)
    summary = ["<section id='summary'><h2>Summary</h2>"]
    for doc in documents:
        run_counts = Counter(str(r.get("status")) for r in doc.get("requirements") or [])
        summary.append(_run_line(doc, run_counts, columns))
        if len(documents) > 1:
            summary.append(f"<details><summary>{_e(_run_name(doc))} by tier and basis</summary>"
                           + _count_table([(doc, r) for r in doc.get("requirements") or []], columns) + "</details>")
    summary.append(f"<h3>{'All runs' if len(documents) > 1 else 'By tier and basis'}</h3>"
                   + _count_table(rows, columns) + "</section>")
    filters = "".join([
        _select("profile", [str(d.get("profile", "")) for d, _r in rows]),
        _select("tier", [str(t) for _d, r in rows for t in r.get("tiers") or []]),
        _select("basis", [str(r.get("basis", "")) for _d, r in rows]),
        _select("verdict", [str(r.get("status", "")) for _d, r in rows])])
    logs = [f"<details><summary>{_e(str(doc.get('profile', '')))}: server {i}: "
            f"<code>{_e(str(log.get('command', ''))[:200])}</code></summary>"
            f"<b>stderr</b><pre>{_e(chr(10).join(map(str, log.get('stderr') or [])))}</pre>"
            f"<b>stdout</b><pre>{_e(chr(10).join(map(str, log.get('stdout') or [])))}</pre></details>"
            for doc in documents for i, log in enumerate(doc.get("server_logs") or [], 1)]
    data = json.dumps([{"profile": d.get("profile"), "transport": d.get("transport"), "phase": d.get("phase"),
                        "exit_status": d.get("exit_status"), "summary": d.get("summary")} for d in documents])
    # JSON in a script element is raw text: escape only what could close the element.
    data = data.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width,initial-scale=1'>"
            f"<title>retrieval-contract report</title><style>{_STYLE}{_status_css()}</style></head><body>"
            f"<h1>retrieval-contract</h1>{_headline(documents, counts)}"
            + "".join(_banners(d) for d in documents) + _suite_errors(documents) + "".join(summary)
            + f"<p class='filters'>{filters}</p>" + _sections(rows, len(documents) > 1)
            + ("<h2>Server output (canary tokens redacted)</h2>" + "".join(logs) if logs else "")
            + f"<script type='application/json' id='summary-data'>{data}</script>"
            f"<script>{_SCRIPT}</script></body></html>")
