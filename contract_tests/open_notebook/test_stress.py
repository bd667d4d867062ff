"""Stress tier: the same search, many times in one session and once in another, gives the
same results."""

from __future__ import annotations

import json

import pytest

from contract_tests.concerns.common import strip_volatile
from contract_tests.open_notebook.common import profiles_mark
from contract_tests.verdicts import Findings, blocked, describe_call

pytestmark = [profiles_mark, pytest.mark.stress]
VOLATILE = ["metadata.search_time_ms"]


@pytest.mark.req("ON-SRCH-001")
def test_the_same_search_gives_the_same_results(main, new_session, notebooks, profile):
    args = {"query": notebooks.collection("active").passage("probe").exact_text, "k": 10}
    request = describe_call("semantic_search", args)

    def run(session) -> str:
        return json.dumps(strip_volatile(session.ok("semantic_search", args), VOLATILE), sort_keys=True)

    main.enter("active")
    first = run(main)
    if not json.loads(first).get("results"):  # the same nothing twice proves no determinism
        raise blocked("the probe passage's text found nothing (see ON-SRCH-011)", by="ON-SRCH-011",
                      request=request)
    times = int(profile.limits["repeat_searches"])
    differing = sum(run(main) != first for _ in range(times - 1))
    other = new_session()
    other.enter("active")
    with Findings() as findings:
        findings.check(not differing, f"{differing} of {times - 1} repeats differ from the first",
                       case="one-session", request=request)
        findings.check(run(other) == first, "another session on the same collection got other results",
                       case="another-session", request=request)
