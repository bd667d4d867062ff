"""results.html opens with the verdict, orders failures first, escapes what the server sent, and
keeps long evidence inside the page: checked by parsing, and in a real headless browser."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from contract_tests.reports.html import render

HOSTILE = "</pre></div><script>document.title='pwned'</script><img src=x onerror=alert(1)>"
LONG = "x" * 5000  # one 5,000-character line without a space


def _row(req: str, status: str, basis: str = "seed", tiers=("unit",), evidence=(), **extra) -> dict:
    return {"id": req, "spec": "demo", "basis": basis, "strength": "MUST", "tiers": list(tiers),
            "behavior": f"behaviour of {req}", "source": "demo.md", "status": status, "quote": [],
            "document": None, "tests_total": 2, "tests_failing": 1 if status in ("fail", "advisory") else 0,
            "tests_deselected": 0, "evidence": list(evidence), "tests": [], **extra}


def documents() -> list[dict]:
    """Two runs: today's format (no blocked status, no suite_errors) and the new one."""
    old = {"profile": "demo-old", "transport": "stdio", "phase": None, "exit_status": 0, "summary": {"pass": 2},
           "requirements": [_row("OLD-001", "pass"), _row("OLD-002", "n/a", tiers=("integration",))]}
    new = {"profile": "demo", "transport": "http", "phase": "before", "exit_status": 1, "target": "demo-server",
           "stopped": {"reason": "interrupted after the first failure (-x)"},
           "suite_errors": [{"message": "KeyError: 'hits'", "where": "contract_tests/demo.py:12",
                             "traceback": "Traceback (most recent call last):\n  " + HOSTILE, "count": 2,
                             "tests": ["tests/demo.py::test_a", "tests/demo.py::test_b"]}],
           "server_logs": [{"command": "demo-server --flag", "stderr": [HOSTILE], "stdout": []}],
           "requirements": [
               _row("DEMO-PASS-001", "pass"),
               _row("DEMO-FAIL-001", "fail", evidence=[HOSTILE, LONG, "third", "fourth"]),
               _row("DEMO-ADV-001", "advisory", basis="profile", tiers=("security",), evidence=["soft"]),
               _row("DEMO-BLK-001", "blocked", blocked_by=["ON-COLL-001"], evidence=["no collection"]),
               _row("DEMO-SKIP-001", "skip"),
               _row("DEMO-FAIL-002", "fail", tiers=("e2e", "security")),
           ]}
    return [old, new]


class _Dom(HTMLParser):
    """Section ids, row verdicts and script bodies in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("section", "div") and a.get("id"):
            self.order.append("#" + a["id"])
        if tag == "tr" and "data-verdict" in a:
            self.order.append(a["data-verdict"])
        if tag == "img":
            self.order.append("<img>")
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def _dom(page: str) -> _Dom:
    dom = _Dom()
    dom.feed(page)
    return dom


def test_the_page_opens_with_the_verdict_then_suite_errors_summary_failures_advisories_blocked_and_the_rest():
    order = _dom(render(documents())).order
    assert order.index("#verdict") < order.index("#suite-errors") < order.index("#summary") < order.index("#failures")
    assert order.index("#failures") < order.index("#advisories") < order.index("#blocked") < order.index("#rest")
    verdicts = [o for o in order if not o.startswith("#")]
    assert verdicts == ["fail", "fail", "advisory", "blocked", "skip", "pass", "pass", "n/a"]


def test_the_summary_counts_every_status_per_run_tier_and_basis():
    page = render(documents())
    assert "FAIL: 2 requirements failed" in page and "1 suite error" in page
    assert "fail 2, advisory 1, blocked 1, skip 1, pass 1" in page  # the new run's line
    assert "exit 1: failures" in page and "exit 0: pass" in page
    overall = page.split("All runs")[1]
    columns = re.findall(r'<th class="s\d+">([^<]+)</th>', overall.split("</thead>")[0])
    for label, expected in (("all requirements", {"pass": 2, "fail": 2, "advisory": 1, "blocked": 1, "n/a": 1}),
                            ("tier security", {"pass": 0, "fail": 1, "advisory": 1, "blocked": 0, "n/a": 0}),
                            ("basis profile", {"pass": 0, "fail": 0, "advisory": 1, "blocked": 0, "n/a": 0})):
        row = re.search(rf"<td>{label}</td>(.*?)</tr>", overall).group(1)
        counts = dict(zip(columns, (int(n) for n in re.findall(r">(\d+)</td>", row))))
        assert {k: counts[k] for k in expected} == expected, (label, counts)


def test_blockers_stopped_runs_and_suite_errors_are_shown_apart_from_findings():
    page = render(documents())
    assert "blocked by ON-COLL-001" in page
    assert "the run was stopped early" in page and "interrupted after the first failure (-x)" in page
    errors = page.split('id="suite-errors"')[1].split("</section>")[0]
    assert "bugs in retrieval-contract, not findings" in errors and "tests/demo.py::test_b" in errors
    assert "<details><summary>traceback</summary>" in errors


def test_everything_the_server_sent_is_escaped_and_inert():
    page = render(documents())
    dom = _dom(page)
    assert "<img>" not in dom.order  # no tag came out of the evidence, the traceback or stderr
    assert all("pwned" not in s for s in dom.scripts)
    assert "&lt;/pre&gt;&lt;/div&gt;&lt;script&gt;" in page
    json.loads(dom.scripts[0])  # the embedded summary stays valid JSON


def test_a_current_document_without_the_new_keys_renders():
    page = render(documents()[:1])
    assert "PASS: no requirement failed" in page and "suite-errors" not in page and "blocked by" not in page


def test_a_run_where_nothing_was_checked_does_not_read_pass():
    page = render([{"profile": "demo", "transport": "stdio", "requirements": [_row("DEMO-001", "not-run")]}])
    assert "NOTHING CHECKED" in page and "PASS" not in page


def _chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


# Appended by the test only: records script errors, the layout width, and what the filters do.
PROBE = """<script>
const errs=[];addEventListener('error',e=>errs.push(String(e.message)));
addEventListener('load',()=>{const root=document.documentElement,sel=document.querySelector('select[name=verdict]');
const probe={scrollWidth:root.scrollWidth,clientWidth:root.clientWidth,title:document.title,
unwrapped:[...document.querySelectorAll('.ev,pre')].filter(e=>e.scrollWidth>e.clientWidth+1).length};
sel.value='fail';sel.dispatchEvent(new Event('change'));
probe.shownWhenFail=[...document.querySelectorAll('table.reqs tbody tr')].filter(r=>r.offsetParent).map(r=>r.dataset.verdict);
probe.errors=errs;root.setAttribute('data-probe',JSON.stringify(probe))});
</script>"""


@pytest.mark.skipif(_chromium() is None, reason="no chromium binary on PATH (CI installs it: apt-get install chromium)")
def test_in_a_real_browser_the_verdict_leads_failures_precede_passes_and_evidence_wraps(tmp_path):
    # The error listener must exist before the report's own script runs.
    page = render(documents()).replace("<body>", "<body>" + PROBE, 1)
    path = tmp_path / "results.html"
    path.write_text(page, encoding="utf-8")
    proc = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,800",
                           "--virtual-time-budget=5000", "--dump-dom", path.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    probe = json.loads(_dom_attribute(dom, "data-probe"))
    assert probe["errors"] == [], probe["errors"]
    assert probe["title"] == "retrieval-contract report", "a script from the evidence ran"
    assert probe["scrollWidth"] <= probe["clientWidth"] <= 1200, probe  # the page never widens
    assert probe["unwrapped"] == 0, probe  # the 5,000-character line wraps instead of scrolling sideways
    assert probe["shownWhenFail"] == ["fail", "fail"]
    assert dom.index('id="verdict"') < dom.index('id="summary"') < dom.index('class="reqs"')
    assert dom.index('data-verdict="fail"') < dom.index('data-verdict="pass"')


def _dom_attribute(dom: str, name: str) -> str:
    class Find(HTMLParser):
        value = ""

        def handle_starttag(self, tag, attrs):
            self.value = self.value or dict(attrs).get(name) or ""
    finder = Find()
    finder.feed(dom)
    assert finder.value, f"{name} missing: the probe script did not run"
    return finder.value
