"""Integration tier: a call with a required argument missing, or of the wrong type (a number for
an identifier, an object for a query), fails with the taxonomy's envelope, never with a plain
text validation message (which an SDK gives unless the server catches it)."""

from __future__ import annotations

from typing import Any

import pytest

from contract_tests.open_notebook.common import profiles_mark
from contract_tests.synthetic.notebooks import ROLES
from contract_tests.verdicts.checks import structured_error
from contract_tests.verdicts.findings import Findings, one_case

pytestmark = [profiles_mark, pytest.mark.integration]
# A well-typed value of each required argument (the ids need not exist: the failure is wanted).
VALID = {"collection_id": ROLES["active"], "query": "kelp", "source_id": "rc-no-such-source",
         "artifact_id": "rc-no-such-artifact", "stream_token": "rc-no-such-token", "id": "rc-no-such-source",
         "id_type": "source"}
WRONG = {"query": {"text": "kelp"}}  # every other required argument is a string: a number is wrong


def _cases(profile) -> list[tuple[str, str, dict[str, Any]]]:
    """(tool, case, arguments): each required argument missing, then of the wrong type."""
    out = []
    for spec in profile.concerns["surface"]["inputs"]:
        required = list(spec.get("requires") or {})
        for name in required:
            valid = {n: VALID[n] for n in required}
            out.append((spec["tool"], f"{name}-missing", {n: v for n, v in valid.items() if n != name}))
            out.append((spec["tool"], f"{name}-mistyped", valid | {name: WRONG.get(name, 42)}))
    return out


@pytest.mark.req("ON-ERR-002")
def test_a_missing_or_mistyped_argument_fails_with_the_taxonomys_envelope(main, profile):
    main.enter("active")  # inside a collection: no_collection_context cannot come first
    with Findings() as findings:
        for tool, case, args in _cases(profile):
            response, request = main.raw(tool, args)
            with one_case(findings, f"{tool}:{case}", request):
                structured_error(response, main.profile, f"{tool} with {case.replace('-', ' ')}",
                                 request=request)
            if tool == "enter_collection":
                main.enter("active")  # whatever a failed enter did to the context
