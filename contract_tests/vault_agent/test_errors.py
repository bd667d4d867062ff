"""vault-agent errors: every failure class of the spec as a JSON-RPC error with its Phase 1 code
and mcp-tools.md's JSON-RPC code; missing and wrong-typed arguments; unknown tools and
unknown arguments."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from contract_tests.contracts.specs import choice
from contract_tests.vault_agent.common import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    VALIDATION_RPC,
    declared_codes,
    failure_classes,
    mcp_payload,
    per_requirement,
    profiles_mark,
    render_case,
    rpc_codes,
    rpc_error,
    sweep_verdict,
)
from contract_tests.verdicts.checks import called_ok, short, structured_error
from contract_tests.verdicts.findings import Findings, RequirementFailure, describe_call, one_case

pytestmark = profiles_mark
CODE = re.compile(r"^[A-Z][A-Z0-9_]*$")
ERR = ("VA-ERR-001", "VA-ERR-002", "VA-ERR-003", "VA-ERR-008")


def _judge(findings: Findings, profile, klass, case: str, request: str, response) -> None:
    """Findings for one failing call, each requirement checked on its own (one defect, one finding)."""
    error = rpc_error(response)
    if error is None and called_ok(response):
        req = "VA-ERR-003" if klass.get("wrong_type") or klass.get("rpc") else "VA-ERR-002"
        findings.fail(f"the call succeeded; class {klass['id']} must fail", req=req, case=case, request=request)
        return
    code = error.get("code") if error else None
    if error is not None:
        message = error.get("message")
        findings.check(isinstance(message, str) and message.strip(), "the error has an empty message", req="VA-ERR-008",
                       case=case, request=request)
    data = error.get("data") if error else None
    errcode = data.get("errorCode") if isinstance(data, dict) else None
    if klass.get("rpc") is not None:
        findings.check(code == klass["rpc"], f"a missing argument got {short(error or response, 160)}, "
                       f"not JSON-RPC {klass['rpc']} (InvalidParams)", req="VA-ERR-003", case=case, request=request)
        return
    if klass.get("wrong_type"):
        declared = choice("wrong_type_code")
        allowed = {int(declared)} if declared is not None else {INVALID_PARAMS, VALIDATION_RPC}
        if not findings.check(code in allowed, f"a wrong-typed argument got "
                              f"{short(error or response, 160)}; expected JSON-RPC "
                              f"{' or '.join(map(str, sorted(allowed)))}", req="VA-ERR-003", case=case,
                              request=request):
            return
        if code == VALIDATION_RPC or errcode is not None:
            findings.check(errcode in klass["codes"], f"a wrong-typed argument got errorCode "
                           f"{short(errcode)}; expected the field's validation code", req="VA-ERR-003", case=case,
                           request=request)
        return
    with one_case(findings, case, request, req="VA-ERR-001"):
        structured_error(response, profile, f"class {klass['id']}", req="VA-ERR-001", request=request, case=case)
    if error is not None:
        findings.check(isinstance(code, int) and -32099 <= code <= -32000,
                       f"JSON-RPC code {code} is outside -32000..-32099", req="VA-ERR-001", case=case, request=request)
        findings.check(isinstance(errcode, str) and CODE.match(errcode),
                       f"data.errorCode {short(errcode)} is not a Phase 1 code", req="VA-ERR-001", case=case,
                       request=request)
    if not isinstance(errcode, str):
        findings.block("no data.errorCode to compare", req="VA-ERR-002", by="VA-ERR-001", case=case, request=request)
        return
    allowed = declared_codes(klass)
    if findings.check(errcode in allowed, f"errorCode {errcode}; expected {' or '.join(allowed)}", req="VA-ERR-002",
                      case=case, request=request):
        expected = rpc_codes().get(errcode)
        findings.check(code == expected, f"{errcode} came with JSON-RPC {code}; mcp-tools.md gives "
                       f"it {expected}", req="VA-ERR-002", case=case, request=request)


def _sweep(server, names, ids, contract_fixture, profile, findings: Findings) -> None:
    for klass in failure_classes(profile):
        for n, case in enumerate(klass["cases"]):
            case_id = f"{klass['id']}-{n}"
            if not findings.wants(case_id):
                continue
            try:
                arguments = render_case(case["arguments"], ids, contract_fixture, req="VA-ERR-002")
            except RequirementFailure as failure:
                for req in ERR:  # no case without the note id search should have found
                    findings.items.extend(replace(f, req=req, case=case_id) for f in failure.findings)
                continue
            arguments = names.args(case["tool"], arguments)
            request = describe_call(case["tool"], arguments)
            response = server.call_tool(case["tool"], arguments, timeout=60)
            _judge(findings, profile, klass, case_id, request, response)


@pytest.mark.integration
@per_requirement(*ERR)
def test_every_failure_class_gives_its_phase_1_code_as_a_json_rpc_error(req, server, client, names, ids,
                                                                         contract_fixture, profile):
    """A class whose documents allow two codes (a '..' path: INVALID_PATH or PATH_OUTSIDE_VAULT)
    may give either on each call, or what the declaration's `error_codes` narrows it to."""
    sweep_verdict("errors", req, ERR, lambda findings: _sweep(server, names, ids, contract_fixture, profile, findings))


@pytest.mark.integration
@pytest.mark.req("VA-TOOL-006")
def test_a_tool_that_does_not_exist_gets_method_not_found(server, client):
    response = server.call_tool("rc_no_such_tool_7f3a", {})
    error = rpc_error(response) or {}
    with Findings() as findings:
        findings.check(error.get("code") == METHOD_NOT_FOUND, f"got {short(response, 200)}",
                       request=describe_call("rc_no_such_tool_7f3a", {}))


@pytest.mark.integration
@pytest.mark.req("VA-ERR-004")
def test_an_argument_no_tool_defines_is_ignored(server, client, names, ids):
    calls = [("search", {"query": "tokalpha lantern"}), ("get_note", {"noteId": ids.note("alpha")}),
             ("get_attachment", {"vaultRelativePath": "attachments/pic.png"})]
    with Findings() as findings:
        for tool, arguments in calls:
            plain = names.args(tool, arguments)
            extra = {**plain, "rcUnknownArgument": 1, "rc_unknown_argument": "x"}
            first, second = server.call_tool(tool, plain), server.call_tool(tool, extra)
            request = describe_call(tool, extra)
            if not findings.check(called_ok(first), f"the plain call failed: {short(first, 200)}",
                                  request=describe_call(tool, plain)):
                continue
            if not findings.check(called_ok(second), f"an unknown argument made the call fail: "
                                  f"{short(second, 200)}", request=request):
                continue
            findings.check(mcp_payload(first) == mcp_payload(second), "an unknown argument changed the payload",
                           request=request)
