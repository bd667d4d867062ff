"""Integration tier: golden vectors, path normalisation, and the error contract."""

from __future__ import annotations

import json

import pytest

from contract_tests.contracts import specs as contracts
from contract_tests.contracts.specs import load_profile
from contract_tests.section_source.common import TOOL, body_free_tools, profiles_mark
from contract_tests.verdicts.checks import called_ok, check_vector, error_texts, short, structured_error, tool_output
from contract_tests.verdicts.findings import Findings, blocked, describe_call

pytestmark = [profiles_mark, pytest.mark.integration]

VECTORS = load_profile("section-source-local").vectors()
MISSING = "inbox/does-not-exist-7f3a.md"
TRAVERSAL = "../outside/secret.md"


@pytest.mark.req("SSL-OUT-005")
@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_output_equals_the_golden_vector(client, profile, vector):
    out = tool_output(client.call_tool(TOOL, {"path": vector["path"]}))
    check_vector(out, vector, profile.output_validator(TOOL))


PADDED = (" inbox/example.md ", "\tinbox/example.md\n")


@pytest.mark.req("SSL-OUT-006")
@pytest.mark.parametrize("variant", [*PADDED, "inbox\\example.md", "./inbox//example.md", "inbox/./example.md"])
def test_a_note_reached_by_another_spelling_reports_the_normalized_path(client, variant):
    """Seed 000 does not say whether such spellings are served; when one is, the output path is
    the normalized one. A declaration of trim_paths fixes the padded spellings' fate."""
    response = client.call_tool(TOOL, {"path": variant})
    request = describe_call(TOOL, {"path": variant})
    trim = contracts.DECLARATION.get("trim_paths")
    with Findings() as findings:
        if not called_ok(response):
            findings.check(not (trim is True and variant in PADDED),
                           "declared trim_paths: true, but the padded path failed", req="SSL-OUT-006", request=request)
            return
        findings.check(not (trim is False and variant in PADDED),
                       "declared trim_paths: false, but the padded path was served", req="SSL-OUT-006", request=request)
        out = tool_output(response, req="SSL-OUT-006")
        findings.check(out.get("path") == "inbox/example.md",
                       f"gave path {out.get('path')!r}, expected 'inbox/example.md'", req="SSL-OUT-006",
                       request=request)


@pytest.mark.req("SSL-IN-001")
def test_a_call_without_path_fails(server, client):
    error_texts(server.call_tool(TOOL, {}), "arguments {}")


@pytest.mark.req("SSL-IN-002")
@pytest.mark.parametrize("value", [None, 42, 4.5, True, ["inbox/example.md"], {"path": "inbox/example.md"}])
def test_a_call_whose_path_is_not_a_string_fails(server, client, value):
    error_texts(server.call_tool(TOOL, {"path": value}), f"path={json.dumps(value)}")


@pytest.mark.req("SSL-ERR-006")
@pytest.mark.parametrize("arguments", [{}, {"path": 42}, {"path": None}, {"path": ["inbox/example.md"]}],
                         ids=["no-path", "number", "null", "list"])
def test_a_missing_or_non_string_path_fails_with_runtime_error(server, client, profile, arguments):
    """The error's form; a call that succeeds is SSL-IN-001's or SSL-IN-002's finding."""
    response = server.call_tool(TOOL, arguments)
    if called_ok(response):
        raise blocked("the call succeeded: no error to judge",
                      by="SSL-IN-001" if not arguments else "SSL-IN-002")
    structured_error(response, profile, "a missing or non-string path",
                     request=describe_call(TOOL, arguments))


@pytest.mark.req("SSL-ERR-001")
def test_a_missing_note_fails_with_runtime_error(server, client, profile):
    structured_error(server.call_tool(TOOL, {"path": MISSING}), profile, "missing note",
                     request=describe_call(TOOL, {"path": MISSING}))


@pytest.mark.req("SSL-ERR-002")
@pytest.mark.parametrize("path", [TRAVERSAL, "inbox/../../outside/secret.md", "inbox/../notes/alpha.md"])
def test_a_traversal_path_fails_with_runtime_error(server, client, profile, path):
    """The error's form; a traversal that succeeds is SSL-IN-005's finding (the path sweep)."""
    response = server.call_tool(TOOL, {"path": path})
    if called_ok(response):
        raise blocked("the traversal succeeded: no error to judge", by="SSL-IN-005")
    structured_error(response, profile, "traversal path", request=describe_call(TOOL, {"path": path}))


def _failure(response):
    """(kind, code, message) of a failed call; kind 'success' when it did not fail."""
    if "error" in response:
        return "jsonrpc-error", response["error"].get("code"), response["error"].get("message")
    result = response["result"]
    try:
        body = json.loads(result["content"][0]["text"])
    except (KeyError, IndexError, ValueError, TypeError):
        body = {}
    body = body if isinstance(body, dict) else {}
    kind = "isError" if result.get("isError") else "success"
    return kind, body.get("code"), body.get("error")


ERR_PATHS = [MISSING, "notes/missing-too.md", TRAVERSAL, "links/escape-file.md", "links/escape-dir/secret.md",
             "/etc/passwd", "inbox", "{root}/outside/secret.md"]


@pytest.mark.req("SSL-ERR-003")
def test_missing_and_traversal_errors_reveal_no_more_than_the_adjacent_tools(server, client, profile, fixture_vault):
    """Same failure kind and code as each adjacent tool, and no finer distinctions between paths."""
    adjacent = [t for t in body_free_tools(client, profile) if t != TOOL]
    if not adjacent:
        pytest.skip("the server lists none of the adjacent body-free tools")
    paths = [p.replace("{root}", str(fixture_vault.root)) for p in ERR_PATHS]
    ours = {p: _failure(server.call_tool(TOOL, {"path": p})) for p in paths}
    # A path that succeeds is the path sweep's finding (SSL-IN-00x); only failures are compared.
    paths = [p for p in paths if ours[p][0] != "success"]
    with Findings() as findings:
        for name in adjacent:
            theirs = {p: _failure(server.call_tool(name, {"path": p})) for p in paths}
            for path in paths:
                findings.check(theirs[path][:2] == ours[path][:2], f"{name} and {TOOL} fail "
                               f"differently (kind, code): {theirs[path][:2]} vs {ours[path][:2]}", case=path)
            told_apart = [(a, b) for a in paths for b in paths
                          if theirs[a][2] == theirs[b][2] and ours[a][2] != ours[b][2]]
            for a, b in told_apart[:1]:
                findings.fail(f"{TOOL} tells apart two paths that {name} does not "
                              f"(messages {short(ours[a][2], 60)} vs {short(ours[b][2], 60)})")
