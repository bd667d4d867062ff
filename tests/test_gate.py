"""The documented CI gate works when copied: the workflow example of docs/usage.md, in a
throwaway repository with a tiny server, run through the same gate script the action runs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _documented_step() -> dict:
    usage = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    block = usage.split("<!-- gate-example:start -->", 1)[1].split("<!-- gate-example:end -->", 1)[0]
    text = re.search(r"```yaml\n(.*?)```", block, re.S).group(1)
    steps = yaml.safe_load("steps:\n" + text)["steps"]
    assert len(text.strip().splitlines()) <= 5, "the example is meant to be five lines"
    return steps[0]


def _action_env(inputs: dict) -> dict[str, str]:
    """The environment action.yml gives the gate step, from the step's `with:` inputs."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update({k: str(v) for k, v in inputs.items()})
    step = next(s for s in action["runs"]["steps"] if "contract_tests.gate" in s.get("run", ""))
    return {key: re.sub(r"\$\{\{ inputs\.([a-z-]+) \}\}", lambda m: values[m.group(1)], template)
            for key, template in step["env"].items()}


def test_the_documented_workflow_gates_a_throwaway_repository(tmp_path):
    step = _documented_step()
    assert step["uses"].startswith("retrieval-contract/retrieval-contract")
    repo = tmp_path / "throwaway"
    (repo / "conformance").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "section-source-local" / "server.py", repo / "server.py")
    (repo / "conformance" / "declaration.yaml").write_text("profile: section-source-local\ntrim_paths: true\n")
    env = {**os.environ, **_action_env(step["with"]), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "contract_tests.gate"], cwd=repo, env=env, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    summary = (tmp_path / "summary.md").read_text()
    assert "section-source-local: passed" in summary and "| SSL-OUT-005 |" in summary
    for name in ("results.json", "results.md", "junit.xml"):
        assert (repo / "rc-reports" / "section-source-local" / name).is_file(), name
