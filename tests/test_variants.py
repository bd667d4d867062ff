"""Correct variants the suite must pass: choices a profile leaves open, taken the other way."""

from __future__ import annotations

import pytest

from tests.conftest import mutant_command


def test_errors_on_the_json_rpc_channel_are_accepted(suite_run):
    """retrieval-tools accepts errors as isError results or as JSON-RPC errors carrying data.error."""
    reqs = "RT-ENV-002,RT-ERR-001,RT-ERR-002,RT-ERR-003,RT-SNIP-003,RT-PATH-001,RT-PATH-003,RT-OPEN-002"
    run = suite_run("--profile", "retrieval-tools", "--server-cmd", mutant_command("rt_variant_jsonrpc_errors"),
                    "--req", reqs, "-n", "2")
    assert run.code == 0, run.output[-3000:]
    assert all(run.status()[r] == "pass" for r in reqs.split(",")), run.status()


@pytest.mark.parametrize("phase", ["1L", "1K"])
def test_a_hosted_server_taking_every_open_choice_the_other_way_passes(suite_run, phase):
    """section-source-hosted: an adjacent tool for every role, denied tools as isError results,
    other upstream error wording, stricter and dot-dropping path rules, `!*'()` encoded, and
    stateless HTTP (hosted_variant_open_choices in tests/mutants/launch_hosted.py)."""
    run = suite_run("--profile", "section-source-hosted", "--phase", phase, "-n", "2",
                    "--server-cmd", mutant_command("hosted_variant_open_choices"))
    assert run.code == 0, run.output[-3000:]
    status = run.status()
    assert not {k: v for k, v in status.items() if v not in ("pass", "skip", "n/a")}, status
    # Stateless serving skips only the session-id checks; resources and prompts are not declared.
    assert {k for k, v in status.items() if v == "skip"} <= {"MCP-HTTP-001", "MCP-HTTP-002", "MCP-CAP-001"}

