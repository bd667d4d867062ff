"""Performance tier: semantic_search and fetch_passage latency on the fixture's collection.
(No network: the shared concern test.)"""

from __future__ import annotations

import time

import pytest

from contract_tests.open_notebook.common import profiles_mark
from contract_tests.verdicts.checks import called_ok
from contract_tests.verdicts.findings import Findings

pytestmark = [profiles_mark, pytest.mark.performance]


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


@pytest.mark.req("ON-PERF-001")
def test_search_and_fetch_answer_within_a_second_at_p95(main, notebooks, profile):
    main.enter("active")
    calls, bound = int(profile.limits["perf_calls"]), float(profile.limits["perf_p95_seconds"])
    queries = [p.exact_text for p in notebooks.collection("active").passages]
    ids = [r.get("reference_id") for r in main.ok("semantic_search",
                                                  {"query": queries[0], "k": 50}).get("results") or []]
    timings: dict[str, list[float]] = {"semantic_search": [], "fetch_passage": []}
    for i in range(calls):
        for tool, args in (("semantic_search", {"query": queries[i % len(queries)]}),
                           ("fetch_passage", {"source_id": ids[i % len(ids)]} if ids else None)):
            if args is None:
                continue
            started = time.perf_counter()
            response, _ = main.raw(tool, args)
            if called_ok(response):
                timings[tool].append(time.perf_counter() - started)
    with Findings() as findings:
        for tool, samples in timings.items():
            if not samples:
                findings.block(f"no {tool} call succeeded to time (see ON-SRCH-012)", by="ON-SRCH-012",
                               case=tool)
            else:
                findings.check(_p95(samples) <= bound, f"p95 {_p95(samples) * 1000:.0f} ms over "
                               f"{len(samples)} calls (bound {bound * 1000:.0f} ms)", case=tool)
