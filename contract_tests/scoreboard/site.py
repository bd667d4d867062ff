"""The board as files: index.html (sortable, filterable, works opened from disk), a page per
server with every finding and its rerun line, scoreboard.json (schemas/scoreboard.schema.json),
scoreboard.md, an SVG badge per server, and each server's mapping and install lock."""

from __future__ import annotations

import json
import re
import shutil
import time
from html import escape
from pathlib import Path
from typing import Any

from contract_tests.contracts import specs as contracts

from .board import entry_dir, overall

COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "advisory": "#ef6c00", "blocked": "#6a1b9a",
           "not run": "#757575", "error": "#424242"}
SYMBOLS = {"pass": "✓", "fail": "✗", "advisory": "!", "blocked": "?", "partial": "?", "not-run": "?", "xfail": "x",
           "skip": "–", "n/a": "·"}


def requirements() -> list[dict[str, Any]]:
    profile = contracts.load_profile("generic-files")
    ordered = sorted(profile.requirements.values(), key=lambda r: not r.id.startswith("GF-"))  # the profile's own first
    return [{"id": r.id, "strength": r.strength, "basis": r.basis, "behavior": r.behavior} for r in ordered]


def _first(record: dict[str, Any]) -> str:
    if record["state"] != "ran":
        return f"{record['state']}: {record.get('reason', '')}"[:300]
    if record.get("server_unusable"):
        return record.get("reason", "not usable")[:300]
    findings = record.get("findings") or []
    if not findings:
        return ""
    first = findings[0]
    evidence = re.sub(r"^\[[A-Z0-9-]+\] ", "", (first.get("evidence") or [""])[0].split("\n")[0])  # its id is said
    return f"{first['requirement']} ({first['status']}): {evidence}"[:300]


def document(records: list[dict[str, Any]], missing: list[str]) -> dict[str, Any]:
    servers = []
    for r in records:
        name = r["name"]
        servers.append({
            "name": name, "package": r["package"], "kind": r["kind"], "version": r.get("version"),
            "beside": r.get("beside", []), "language": r["language"], "runtime": r.get("runtime", ""),
            "isolation": r["isolation"], "isolation_text": r["isolation_text"], "state": r["state"],
            "reason": r.get("reason", ""), "overall": overall(r), "verdicts": r.get("verdicts", {}),
            "first_finding": _first(r),
            "findings": {s: sum(1 for f in r.get("findings", []) if f["status"] == s) for s in ("fail", "advisory")},
            "network": r.get("network", []), "duration_s": r.get("duration_s", 0), "built": r["built"],
            "mapping_kind": r["mapping_kind"], "suite": r["suite"], "note": r.get("note", ""),
            "page": f"servers/{name}.html", "badge": f"badges/{name}.svg",
            "mapping": f"servers/{name}.mapping.yaml" if r.get("mapping_file") else None,
            "lock": f"servers/{name}.{r['lock']}" if r.get("lock") else None,
            "rerun": r.get("rerun"),
        })
    return {"suite": "retrieval-contract", "suite_version": records[0]["suite_version"] if records else None,
            "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "profile": "generic-files",
            "requirements": requirements(), "servers": servers, "missing": missing}


def badge(label: str, value: str, colour: str) -> str:
    """A flat two-part badge; widths from a fixed 7 px per character (no font metrics needed)."""
    left, right = 6 + 7 * len(label) + 6, 6 + 7 * len(value) + 6
    total = left + right
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" '
            f'aria-label="{escape(label)}: {escape(value)}"><title>{escape(label)}: {escape(value)}</title>'
            f'<rect width="{left}" height="20" fill="#555"/><rect x="{left}" width="{right}" height="20" fill="{colour}"/>'
            f'<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
            f'<text x="{left / 2}" y="14">{escape(label)}</text><text x="{left + right / 2}" y="14">{escape(value)}</text>'
            f'</g></svg>\n')


def _badge_value(server: dict[str, Any]) -> str:
    word = server["overall"]
    counts = server["findings"]
    if word == "fail":
        return f"{counts['fail']} failing"
    if word == "advisory":
        return f"pass, {counts['advisory']} advisory"
    return word


STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3;cursor:pointer;position:sticky;top:0}td.v{text-align:center}
.pass{color:#2e7d32}.fail{color:#c62828;font-weight:bold}.advisory{color:#ef6c00}.blocked{color:#6a1b9a}
.skip,.na{color:#999}.first{min-width:18em;max-width:28em;overflow-wrap:anywhere}th.req{font-size:11px}pre{white-space:pre-wrap;overflow-wrap:anywhere;
background:#f7f7f7;padding:.5em;border:1px solid #ddd}code{overflow-wrap:anywhere}"""

SCRIPT = """(function(){
var table=document.getElementById('board'),body=table.tBodies[0],filter=document.getElementById('filter'),
verdict=document.getElementById('verdict'),count=document.getElementById('count');
function apply(){var text=filter.value.toLowerCase(),want=verdict.value,shown=0;
 Array.prototype.forEach.call(body.rows,function(row){var ok=(!text||row.textContent.toLowerCase().indexOf(text)>=0)
 &&(!want||row.getAttribute('data-overall')===want);row.style.display=ok?'':'none';if(ok)shown++;});
 count.textContent=shown+' of '+body.rows.length+' servers';}
filter.addEventListener('input',apply);verdict.addEventListener('change',apply);
function sortBy(th,i,down){Array.prototype.forEach.call(table.tHead.rows[0].cells,function(c){c.removeAttribute('data-sort');});
 th.setAttribute('data-sort',down?'asc':'desc');var rows=Array.prototype.slice.call(body.rows);
 rows.sort(function(a,b){var x=a.cells[i].getAttribute('data-key')||a.cells[i].textContent,
 y=b.cells[i].getAttribute('data-key')||b.cells[i].textContent;return (x<y?-1:x>y?1:0)*(down?1:-1);});
 rows.forEach(function(r){body.appendChild(r);});}
Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){th.addEventListener('click',function(){
 sortBy(th,i,th.getAttribute('data-sort')!=='asc');});});
var query={};location.hash.replace(/^#/,'').split('&').forEach(function(p){var kv=p.split('=');
 if(kv[0])query[decodeURIComponent(kv[0])]=decodeURIComponent(kv.slice(1).join('=')||'');});
if(query.q)filter.value=query.q;if(query.verdict)verdict.value=query.verdict;
if(query.sort)Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
 if(th.textContent===query.sort)sortBy(th,i,query.order!=='desc');});
apply();})();"""

RANK = {"fail": "0", "error": "1", "advisory": "2", "blocked": "3", "not run": "4", "pass": "5"}


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[:size - 1] + "…"


def index_html(doc: dict[str, Any]) -> str:
    reqs = [r["id"] for r in doc["requirements"]]
    head = "".join(f"<th>{h}</th>" for h in ("server", "version", "language", "isolation", "overall", "first finding"))
    head += "".join(f'<th class="req" title="{escape(r["behavior"][:300])}">{escape(r["id"])}</th>' for r in doc["requirements"])
    rows = []
    for s in doc["servers"]:
        cells = [f'<td><a href="{escape(s["page"])}">{escape(s["name"])}</a></td>',
                 f'<td>{escape(s["version"] or "")}</td>', f'<td>{escape(s["language"])}</td>',
                 f'<td title="{escape(s["isolation_text"])}">{escape(s["isolation"])}</td>',
                 f'<td class="{s["overall"].replace(" ", "")}" data-key="{RANK[s["overall"]]}">'
                 f'<img src="{escape(s["badge"])}" alt="{escape(s["overall"])}"></td>',
                 f'<td class="first" title="{escape(s["first_finding"])}">{escape(_cut(s["first_finding"], 140))}</td>']
        for req in reqs:
            v = s["verdicts"].get(req, "")
            cells.append(f'<td class="v {v.replace("/", "").replace("-", "")}" data-key="{escape(v)}" title="{escape(req)}: {escape(v)}">'
                         f'{SYMBOLS.get(v, "")}</td>')
        rows.append(f'<tr data-overall="{escape(s["overall"])}">{"".join(cells)}</tr>')
    options = "".join(f'<option value="{w}">{w}</option>' for w in ("fail", "advisory", "blocked", "pass", "not run", "error"))
    missing = (f"<p class=\"fail\">Missing from this board (no shard built them): {escape(', '.join(doc['missing']))}</p>"
               if doc["missing"] else "")
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>retrieval-contract scoreboard</title>
<style>{STYLE}</style></head><body><h1>File servers judged by retrieval-contract</h1>
<p>{len(doc['servers'])} servers, profile generic-files with the MCP base requirements, suite {escape(str(doc['suite']))}
{escape(str(doc['suite_version']))}, built {escape(doc['generated'])}. ✓ pass, ✗ fail, ! advisory, ? blocked,
– skip, · n/a. Click a column to sort; a link may carry <code>#q=TEXT&amp;verdict=fail&amp;sort=COLUMN&amp;order=desc</code>. <a href="scoreboard.json">scoreboard.json</a> ·
<a href="scoreboard.md">scoreboard.md</a></p>{missing}
<p><input id="filter" type="search" placeholder="filter: name, language, requirement..." size="40">
<select id="verdict"><option value="">every verdict</option>{options}</select> <span id="count"></span></p>
<table id="board"><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>
<script>{SCRIPT}</script></body></html>
"""


def server_html(server: dict[str, Any], record: dict[str, Any], doc: dict[str, Any]) -> str:
    parts = [f"<h1>{escape(server['name'])} <img src=\"../{escape(server['badge'])}\" alt=\"{escape(server['overall'])}\"></h1>",
             "<table>",
             *(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in (
                 ("package", f"<code>{escape(server['package'])}</code>"
                  + (f" beside <code>{escape(' '.join(server['beside']))}</code>" if server["beside"] else "")),
                 ("language / runtime", escape(f"{server['language']} / {server['runtime']}")),
                 ("isolation", escape(server["isolation_text"])),
                 ("state", escape(server["state"] + (f": {server['reason']}" if server["reason"] else ""))),
                 ("mapping", (f'<a href="{escape(Path(server["mapping"]).name)}">{escape(server["mapping_kind"])}</a>'
                              if server["mapping"] else escape(server["mapping_kind"]))),
                 ("install lock", f'<a href="{escape(Path(server["lock"]).name)}">{escape(Path(server["lock"]).name)}</a>'
                  if server["lock"] else "none (a local command)"),
                 ("suite", escape(server["suite"])), ("built", escape(f"{server['built']}, {server['duration_s']} s")),
                 ("note", escape(server["note"])))),
             "</table>"]
    if server["rerun"]:
        parts.append(f"<p>rerun the whole run: <code>{escape(server['rerun'])}</code> (with this page's mapping file)</p>")
    if server["network"]:
        parts.append("<h2>Network</h2><p>The server tried to reach the network (recorded, not judged):</p><pre>"
                     + escape("\n".join(server["network"])) + "</pre>")
    findings = record.get("findings") or []
    parts.append(f"<h2>Findings ({len(findings)})</h2>")
    if not findings:
        parts.append("<p>None." + ("" if server["state"] == "ran" else " The server was not judged.") + "</p>")
    for f in findings:
        parts.append(f"<h3 class=\"{f['status']}\">{escape(f['requirement'])}: {escape(f['status'])}</h3>"
                     f"<p>{escape(f['behavior'])}</p>")
        for line in f.get("rerun", []):
            parts.append(f"<p>rerun: <code>{escape(line)}</code></p>")
        more = f["evidence_total"] - len(f["evidence"])
        parts.extend(f"<pre>{escape(e)}</pre>" for e in f["evidence"])
        if more > 0:
            parts.append(f"<p>... and {more} more in the run's report.</p>")
    verdicts = "".join(f"<tr><td>{escape(r['id'])}</td><td class=\"{escape(server['verdicts'].get(r['id'], '').replace('/', ''))}\">"
                       f"{escape(server['verdicts'].get(r['id'], ''))}</td><td>{escape(r['behavior'][:200])}</td></tr>"
                       for r in doc["requirements"])
    parts.append(f"<h2>Every requirement</h2><table>{verdicts}</table>")
    return (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(server['name'])}: "
            f"retrieval-contract</title><style>{STYLE}</style></head><body><p><a href=\"../index.html\">all servers</a></p>"
            + "".join(parts) + "</body></html>\n")


def markdown(doc: dict[str, Any]) -> str:
    lines = ["# File servers judged by retrieval-contract", "",
             f"Suite {doc['suite_version']}, built {doc['generated']}; profile generic-files with the MCP base requirements.",
             "", "| server | version | language | isolation | verdict | fail | advisory | first finding |",
             "|---|---|---|---|---|---|---|---|"]
    for s in doc["servers"]:
        first = s["first_finding"].replace("|", "\\|").replace("\n", " ")[:160]
        lines.append(f"| [{s['name']}]({s['page']}) | {s['version'] or ''} | {s['language']} | {s['isolation']} | "
                     f"{s['overall']} | {s['findings']['fail']} | {s['findings']['advisory']} | {first} |")
    if doc["missing"]:
        lines += ["", f"Missing (no shard built them): {', '.join(doc['missing'])}"]
    return "\n".join(lines) + "\n"


def write(out: Path, records: list[dict[str, Any]], missing: list[str]) -> dict[str, Any]:
    doc = document(records, missing)
    (out / "servers").mkdir(parents=True, exist_ok=True)
    (out / "badges").mkdir(parents=True, exist_ok=True)
    for server, record in zip(doc["servers"], records):
        folder = entry_dir(out, server["name"])
        if server["mapping"]:
            shutil.copyfile(folder / record["mapping_file"], out / server["mapping"])
        if server["lock"]:
            shutil.copyfile(folder / record["lock"], out / server["lock"])
        (out / server["page"]).write_text(server_html(server, record, doc), encoding="utf-8")
        (out / server["badge"]).write_text(badge("retrieval-contract", _badge_value(server),
                                                 COLOURS[server["overall"]]), encoding="utf-8")
    problems = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                for e in contracts.validator("scoreboard.schema.json").iter_errors(doc)]
    if problems:  # the suite's own defect: the board would publish what its schema does not allow
        raise AssertionError("scoreboard.json does not match schemas/scoreboard.schema.json: " + "; ".join(problems[:5]))
    (out / "scoreboard.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    (out / "scoreboard.md").write_text(markdown(doc), encoding="utf-8")
    (out / "index.html").write_text(index_html(doc), encoding="utf-8")
    return doc
