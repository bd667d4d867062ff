"""Correct variants the suite must pass: choices a profile leaves open, taken the other way."""

from __future__ import annotations

from tests.conftest import mutant_command


def test_errors_on_the_json_rpc_channel_are_accepted(suite_run):
    """retrieval-tools accepts errors as isError results or as JSON-RPC errors carrying data.error."""
    reqs = "RT-ENV-002,RT-ERR-001,RT-ERR-002,RT-ERR-003,RT-SNIP-003,RT-PATH-001,RT-PATH-003,RT-OPEN-002"
    run = suite_run("--profile", "retrieval-tools", "--server-cmd", mutant_command("rt_variant_jsonrpc_errors"),
                    "--req", reqs, "-n", "2")
    assert run.code == 0, run.output[-3000:]
    assert all(run.status()[r] == "pass" for r in reqs.split(",")), run.status()
