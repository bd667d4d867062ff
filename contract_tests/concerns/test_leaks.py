"""Leaks, for every profile: every sweep call on every fixture item and a set of failing calls,
then the server's output scanned channel by channel (results, errors, logs) for the fixture's
canary tokens, one test per requirement the profile's `canaries` map names. (The canary guard
also scans after every other test.)"""

from __future__ import annotations

from contract_tests.synthetic import canaries
from contract_tests.verdicts.findings import Findings, blocked, describe_call


def _reqs(profile, channels):
    return sorted({req for ch in channels for req in profile.leak_requirements(ch).values()})


def cases_test_no_canary_comes_back_in_results_or_errors(profile):
    return [(req, req, req) for req in _reqs(profile, ("results", "errors"))]


def test_no_canary_comes_back_in_results_or_errors(case, profile, contract_fixture, swept):
    req = case
    _require(req, swept)
    with Findings() as findings:
        for out, _err, sent in swept:
            for found_req, leak in canaries.scan_output(out, contract_fixture.canaries, profile.output_canaries,
                                                        sent, profile.echo_allowed):
                request = _request(sent, leak.request_id)
                if found_req != req or (leak.cls == "outside" and request in swept.attacks):
                    continue  # outside content in a path attack's answer: the path sweep's finding
                findings.fail(f"the server's answers leaked: {leak}", req=req, request=request)


def cases_test_no_canary_reaches_the_logs(profile):
    return [(req, req, req) for req in _reqs(profile, ("stderr",))]


def test_no_canary_reaches_the_logs(case, profile, contract_fixture, swept):
    req = case
    _require(req, swept)
    rules = {cls: r for cls, r in profile.leak_requirements("stderr").items() if r == req}
    with Findings() as findings:
        for _out, err, _sent in swept:
            for leak in canaries.scan_lines(err, contract_fixture.canaries, "stderr", rules):
                findings.fail(f"a log line leaked: {leak}", req=req)


def _request(sent, request_id) -> str | None:
    params = sent.get(request_id) if request_id is not None else None
    if isinstance(params, dict) and isinstance(params.get("name"), str) and "arguments" in params:
        return describe_call(params["name"], params["arguments"])
    return None


def _require(req: str, swept) -> None:
    """Nothing leaked proves nothing when the sweep never reached the fixture's data."""
    if swept.blocker:
        raise blocked(swept.blocker[1], req=req, by=swept.blocker[0])
