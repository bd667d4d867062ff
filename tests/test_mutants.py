"""Every policy the suite guards is proved by a mutant the suite catches, by requirement id.

Each mutant declares, beside its patch (tests/mutants/launch*.py, `@mutant`), its profile and
the ids the suite must report: `fail` for seed and MCP requirements, `advisory` for the
profile's own readings (which fail the run only under --strict). The suite runs only the tests
that cite those ids, and one control test that must pass: the mutant is otherwise a sound
server, so the catch is the defect's, not a server that answers nothing.
"""

from __future__ import annotations

import pytest

from contract_tests.contracts import specs as contracts
from tests.conftest import unchecked_passes
from tests.mutants import command, registry, suite_args

MUTANTS = {name: m for name, m in registry().items() if not m.variant}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_suite_catches_the_mutant_by_requirement_id(suite_run, name):
    m = MUTANTS[name]
    profile = contracts.load_profile(m.profile)
    control = m.control_id(profile.requirements)
    # No preflight: it starts and shakes hands with one more server only to say whether the server
    # is usable (and which version it speaks: the profile's newest, as without it); a catch never
    # rests on it, and the preflight has tests of its own (tests/test_verdicts.py).
    run = suite_run(*suite_args(m), "--server-cmd", command(m), "--req", ",".join((*m.trips, control)),
                    *(() if m.preflight else ("--no-preflight",)))
    assert run.results is not None, f"no report written:\n{run.output[-3000:]}"
    want = {req: "advisory" if profile.requirements[req].advisory else "fail" for req in m.trips}
    status = run.status()
    assert status.get(control) == "pass", f"{name}: the control {control} did not pass ({status.get(control)})\n" \
                                          f"{run.output[-3000:]}"
    assert not unchecked_passes(run.results), f"{name}: pass with no check run: {unchecked_passes(run.results)}"
    missed = [(req, status.get(req)) for req, verdict in want.items() if status.get(req) != verdict]
    assert not missed, f"{name}: not reported as expected (want {want}): {missed}\n{run.output[-3000:]}"
    if "fail" in want.values():
        assert run.code != 0, f"{name}: the suite passed a broken server"
    for req in m.trips:  # the finding names the requirement id
        assert f"[{req}]" in run.output or req in run.output
    # One defect, one finding: a test that fails for one requirement checks every other
    # requirement it cites to the end (or is split), so none of them is left unverified.
    stopped = sorted({(row["id"], t["nodeid"].split("::")[-1]) for row in run.results["requirements"]
                      for t in row["tests"] if t["verdict"] == "incomplete"})
    assert not stopped, f"{name}: tests stopped before checking a requirement they cite: {stopped}"


def test_every_mutant_names_known_requirements_of_its_profile():
    for name, m in registry().items():
        profile = contracts.load_profile(m.profile)
        unknown = [r for r in m.trips if r not in profile.requirements]
        assert not unknown, f"{name}: {unknown} are not requirements of {m.profile}"
        assert m.variant or m.trips, f"{name} names no requirement it must trip"
        if not m.variant:
            assert m.control_id(profile.requirements) not in m.trips
