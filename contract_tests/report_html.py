"""results.html: one self-contained file (no external assets) with every requirement's verdict,
filters by profile, tier, basis and verdict, and the servers' captured output per run, every
canary token redacted."""

from __future__ import annotations

import html
import json
from typing import Any

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem;color:#1d1d1f}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.35rem .5rem;
vertical-align:top;text-align:left}th{background:#f4f4f6;position:sticky;top:0}
td.id{white-space:nowrap;font-family:ui-monospace,monospace}.v{font-weight:600;white-space:nowrap}
.fail{color:#b00020}.advisory{color:#a15c00}.pass{color:#0a7a32}.xfail,.partial,.not-run,.skip,.n\\/a{color:#555}
.banner{background:#fde7e9;border:1px solid #b00020;padding:.8rem;margin:1rem 0}
.filters label{margin-right:1rem}pre{background:#f6f6f8;padding:.5rem;overflow:auto;max-height:24rem;font-size:12px}
.ev{font-size:12px;white-space:pre-wrap;font-family:ui-monospace,monospace}
"""

_SCRIPT = """
const rows=[...document.querySelectorAll('tbody tr')];
function apply(){const f={};document.querySelectorAll('.filters select').forEach(s=>f[s.name]=s.value);
rows.forEach(r=>{let ok=true;for(const k in f){if(f[k]&&!(r.dataset[k]||'').split(' ').includes(f[k]))ok=false}
r.style.display=ok?'':'none'})}
document.querySelectorAll('.filters select').forEach(s=>s.addEventListener('change',apply));
"""


def _select(name: str, values: list[str]) -> str:
    options = "".join(f"<option>{html.escape(v)}</option>" for v in sorted(set(values)))
    return f'<label>{name} <select name="{name}"><option value="">all</option>{options}</select></label>'


def render(documents: list[dict[str, Any]]) -> str:
    rows, profiles, tiers, bases, verdicts = [], [], [], [], []
    banners = []
    for doc in documents:
        run = doc["profile"] + (f" ({doc['transport']}" + (f", phase {doc['phase']}" if doc.get("phase") else "") + ")")
        if doc.get("server_unusable"):
            unusable = doc["server_unusable"]
            banners.append(f'<div class="banner"><b>{html.escape(run)}: the server never started; no test ran.</b>'
                           f"<br>{html.escape(unusable.get('problem', ''))}<pre>"
                           + html.escape("\n".join(unusable.get("stderr_tail", []))) + "</pre></div>")
        for row in doc["requirements"]:
            profiles.append(doc["profile"])
            tiers += row["tiers"]
            bases.append(row["basis"])
            verdicts.append(row["status"])
            evidence = "\n".join(row.get("evidence", [])[:3])
            rows.append(
                f'<tr data-profile="{html.escape(doc["profile"])}" data-tier="{" ".join(row["tiers"])}" '
                f'data-basis="{row["basis"]}" data-verdict="{row["status"]}">'
                f'<td class="id">{html.escape(row["id"])}</td><td>{html.escape(run)}</td><td>{row["basis"]}</td>'
                f'<td>{", ".join(row["tiers"])}</td><td class="v {row["status"]}">{row["status"]}</td>'
                f'<td>{row.get("tests_failing", 0)}/{row.get("tests_total", 0)}</td>'
                f'<td>{html.escape(row["behavior"])}<div class="ev">{html.escape(evidence)}</div></td></tr>')
    logs = []
    for doc in documents:
        for i, log in enumerate(doc.get("server_logs", []), 1):
            logs.append(f"<details><summary>{html.escape(doc['profile'])}: server {i}: "
                        f"<code>{html.escape(log['command'][:200])}</code></summary>"
                        f"<b>stderr</b><pre>{html.escape(chr(10).join(log['stderr']))}</pre>"
                        f"<b>stdout</b><pre>{html.escape(chr(10).join(log['stdout']))}</pre></details>")
    filters = "".join([_select("profile", profiles), _select("tier", tiers), _select("basis", bases),
                       _select("verdict", verdicts)])
    summary = json.dumps([{"profile": d["profile"], "transport": d["transport"], "phase": d.get("phase"),
                           "summary": d["summary"]} for d in documents])
    return ("<!doctype html><html><head><meta charset='utf-8'><title>retrieval-contract report</title>"
            f"<style>{_STYLE}</style></head><body><h1>retrieval-contract</h1>{''.join(banners)}"
            f"<p class='filters'>{filters}</p><table><thead><tr><th>requirement</th><th>run</th><th>basis</th>"
            "<th>tiers</th><th>verdict</th><th>failing</th><th>behavior and evidence</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table><h2>Server output (canary tokens redacted)</h2>" + "".join(logs)
            + f"<script type='application/json' id='summary'>{html.escape(summary)}</script>"
            f"<script>{_SCRIPT}</script></body></html>")
