"""retrieval-tools under --strict: an advisory that fails never leaves another requirement
unchecked. Against a server that breaks one advisory, every other requirement the same tests
cite is still checked to its own verdict (issue 26: RT-VIS-003/004 read not-run under --strict
when RT-VIS-005 failed in their test)."""

from __future__ import annotations

import pytest

from tests.mutants import command, registry, suite_args

# mutant -> (the advisory it breaks, requirements whose tests see the defect and must still pass)
CASES = {
    "rt_nested_gitignore_ignored": ("RT-VIS-005", ("RT-VIS-003", "RT-VIS-004", "RT-LIST-002", "RT-VIS-002")),
    "rt_phantom_last_line": ("RT-OPEN-003", ("RT-OPEN-001", "RT-SNIP-002")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_failing_advisory_leaves_the_other_requirements_checked_under_strict(suite_run, name):
    advisory, held = CASES[name]
    m = registry()[name]
    run = suite_run(*suite_args(m), "--server-cmd", command(m), "--strict", "--no-preflight",
                    "--req", ",".join((advisory, *held)))
    assert run.results is not None, run.output[-3000:]
    status = run.status()
    assert status.get(advisory) == "fail", f"{advisory}: {status.get(advisory)}\n{run.output[-3000:]}"
    assert {req: status.get(req) for req in held} == {req: "pass" for req in held}, run.output[-3000:]
    stopped = sorted({(row["id"], t["nodeid"].split("::")[-1]) for row in run.results["requirements"]
                      for t in row["tests"] if t["verdict"] == "incomplete"})
    assert not stopped, f"tests stopped before checking a requirement they cite: {stopped}"
