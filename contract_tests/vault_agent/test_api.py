"""The HTTP API the tools are compared with, fuzzed by schemathesis from the profile's OpenAPI
document (specs/openapi/vault-agent.openapi.yaml): any implementation serving the document is
checked the same way. It runs on a private fixture, since POST /index and /reindex write. And the
JSON request body limit, on the HTTP API the tools are compared with."""

from __future__ import annotations

import re

import pytest

from contract_tests.contracts import specs as contracts
from contract_tests.transport.limits import HEALTH, LIMITS
from contract_tests.transport.stdio import ServerStopped
from contract_tests.vault_agent.common import (
    api_base,
    http_body,
    is_json,
    per_requirement,
    profiles_mark,
    scan_own,
    sweep_verdict,
)
from contract_tests.verdicts.checks import short
from contract_tests.verdicts.findings import Findings, esc

pytestmark = profiles_mark
EXAMPLES = 8  # per operation and generation mode; reaches every documented status of the reference


def _describe(exc: BaseException) -> str:
    """One line per failure schemathesis reports (a group holds several)."""
    parts = exc.exceptions if isinstance(exc, BaseExceptionGroup) else [exc]
    lines = []
    for part in parts:
        title = getattr(part, "title", None) or type(part).__name__
        message = (getattr(part, "message", None) or str(part)).strip().replace("\n", " ")
        lines.append(f"{title}: {message}" if message else title)
    return "; ".join(lines)


OPENAPI = ("VA-API-001", "VA-API-004")


def _server_error(operation, status: int) -> bool:
    """A 5xx the OpenAPI document does not list for the operation (VA-API-004's finding)."""
    listed = {str(k).upper() for k in operation.definition.raw.get("responses", {})}
    return 500 <= status < 600 and not {str(status), "5XX", "DEFAULT"} & listed


@pytest.mark.integration
@per_requirement(*OPENAPI)
def test_schemathesis_finds_nothing_against_the_openapi_document(req, suite, own_servers, contract_fixture, profile,
                                                                tmp_path_factory):
    sweep_verdict("openapi", req, OPENAPI,
                  lambda findings: _openapi_sweep(own_servers, contract_fixture, profile, tmp_path_factory, findings))


def _openapi_sweep(own_servers, contract_fixture, profile, tmp_path_factory, findings) -> None:
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error

    fixture = contract_fixture.private_copy(tmp_path_factory.mktemp("openapi"), profile)
    srv = own_servers.start_http(fixture, "serve")
    base = api_base(srv)
    schema = schemathesis.openapi.from_path(contracts.contracts_root() / "specs" / "openapi" /
                                            "vault-agent.openapi.yaml")
    problems: dict[str, tuple[str, str, str]] = {}  # label -> (requirement, message, request)
    try:
        for result in schema.get_all_operations():
            operation = result.ok()
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                label = f"{operation.method.upper()} {operation.path} ({mode.value})"

                @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                          suppress_health_check=list(HealthCheck))
                @given(case=operation.as_strategy(generation_mode=mode))
                def probe(case) -> None:
                    stopped = HEALTH.check()
                    if stopped:  # another check found the server stopped answering: no more requests
                        raise ServerStopped(stopped)
                    if label in problems:
                        return
                    try:
                        response = case.call(base_url=base, timeout=LIMITS.request_timeout)
                        if _server_error(operation, response.status_code):
                            problems[label] = ("VA-API-004", f"HTTP {response.status_code}, a server error the "
                                               "document does not list for this route",
                                               case.as_curl_command(headers=None))
                            return
                        # 503 EMBEDDING_UNAVAILABLE is documented (retrieval.md): a listed 5xx is a finding
                        # of the document's reading only when it is 500.
                        case.validate_response(response, excluded_checks=[not_a_server_error])
                        if response.status_code == 500:
                            raise AssertionError("HTTP 500: an internal error")
                    except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - reported, never shrunk
                        problems[label] = ("VA-API-001", _describe(exc), case.as_curl_command(headers=None))
                try:
                    probe()
                except Unsatisfiable:
                    continue  # nothing to generate in this mode (e.g. no invalid GET /health exists)
    finally:
        srv.close(timeout=5)
    for label, (req, message, curl) in sorted(problems.items()):
        findings.fail(esc(message, 300), req=req, case=label, request=esc(curl.replace(base, "BASE"), 300))
    for req in OPENAPI:  # what was probed and held
        findings.check(True, "", req=req)

# server-api.md's JSON body limit, 64 KiB: a valid search padded with JSON whitespace to just
# under it is a request like any other; padded past it, one the server refuses.
UNDER, OVER = 63 * 1024, 65 * 1024
REFUSALS = (400, 413)  # 400 "validation error", 413 with QUERY_TOO_LARGE "Request exceeds size limit"
_CODE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*")


def _padded(size: int) -> bytes:
    head, tail = b'{"query": "tokalpha"', b"}"
    return head + b" " * (size - len(head) - len(tail)) + tail


@pytest.mark.integration
@pytest.mark.req("VA-API-003")
def test_a_json_body_over_64_kib_is_refused_and_one_under_it_is_served(api, contract_fixture, profile):
    with Findings() as findings:
        for size in (UNDER, OVER):
            body = _padded(size)
            request = f"POST /search with a {size:,}-byte JSON body (a valid search padded with whitespace)"
            response = api.post("/search", content=body, headers={"Content-Type": "application/json"})
            data = http_body(response) if is_json(response) else None
            if size == UNDER:
                findings.check(response.status_code == 200, f"under the 64 KiB limit: HTTP {response.status_code} "
                               f"{short(response.text, 160)}", case="63 KiB", request=request)
                continue
            error = data.get("error") if isinstance(data, dict) else None
            code = error.get("code") if isinstance(error, dict) else None
            findings.check(response.status_code in REFUSALS, f"over the 64 KiB limit: HTTP {response.status_code} "
                           f"(400 or 413 refuse it)", case="65 KiB", request=request)
            if response.status_code in REFUSALS and data is not None:
                findings.check(isinstance(code, str) and _CODE.fullmatch(code),
                               f"the refusal is not the Phase 1 error envelope: {short(response.text, 160)}",
                               case="65 KiB", request=request)
        scan_own(api.rc_server, contract_fixture, profile, findings, "POST /search with a padded body")
