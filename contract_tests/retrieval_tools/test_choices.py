"""Integration tier: the choices seed 003 leaves open, held to the declaration when one states
them (opening a hidden or ignored file, an unknown argument); undeclared, either side passes."""

from __future__ import annotations

import pytest

from contract_tests.contracts.specs import choice
from contract_tests.retrieval_tools.common import Findings, profiles_mark
from contract_tests.verdicts.checks import called_ok

pytestmark = [profiles_mark, pytest.mark.integration]


@pytest.mark.req("RT-OPEN-001")
@pytest.mark.parametrize("path", [".hidden.md", "guide/draft-1.md"])
def test_opening_a_hidden_or_ignored_file_follows_the_declared_choice(calls, path):
    """Seed-silent; with `choices.open_hidden` declared the server is held to it."""
    declared = choice("open_hidden")
    response, request = calls.raw("open_file", {"repo": "docs", "path": path})
    with Findings() as findings:
        if declared == "allow":
            findings.check(called_ok(response), "declared open_hidden: allow, but the call failed",
                           request=request)
        elif declared == "refuse":
            findings.check(not called_ok(response), "declared open_hidden: refuse, but the file "
                           "was served", request=request)


@pytest.mark.req("RT-ENV-002")
def test_an_unknown_argument_follows_the_declared_choice(calls):
    declared = choice("unknown_arguments")
    response, request = calls.raw("open_file", {"repo": "docs", "path": "README.md", "rc_unknown_option": True})
    with Findings() as findings:
        if declared == "ignore":
            findings.check(called_ok(response), "declared unknown_arguments: ignore, but the call "
                           "failed", request=request)
        elif declared == "refuse":
            findings.check(not called_ok(response), "declared unknown_arguments: refuse, but the "
                           "call succeeded", request=request)
        if not called_ok(response):
            calls.judge_error(response, "an unknown argument", request, req="RT-ENV-002")
