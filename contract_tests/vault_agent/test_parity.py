"""Payload parity: each tool's MCP payload against the HTTP API's answer to the same request,
success and failure, over the transport of the run (stdio, or Streamable HTTP on the server
that also serves the API). A difference names both sides."""

from __future__ import annotations

import base64
import re
from dataclasses import replace

import pytest

from contract_tests.vault_agent.common import (
    error_code_of,
    failure_classes,
    http_body,
    http_call,
    is_json,
    mcp_payload,
    profiles_mark,
    render_case,
    rpc_error,
    scan_own,
    sweep_verdict,
)
from contract_tests.verdicts.checks import called_ok, first_difference, short
from contract_tests.verdicts.findings import RequirementFailure, describe_call
from contract_tests.verdicts.running import own

pytestmark = profiles_mark
CODE = re.compile(r"^[A-Z][A-Z0-9_]*$")
PARITY = {"search": "VA-PAR-001", "get_note": "VA-PAR-002", "get_chunk": "VA-PAR-003",
          "get_attachment": "VA-PAR-004", "related": "VA-PAR-005"}
# Successful calls, in the HTTP API's (camelCase) names; failing ones come from the spec's
# failure classes. {note:NAME} is a note id found by search.
SUCCESS = {
    "search": [{"query": "tokalpha"}, {"query": "tokbeta tokgamma", "mode": "lexical", "limit": 2},
               {"query": "tokalpha lantern", "mode": "hybrid"}, {"query": "tokdelta tomatoes", "limit": 50}],
    "get_note": [{"noteId": "{note:alpha}"}, {"noteId": "{note:beta}", "allowLarge": False},
                 {"noteId": "{note:large}", "allowLarge": True}],
    "get_chunk": [{"noteId": "{note:alpha}", "chunkIndex": 0}, {"noteId": "{note:alpha}", "chunkIndex": 1},
                  {"noteId": "{note:delta}", "chunkIndex": 0}],
    "get_attachment": [{"vaultRelativePath": "attachments/pic.png"},
                       {"vaultRelativePath": "attachments/readme.txt", "download": True},
                       {"vaultRelativePath": "attachments/blob.unknownext", "download": True},
                       {"vaultRelativePath": "links/inside.txt"},
                       {"vaultRelativePath": "attachments/sub/nested.txt", "download": False}],
    "related": [{"type": "note", "id": "{note:alpha}"},
                {"type": "chunk", "id": "{note:gamma}:0", "mode": "lexical", "limit": 3}],
}
MCP_ONLY = {"payload_cap"}  # the 50 MiB cap is the MCP result's; HTTP streams the file
# Only what both documents define is compared. mcp-tools.md requires `freshness` in the MCP
# payload ("Search and related responses include a `freshness` field"); the Phase 1/2 HTTP data
# has none: it is compared only when HTTP gives it too.
MCP_FIELDS = ("freshness",)
# Where the documents contradict each other across the transports, either answer passes:
# mcp-tools.md gives INVALID_PATH to a path that "contains traversal", server-api.md
# PATH_OUTSIDE_VAULT to '..' and absolute paths.
CONTRADICTED = {"traversal", "absolute"}
# HTTP query strings and path segments carry no JSON types: a wrong-typed MCP argument of a GET
# route (allowLarge "yes") has no HTTP counterpart to compare with.
GET_TOOLS = {"get_note", "get_chunk", "get_attachment"}


def _cases(profile, tool):
    out = [(f"ok-{n}", args, None) for n, args in enumerate(SUCCESS[tool])]
    for klass in failure_classes(profile):
        if klass["id"] in MCP_ONLY or (klass.get("wrong_type") and tool in GET_TOOLS):
            continue
        out += [(f"{klass['id']}-{n}", case["arguments"], klass) for n, case in enumerate(klass["cases"])
                if case["tool"] == tool]
    return out


def _envelope_problem(response) -> str | None:
    """Why an HTTP answer is not the Phase 1 envelope (VA-API-002), or None. `details` is
    optional (Phase 2 status-api.md: "The `details` object is optional")."""
    if response.status_code == 200 and not is_json(response):
        return None  # an attachment download: raw bytes
    body = http_body(response)
    if response.status_code == 200:
        ok = isinstance(body, dict) and isinstance(body.get("data"), dict) and isinstance(body.get("warnings"), list)
        return None if ok else f"HTTP 200 without {{data, warnings}}: {short(body, 160)}"
    error = body.get("error") if isinstance(body, dict) else None
    if not (isinstance(error, dict) and isinstance(error.get("code"), str) and CODE.match(error["code"])
            and isinstance(error.get("message"), str) and isinstance(error.get("details", {}), dict)):
        return f"HTTP {response.status_code} without {{error: {{code, message[, details]}}}}: {short(body, 160)}"
    return None


def _comparable(http_data: dict, payload: dict) -> dict:
    """The MCP payload without the fields only mcp-tools.md defines, unless HTTP gives them too."""
    return {k: v for k, v in payload.items() if k not in MCP_FIELDS or k in http_data}


def _compare(findings, case, klass, tool, args, mcp, http, api, request, *, req: str | None = None) -> None:
    req = own(req)
    where = f"HTTP {http.request.method} {http.request.url.raw_path.decode('ascii', 'replace')[:120]}"
    problem = _envelope_problem(http)
    if not findings.check(not problem, problem or "", req="VA-API-002", case=case, request=where):
        findings.fail("the HTTP side is not the Phase 1 envelope: not compared", req=req, case=case, request=request)
        return
    mcp_ok, http_ok = called_ok(mcp), http.status_code == 200
    if mcp_ok != http_ok:
        mcp_side = "succeeded" if mcp_ok else f"failed with {error_code_of(mcp) or short(rpc_error(mcp), 80)}"
        http_side = "succeeded" if http_ok else f"answered {http.status_code} {http_body(http)['error']['code']}"
        findings.fail(f"MCP {mcp_side}, HTTP {http_side} ({where})", req=req, case=case, request=request)
        return
    if not mcp_ok:
        code, error = error_code_of(mcp), rpc_error(mcp) or {}
        if code is None and error.get("code") == -32602:
            return  # InvalidParams without a Phase 1 code (VA-ERR-003): nothing to compare
        http_code = http_body(http)["error"]["code"]
        either = set(klass.get("codes", [])) if klass and klass["id"] in CONTRADICTED else set()
        findings.check(code == http_code or {code, http_code} <= either,
                       f"MCP errorCode {code}, HTTP error code {http_code} ({where})", req=req, case=case,
                       request=request)
        return
    try:
        payload = mcp_payload(mcp)
    except RequirementFailure as failure:
        findings.items.extend(failure.findings)
        return
    if not findings.check(isinstance(payload.get("warnings"), list), "the payload has no top-level warnings array",
                          req="VA-PAR-006", case=case, request=request):
        return
    if is_json(http):
        body = http_body(http)
        expected = {**body["data"], "warnings": body["warnings"]}
        diff = first_difference(expected, _comparable(body["data"], payload))
        findings.check(diff is None, f"HTTP data+warnings vs MCP payload: {diff} (expected = HTTP, got = MCP; "
                       f"{where})", req=req, case=case, request=request)
        return
    # A download: raw bytes over HTTP, base64 over MCP, with the metadata fields around them.
    content = payload.get("content")
    try:
        decoded = base64.b64decode(content, validate=True) if isinstance(content, str) else None
    except ValueError:
        decoded = None
    findings.check(decoded == http.content, f"MCP content decodes to {len(decoded) if decoded else 'nothing'} "
                   f"bytes, HTTP sent {len(http.content)} different bytes ({where})", req=req, case=case,
                   request=request)
    mime = str(payload.get("contentType", "")).split(";")[0].strip().lower()
    header = http.headers.get("content-type", "").split(";")[0].strip().lower()
    findings.check(mime == header, f"MCP contentType {short(mime)}, HTTP Content-Type {short(header)}", req=req,
                   case=case, request=request)
    metadata = http_call(api, tool, {k: v for k, v in args.items() if k not in ("download", "allowLarge")})
    body = http_body(metadata) if metadata is not None and is_json(metadata) else None
    if isinstance(body, dict) and isinstance(body.get("data"), dict):
        rest = {k: v for k, v in _comparable(body["data"], payload).items() if k not in ("content", "encoding")}
        diff = first_difference({**body["data"], "warnings": body["warnings"]}, rest)
        findings.check(diff is None, f"HTTP metadata vs MCP download fields: {diff} (expected = HTTP, "
                       f"got = MCP)", req=req, case=case, request=request)


def _sweep(tool, server, names, ids, api, contract_fixture, profile, findings) -> None:
    req = PARITY[tool]
    for case, template, klass in _cases(profile, tool):
        if not findings.wants(case):
            continue
        try:
            args = render_case(template, ids, contract_fixture, req=req)
        except RequirementFailure as failure:
            findings.items.extend(replace(f, req=r, case=case) for f in failure.findings
                                  for r in (req, "VA-PAR-006", "VA-API-002"))
            continue
        http = http_call(api, tool, args)
        if http is None:
            continue  # an empty or non-string path parameter: HTTP cannot say it
        server_args = names.args(tool, args)
        request = describe_call(tool, server_args)
        mcp = server.call_tool(tool, server_args, timeout=60)
        _compare(findings, case, klass, tool, args, mcp, http, api, request, req=req)
        # A leak goes with the request that made it, not with whichever test scans next.
        for srv in {id(s): s for s in (api.rc_server, server)}.values():
            scan_own(srv, contract_fixture, profile, findings, f"{request} (and its HTTP API request)", case)


@pytest.mark.integration
@pytest.mark.parametrize("tool,req", [pytest.param(t, r, marks=pytest.mark.req(r), id=f"{t}-{r}")
                                      for t, p in PARITY.items() for r in (p, "VA-PAR-006", "VA-API-002")])
def test_each_tool_payload_equals_the_http_api_answer(tool, req, server, client, names, ids, api, contract_fixture,
                                                      profile):
    sweep_verdict(("parity", tool), req, (PARITY[tool], "VA-PAR-006", "VA-API-002"),
                  lambda findings: _sweep(tool, server, names, ids, api, contract_fixture, profile, findings))
