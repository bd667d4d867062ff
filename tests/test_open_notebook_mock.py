"""The default suite against a server of fixed mock records (the eleven tools under the seed's
names, ids, queries and the {notebooks} location ignored, as a public Open Notebook MCP server
does): nothing it cannot observe may read pass, and what it could not check names its blocker."""

from __future__ import annotations

import re
from collections import Counter

from contract_tests.contracts import specs as contracts
from tests.conftest import mutant_command

# Requirements a server can meet without entering one of the suite's collections: the tool
# surface, describe_world and list_constraints, list_collections repeating itself, an unknown
# collection's error. The shared sweep's concerns (ISO, OUT, LOG, NET, RO) are blocked when its
# enter_collection fails.
CONTEXT_FREE = {"ON-TOOL-001", "ON-TOOL-002", "ON-TOOL-003", "ON-TOOL-004", "ON-TOOL-005", "ON-TOOL-006",
                "ON-OBS-001", "ON-OBS-002", "ON-WORLD-001",
                "ON-WORLD-002", "ON-WORLD-004", "ON-WORLD-005", "ON-COLL-001", "ON-COLL-004", "ON-COLL-008",
                "ON-DOM-001", "ON-RO-001"}
UNCHECKED = ("blocked", "not-run")


def test_a_mock_data_server_fails_and_reads_pass_on_nothing_it_could_not_observe(suite_run):
    run = suite_run("--profile", "open-notebook", "--server-cmd", mutant_command("on_mock_data"))
    assert run.results is not None, run.output[-3000:]
    rows = {row["id"]: row for row in run.results["requirements"] if row["id"].startswith("ON-")}
    status = {req: row["status"] for req, row in rows.items()}
    counts = Counter("blocked-or-not-run" if s in UNCHECKED else s for s in status.values())
    print(f"mock-data server: {dict(counts)}")  # the numbers the report quotes (pytest -s)
    assert run.code != 0, "the suite passed a server that serves fixed mock records"
    assert status["ON-COLL-001"] == "fail", status["ON-COLL-001"]
    needs_a_collection = set(contracts.load_profile("open-notebook").requirements) - CONTEXT_FREE
    passed = sorted(req for req in needs_a_collection if status.get(req) == "pass")
    assert not passed, f"read pass without entering a collection: {passed}"
    unnamed = [req for req in needs_a_collection if status.get(req) in UNCHECKED
               and not any(re.search(rf"\bON-[A-Z0-9]+-\d+\b(?<!{re.escape(req)})", e) or "blocked by" in e
                           for e in rows[req]["evidence"])]
    assert not unnamed, f"blocked without naming what blocked them: {sorted(unnamed)}"
    assert all(rows[req]["blocked_by"] for req in needs_a_collection if status.get(req) == "blocked")
    assert run.results["checks"]["blocked"] > 0 and run.results["checks"]["blocked_by"]


def test_the_preflight_warns_when_the_fixtures_collections_cannot_be_listed_or_entered(suite_run):
    """Before any verdict, the header and the report name the calls tried and what came back."""
    run = suite_run("--profile", "open-notebook", "--server-cmd", mutant_command("on_mock_data"), "--req", "ON-TOOL-001")
    warnings = run.results["warnings"]
    listed = [w for w in warnings if w.startswith("after start-up, list_collections {}")]
    entered = [w for w in warnings if w.startswith('after start-up, enter_collection {"collection_id": "coastal-survey"}')]
    assert listed and "mock-collection" in listed[0] and "coastal-survey" in listed[0], warnings
    assert entered and "collection_not_found" in entered[0] and "ON-COLL-003" in entered[0], warnings
    assert all("{notebooks}" in w for w in listed + entered)
    assert entered[0] in run.output, run.output[-3000:]  # the warnings section of the console
