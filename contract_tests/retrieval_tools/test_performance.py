"""Performance tier: SC-003 (1,000,000 lines, search p95 under 2 s) and no network use."""

from __future__ import annotations

import statistics
import time

import pytest

from contract_tests.retrieval_tools.common import Calls, profiles_mark
from contract_tests.synthetic.roots import build_corpus
from contract_tests.verdicts.checks import called_ok, check, short
from contract_tests.verdicts.findings import describe_call

pytestmark = [profiles_mark, pytest.mark.performance]


QUERIES = ([("rareterm", 200)] * 5 + [("commonterm", 200)] * 5 + [("nomatchterm-zz", 200)] * 5
           + [("alpha beta", 50)] * 3 + [("kappa", 1000)] * 3 + [("commonterm", 10000)] * 2)


@pytest.mark.req("RT-PERF-001")
def test_search_p95_on_a_million_lines_stays_under_two_seconds(own_servers, profile, names, tmp_path_factory):
    limits = profile.limits
    corpus = build_corpus(tmp_path_factory.mktemp("perf"), limits["perf_lines"])
    srv = own_servers.start(corpus)
    calls = Calls(srv, names, profile)
    try:
        srv.initialize()
        calls.ok("search", {"query": "rareterm", "repo": "both"})
        assert len(QUERIES) >= limits["perf_queries"]
        times = []
        for query, limit in QUERIES:
            args = names.args("search", {"query": query, "repo": "both", "limit": limit})
            start = time.perf_counter()
            response = srv.call_tool("search", args, timeout=60)
            times.append(time.perf_counter() - start)
            check(called_ok(response), f"a search failed: {short(response, 200)}",
                  request=describe_call("search", args))
    finally:
        srv.close(timeout=5)
    p95 = statistics.quantiles(times, n=20)[18]
    check(p95 < limits["perf_p95_seconds"],
          f"search p95 {p95:.2f} s over {len(times)} queries on {limits['perf_lines']:,} lines "
          f"(p50 {statistics.median(times):.2f} s); budget {limits['perf_p95_seconds']} s")
