"""The HTTP API the tools are compared with, fuzzed by schemathesis from the profile's OpenAPI
document (specs/openapi/vault-agent.openapi.yaml): any implementation serving the document is
checked the same way. It runs on a private fixture, since POST /index and /reindex write."""

from __future__ import annotations

import pytest

from contract_tests import contracts
from contract_tests.harness.limits import HEALTH, LIMITS
from contract_tests.harness.stdio import ServerStopped
from contract_tests.verdicts import Findings, esc
from contract_tests.vault_agent.common import api_base, profiles_mark

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


@pytest.mark.integration
@pytest.mark.req("VA-API-001")
def test_schemathesis_finds_nothing_against_the_openapi_document(suite, own_servers, contract_fixture, profile,
                                                                tmp_path_factory):
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
    problems: dict[str, tuple[str, str]] = {}
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
                        # 503 EMBEDDING_UNAVAILABLE is documented (retrieval.md): a 5xx is a finding
                        # only when the document does not list it (status_code_conformance) or is 500.
                        response = case.call_and_validate(base_url=base, excluded_checks=[not_a_server_error],
                                                          timeout=LIMITS.request_timeout)
                        if response.status_code == 500:
                            raise AssertionError("HTTP 500: an internal error")
                    except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - reported, never shrunk
                        problems[label] = (_describe(exc), case.as_curl_command(headers=None))
                try:
                    probe()
                except Unsatisfiable:
                    continue  # nothing to generate in this mode (e.g. no invalid GET /health exists)
    finally:
        srv.close(timeout=5)
    with Findings() as findings:
        for label, (message, curl) in sorted(problems.items()):
            findings.fail(esc(message, 300), case=label, request=esc(curl.replace(base, "BASE"), 300))
