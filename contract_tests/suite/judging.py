"""How a suite test's outcome becomes verdicts (a pytest plugin the suite's plugin loads): the
findings a test raised, a server that cut it short (blocked), a crash in the suite's own code
(a suite error, never evidence against the server), and the canary guard that scans what
every server wrote after each test."""

from __future__ import annotations

from typing import Any

import pytest

from contract_tests.contracts import specs as contracts
from contract_tests.implementation.sessions import ServerFactory
from contract_tests.implementation.state import BLAMED, STATE, SuiteState
from contract_tests.suite.items import case_of, is_suite_item, item_requirements
from contract_tests.synthetic import canaries
from contract_tests.transport import limits
from contract_tests.transport.stdio import BadAnswer, MessageTooLarge, NoResponse, ServerGone, ServerStopped
from contract_tests.verdicts import findings as verdicts
from contract_tests.verdicts import running
from contract_tests.verdicts.findings import Finding, RequirementFailure, classify, esc
from contract_tests.verdicts.running import SELECTION


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    running.start_test(item_requirements(item) if is_suite_item(item) else ())
    state = item.config.stash.get(STATE, None)
    stopped = limits.HEALTH.check() if state is not None and is_suite_item(item) else None
    if stopped and item.nodeid in state.applicable:
        # Whatever the test would start or send (a server of its own, a raw HTTP request, a
        # command), the run has stopped talking to the server: blocked, with the reason.
        raise ServerStopped(stopped)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report: pytest.TestReport = yield
    config = item.config
    state = config.stash.get(STATE, None)
    if state is None or not is_suite_item(item) or item.nodeid not in state.applicable:
        return report
    ids = state.applicable[item.nodeid]
    case = case_of(item)
    report.rc_checked = sorted(running.checked_requirements())  # the checks that ran, whatever the outcome
    if report.failed:
        exc = call.excinfo.value if call.excinfo is not None else None
        if isinstance(exc, RequirementFailure):
            findings = exc.findings
        elif isinstance(exc, (ServerStopped, ServerGone, MessageTooLarge, NoResponse, BadAnswer)) \
                and _cut_short(exc, state, report.when):
            findings = [*getattr(exc, "rc_findings", []), *_cut_short(exc, state, report.when)(ids)]
        elif verdicts.server_side(exc):
            text = esc(verdicts.exception_text(exc) if exc is not None else str(report.longrepr), 600)
            findings = [*getattr(exc, "rc_findings", []),
                        *[Finding(req, f"the test could not finish ({report.when}): {text}", None, None, "error")
                          for req in ids]]
        else:
            _suite_error(report, item, call)
            return report
        if case is not None and any(case == r or case.startswith(r + "-") for r in ids):
            case = None  # a concern test's parameter is its requirement, not a case
        findings = [Finding(f.req, f.message, f.case or case, f.request, f.kind, f.by) for f in findings]
        if report.when == "call":
            item.stash[BLAMED] = {f.request for f in findings if f.request and f.kind == "fail"}
            if getattr(exc, "complete", False):
                # A sweep that ran to its end: a cited requirement it checked and found nothing
                # against held, though another requirement failed in the same test.
                report.rc_held = sorted((running.checked_requirements() & set(ids)) - {f.req for f in findings})
        _apply_verdict(report, state, item, findings)
    if report.when == "call":
        report.rc_cases = _expected_cases_checked(ids, case)
    return report


SIZE_REQUIREMENT = "MCP-SIZE-001"


def _cut_short(exc: BaseException, state: SuiteState, when: str = "call"):
    """For a test the server cut short, a function from the test's ids to its findings: the run
    stopped talking to the server (blocked, by the reason), the server had exited before the test
    began (blocked), a request got no answer (the finding of the requirement that request tests,
    where the server had answered the requests before it; see verdicts.unanswered; the rest
    blocked by it), it answered a POST with a body that is not JSON-RPC (MCP-RPC-003's finding;
    the rest blocked by it), or with a message over the size limit (MCP-SIZE-001's finding; the
    rest blocked by it). None otherwise."""
    if isinstance(exc, ServerStopped):
        return lambda ids: [Finding(req, str(exc), None, None, "blocked", "the run stopped") for req in ids]
    if isinstance(exc, ServerGone) and exc.earlier:
        return lambda ids: [Finding(req, str(exc), None, None, "blocked", "the server exited") for req in ids]
    if isinstance(exc, NoResponse):
        def unanswered(ids: list[str]) -> list[Finding]:
            # The request's requirement: the one its test named around it (verdicts.asking), else
            # the test's only one. In a fixture (setup), the request tested nothing of this test.
            req = getattr(exc, "rc_req", None) or (ids[0] if len(ids) == 1 else None)
            found = verdicts.unanswered(exc, req, getattr(exc, "rc_case", None)) if when == "call" else None
            by = found.req if found else "no answer in time"
            return ([found] if found else []) + [Finding(r, str(exc), None, None, "blocked", by)
                                                 for r in ids if not found or r != found.req]
        return unanswered
    if isinstance(exc, BadAnswer):
        rpc = "MCP-RPC-003" if "MCP-RPC-003" in state.profile.requirements else None
        return lambda ids: ([Finding(rpc, str(exc))] if rpc else []) + [
            Finding(req, str(exc), None, None, "blocked", rpc or "an answer that is not JSON-RPC")
            for req in ids if req != rpc]
    if isinstance(exc, MessageTooLarge):
        limit = state.profile.message_limit
        evidence = f"{exc} (its start: {esc(exc.record.prefix.decode('utf-8', 'replace'), 200)})"
        if limit and exc.record.size > limit["bytes"]:
            size = limit["requirement"]  # over a size the profile's documents set: their finding
            evidence = f"{evidence}; over {limit['bytes']:,} bytes: {limit.get('note', 'the limit the documents set')}"
        else:
            size = SIZE_REQUIREMENT if SIZE_REQUIREMENT in state.profile.requirements else None
        return lambda ids: ([Finding(size, evidence)] if size else []) + [
            Finding(req, str(exc), None, None, "blocked", size or "a message over the size limit")
            for req in ids if req != size]
    return None


def _expected_cases_checked(ids: list[str], case: str | None) -> list[list[str]]:
    """(requirement, case) pairs this test checked that an expectations entry names: the
    report decides, over the whole run, whether such an entry failed somewhere or passed
    everywhere (an entry covers the case on every tool and root)."""
    checked = running.checked_cases()
    if case is not None:
        checked |= {(req, case) for req in ids}
    return sorted([req, c] for req, c in checked if SELECTION.expected_case(req, c))


def _suite_error(report: pytest.TestReport, item: pytest.Item, call: pytest.CallInfo) -> None:
    """A crash in the suite's own code: reported once, apart from every requirement, with its
    traceback; never evidence against the server."""
    excinfo = call.excinfo
    entry = excinfo.traceback[-1] if excinfo is not None and excinfo.traceback else None
    where = f"{entry.path}:{entry.lineno + 1}" if entry is not None else item.nodeid
    message = verdicts.exception_text(excinfo.value) if excinfo is not None else "unknown error"
    report.rc_suite_error = {"message": esc(message, 500), "where": where, "phase": report.when,
                             "traceback": str(report.longrepr)[-verdicts.TRACEBACK_CHARS:]}
    head = (f"suite error (a bug in retrieval-contract, not a finding against the server; please report it): "
            f"{esc(message, 500)}\n    at {where}")
    key = (message, where)
    if key in _SHOWN_SUITE_ERRORS:  # the traceback once per process; the report counts every test
        report.longrepr = head + "\n    (the same suite error as above; traceback shown once)"
    else:
        _SHOWN_SUITE_ERRORS.add(key)
        report.longrepr = f"{head}\n{report.longrepr}"


_SHOWN_SUITE_ERRORS: set[tuple[str, str]] = set()


def _apply_verdict(report: pytest.TestReport, state: SuiteState, item: pytest.Item, findings: list[Finding]) -> None:
    verdict = classify(findings, state.advisory_ids, state.strict)
    report.rc_findings = {"failing": [f.as_dict() for f in verdict.failing],
                          "advisory": [f.as_dict() for f in verdict.advisory],
                          "expected": [f.as_dict() for f in verdict.expected],
                          "blocked": [f.as_dict() for f in verdict.blocked]}
    for f in verdict.failing:
        report.user_properties.append(("failed_requirement", f.req))
    for f in verdict.advisory:
        report.user_properties.append(("advisory_requirement", f.req))
    shown = verdicts.CONSOLE_CHARS
    if verdict.failing:
        report.outcome = "failed"
        lines = [f.render(shown) for f in verdict.failing]
        lines += [f"(advisory) {f.render(shown)}" for f in verdict.advisory]
        lines += [f"(blocked) {f.render(shown)}" for f in verdict.blocked]
        lines += [f"(expected) {f.render(shown)}" for f in verdict.expected]
        lines = verdicts.cap_lines(lines)
        cases = sorted({f.case for f in verdict.failing if f.case and f.case != case_of(item)})
        lines.append("rerun: " + state.rerun_command(item.nodeid, cases))
        report.longrepr = "\n".join(lines)
    elif verdict.blocked:
        # Not checked: pytest's "skipped" (JUnit <skipped>), naming the blocker. In the setup
        # phase this also keeps pytest from running the test body without its fixture.
        report.outcome = "skipped"
        reasons = verdicts.cap_lines([f.render(shown) for f in verdict.blocked])
        path, lineno, _ = item.location
        report.longrepr = (str(item.path), (lineno or 0) + 1, "blocked: " + "; ".join(reasons))
    elif report.when == "setup":
        # A setup that did not finish never passes, whatever its findings mean for the run:
        # the test body would run without its fixtures.
        report.outcome = "skipped"
        shown_findings = verdicts.cap_lines([f.render(shown) for f in verdict.advisory + verdict.expected])
        path, lineno, _ = item.location
        report.longrepr = (str(item.path), (lineno or 0) + 1, "setup did not finish: " + "; ".join(shown_findings))
    elif verdict.advisory or not verdict.expected:
        report.outcome = "passed"
        report.longrepr = None
    else:
        report.outcome = "skipped"
        report.wasxfail = "; ".join(
            f"{f.req}{f'[{f.case}]' if f.case else ''}: {state.expectations.reason(f.req, f.case)}"
            for f in verdict.expected)
        report.longrepr = None


def _request_of(server: Any, request_id: Any) -> str | None:
    """The request whose response carried a leak (found by the canary guard after the test),
    so the finding names what provoked it, not only the test it ran after."""
    params = server.sent_params.get(request_id) if request_id is not None else None
    if isinstance(params, dict) and isinstance(params.get("name"), str) and "arguments" in params:
        return verdicts.describe_call(params["name"], params["arguments"])
    return f"request {request_id} {esc(params, 200)}" if params is not None else None


# --- fixtures --------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _canary_guard(request: pytest.FixtureRequest):
    """After every suite test, scan what every server wrote since the last scan for canary
    tokens (so output of module-scoped fixtures is scanned too, after the first test using it)."""
    if not is_suite_item(request.node) or "contract_fixture" not in request.fixturenames:
        yield
        return
    factory: ServerFactory = request.getfixturevalue("servers")
    fixture = request.getfixturevalue("contract_fixture")
    profile: contracts.Profile = request.getfixturevalue("profile")
    yield
    findings = []
    scanned = {req for ch in ("results", "errors", "stderr") for req in profile.leak_requirements(ch).values()}
    if factory.started:
        for req in scanned & set(running.cited()):
            running._checked(req, None)  # the scan of every answer below is a check of them
    for srv in factory.started:
        mark = srv.transcript.mark()
        out, err = srv.transcript.since(getattr(srv, "rc_scanned", (0, 0, 0)))
        srv.rc_scanned = mark
        for req, leak in canaries.scan_output(out, fixture.canaries, profile.output_canaries,
                                              srv.sent_params, profile.echo_allowed):
            culprit = _request_of(srv, leak.request_id)
            owned = request.node.stash.get(BLAMED, set()) | running.requests_judged_elsewhere()
            if leak.cls != "outside" or culprit is None or culprit not in owned:
                findings.append(Finding(req, f"server output leaked: {leak}", request=culprit))
        rules = profile.leak_requirements("stderr")
        for leak in canaries.scan_lines(err, fixture.canaries, "stderr", rules):
            findings.append(Finding(rules[leak.cls], f"server log leaked: {leak}"))
    if findings:
        raise RequirementFailure(findings)
