"""Integration tier: a required argument left out, or one of the wrong type, on every tool.
Seed 003 requires every error to be structured (FR-007), so the plain-text validation message
an SDK gives by default is a finding of RT-ENV-002. A call the server serves anyway (a limit
given as a string and read as a number, a repo it defaults) is not judged: the seed does not
say such input must be refused."""

from __future__ import annotations

import pytest

from contract_tests.retrieval_tools.common import ENVELOPE, Calls, Findings, profiles_mark
from contract_tests.synthetic.roots import NEEDLE_COMMON
from contract_tests.verdicts.checks import called_ok
from contract_tests.verdicts.findings import esc, one_case

pytestmark = [profiles_mark, pytest.mark.integration]

# tool -> (what is wrong, arguments in the profile's names)
BAD_ARGUMENTS = {
    "search": [
        ("no query", {"repo": "both"}),
        ("query an object", {"query": {"text": NEEDLE_COMMON}, "repo": "both"}),
        ("query a number", {"query": 42, "repo": "both"}),
        ("limit a string", {"query": NEEDLE_COMMON, "repo": "both", "limit": "five"}),
        ("repo a number", {"query": NEEDLE_COMMON, "repo": 7}),
    ],
    "open_file": [
        ("no path", {"repo": "docs"}),
        ("path a number", {"repo": "docs", "path": 42}),
        ("path an object", {"repo": "docs", "path": {"name": "README.md"}}),
        ("no repo", {"path": "README.md"}),
    ],
    "get_snippet": [
        ("no path", {"repo": "docs", "start_line": 1, "end_line": 2}),
        ("no start_line", {"repo": "docs", "path": "lines.md", "end_line": 2}),
        ("path a number", {"repo": "docs", "path": 42, "start_line": 1, "end_line": 2}),
        ("start_line a string", {"repo": "docs", "path": "lines.md", "start_line": "one", "end_line": 2}),
        ("end_line an object", {"repo": "docs", "path": "lines.md", "start_line": 1, "end_line": {"n": 2}}),
    ],
    "list_dir": [
        ("path a number", {"repo": "docs", "path": 42}),
        ("repo an object", {"repo": {"name": "docs"}}),
    ],
}


@pytest.mark.req(ENVELOPE)
@pytest.mark.parametrize("tool", sorted(BAD_ARGUMENTS))
def test_a_missing_or_mistyped_argument_gives_a_structured_error(server, client, names, profile, tool):
    calls = Calls(server, names, profile)
    judged = 0
    with Findings() as findings:
        for what, arguments in BAD_ARGUMENTS[tool]:
            response, request = calls.raw(tool, arguments)
            if called_ok(response):
                continue
            judged += 1
            with one_case(findings, what, request, req=ENVELOPE):
                calls.judge_error(response, f"{tool} with {what}", request, req=ENVELOPE)
        if not judged:
            findings.block(f"{tool} served every call with bad arguments "
                           f"({esc([w for w, _a in BAD_ARGUMENTS[tool]])}): no error to judge", req=ENVELOPE,
                           by="the calls succeeded")
