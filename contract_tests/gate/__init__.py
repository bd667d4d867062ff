"""The CI gate: what the GitHub Action (action.yml) runs, and what a local CI script can run the
same way. Settings come from environment variables (the action maps its inputs onto them):

  RC_PROFILES      space-separated profile ids, or `all` (the bundled references' matrix)
  RC_SERVER_CMD    the command that starts your server (placeholders as for the suite)
  RC_SERVER_URL    or the URL of a running server
  RC_TRANSPORT     stdio or http        RC_PHASE        a phase, for profiles that have them
  RC_TIERS         a -m expression, e.g. "security or integration"
  RC_EXPECTATIONS  an expectations file RC_DECLARATION  a declaration file (vault-agent: its `commands`)
  RC_STRICT        "true": advisories fail the run too
  RC_REPORT_DIR    where reports go (default rc-reports)   RC_WORKERS   -n value (default 2)
  GITHUB_STEP_SUMMARY   when set, the Markdown report is appended to it

Each profile gets `RC_REPORT_DIR/<profile>/` (results.json, results.md, junit.xml); the run's
summary is `RC_REPORT_DIR/summary.md`. The exit status is the worst of the runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def command(profile: str, report: Path) -> list[str]:
    args = [sys.executable, "-m", "contract_tests.cli", "--profile", profile, "--report", str(report),
            "-n", os.environ.get("RC_WORKERS", "2") or "2"]
    for env, option in (("RC_SERVER_CMD", "--server-cmd"), ("RC_SERVER_URL", "--server-url"),
                        ("RC_TRANSPORT", "--transport"), ("RC_PHASE", "--phase"), ("RC_TIERS", "-m"),
                        ("RC_EXPECTATIONS", "--expectations"), ("RC_DECLARATION", "--declare")):
        value = os.environ.get(env, "").strip()
        if value:
            args += [option, value]
    if _flag("RC_STRICT"):
        args.append("--strict")
    return args


def main() -> int:
    profiles = os.environ.get("RC_PROFILES", "").split()
    if not profiles:
        print("rc-gate: set RC_PROFILES (the action's `profiles` input)", file=sys.stderr)
        return 4
    out = Path(os.environ.get("RC_REPORT_DIR", "rc-reports") or "rc-reports")
    out.mkdir(parents=True, exist_ok=True)
    codes: list[tuple[str, int]] = []
    if profiles == ["all"]:
        args = [sys.executable, "-m", "contract_tests.cli", "all", "--report", str(out),
                "-n", os.environ.get("RC_WORKERS", "2") or "2"] + (["--strict"] if _flag("RC_STRICT") else [])
        codes.append(("all", subprocess.call(args)))
        reports = sorted(out.glob("*/results.md"))
    else:
        reports = []
        for profile in profiles:
            print(f"rc-gate: {profile}", flush=True)
            codes.append((profile, subprocess.call(command(profile, out / profile))))
            reports.append(out / profile / "results.md")
    lines = ["# retrieval-contract", ""]
    lines += [f"- {name}: {'passed' if code == 0 else f'failed (exit {code})'}" for name, code in codes] + [""]
    for report in reports:
        if report.is_file():
            lines += [report.read_text(encoding="utf-8").replace("\n# ", "\n## ", 1), ""]
    summary = "\n".join(lines)
    (out / "summary.md").write_text(summary, encoding="utf-8")
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as handle:
            handle.write(summary + "\n")
    return max(code for _name, code in codes)

