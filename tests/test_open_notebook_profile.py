"""The open-notebook profile's own machinery: the seed's literals the checks compare with are
the seed's words, the readings of the tool metadata the profile accepts, and the load command
an implementation with other storage declares."""

from __future__ import annotations

import shlex
import sys

import pytest

from contract_tests.open_notebook import common
from contract_tests.open_notebook.test_unit import _metadata_readings
from contract_tests.verdicts.findings import EXIT_SERVER_UNUSABLE
from tests.test_basis import _norm, seeds_dir

SEED = "004_b9e8093c834b5b78.txt"
AFFORDANCES = "open-notebook-docs/OPEN_NOTEBOOK_MCP_AFFORDANCES.md"


def test_the_literals_the_checks_compare_with_are_the_seeds_words():
    seeds = seeds_dir()
    if seeds is None:
        pytest.skip("the seed specs are not on this machine (set RC_SEEDS to the folder that holds them)")
    seed = _norm((seeds / SEED).read_text(encoding="utf-8"))
    literals = [common.PASSAGE_DISCLAIMER, common.ARTIFACT_DISCLAIMER, *common.NOTES.values(),
                *common.MUTATION_PROHIBITIONS, *common.REFUSAL_CONDITIONS, *common.STEP_ORDER,
                *common.COLLECTION_SCOPED, *(item for items in common.INTERPRETATION_RULE.values() for item in items)]
    missing = [text for text in literals if _norm(f'"{text}"') not in seed]
    assert not missing, missing


@pytest.mark.parametrize("tool,readings", [
    ({"metadata": {"reversible": True, "authority_level": "none", "mutation": False}}, {"metadata"}),
    ({"_meta": {"reversible": True, "mutation": False}}, {"_meta"}),
    ({"_meta": {"io.example/open-notebook": {"reversible": True}}}, {"_meta"}),
    ({"annotations": {"readOnlyHint": True, "destructiveHint": False}}, {"annotations"}),
    ({"annotations": {"readOnlyHint": True}}, set()),  # destructiveHint defaults to true in MCP
    ({"_meta": {"reversible": True, "mutation": True}}, set()),
    ({"metadata": {"reversible": False}}, set()),
])
def test_the_reversibility_readings_the_profile_accepts(tool, readings):
    assert _metadata_readings(tool) == readings


COPY = ("{python} -c " + shlex.quote("import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2])")
        + " {notebooks} {store}/imported")
SERVE_IMPORTED = "{python} -m reference.open_notebook --notebooks {store}/imported --stream-timeout {stream_timeout_s}"


@pytest.mark.parametrize("given", [("--load-cmd", COPY), ("--rc-command", f"load={COPY}")], ids=["load-cmd", "role"])
def test_a_server_with_its_own_storage_runs_on_what_its_load_command_imported(suite_run, given):
    """The load command (role `load`, or its older option --load-cmd) copies the layout into
    {store}; the server reads only the copy. The tamper checks cannot reach a store the suite
    does not know, and say so."""
    run = suite_run("--profile", "open-notebook", "--server-cmd", SERVE_IMPORTED, *given,
                    "--req", "ON-COLL-001,ON-PASS-001,ON-RO-001,ON-ART-007", "-rs")
    status = run.status()
    assert run.code == 0, run.output[-3000:]
    assert {status[r] for r in ("ON-COLL-001", "ON-PASS-001", "ON-RO-001")} == {"pass"}, status
    assert status["ON-ART-007"] == "skip" and "load command filled" in run.output
    assert not [w for w in run.results["warnings"] if w.startswith("after start-up")], run.results["warnings"]


def test_a_failing_load_command_stops_the_run_with_its_output(suite_run):
    failing = "{python} -c " + shlex.quote("import sys; print('import: no such schema', file=sys.stderr); sys.exit(3)")
    run = suite_run("--profile", "open-notebook", "--server-cmd", SERVE_IMPORTED, "--load-cmd", failing)
    assert run.code == EXIT_SERVER_UNUSABLE, run.output[-2000:]
    assert "load command exited with status 3" in run.output and "import: no such schema" in run.output


def test_the_load_command_given_twice_is_a_usage_error(suite_run):
    run = suite_run("--profile", "open-notebook", "--server-cmd", SERVE_IMPORTED, "--load-cmd", COPY,
                    "--rc-command", f"load={COPY}", "--req", "ON-COLL-001")
    assert run.code == pytest.ExitCode.USAGE_ERROR, run.output[-2000:]
    assert "name the same command" in run.output


def test_a_load_command_for_a_profile_without_one_is_a_usage_error(suite_run):
    run = suite_run("--profile", "retrieval-tools", "--load-cmd", f"{shlex.quote(sys.executable)} -c pass",
                    "--req", "RT-TOOL-001")
    assert run.code == pytest.ExitCode.USAGE_ERROR, run.output[-2000:]
    assert "has no load command" in run.output
