"""Integration tier: golden vectors, path normalisation, and the error contract."""

from __future__ import annotations

import json

import pytest

from contract_tests.checks import check, envelope, error_texts, schema_errors, short, tool_output
from contract_tests.contracts import load_profile
from contract_tests.section_source.common import TOOL, body_free_tools, profiles_mark

pytestmark = [profiles_mark, pytest.mark.integration]

VECTORS = load_profile("section-source-local").vectors()
MISSING = "inbox/does-not-exist-7f3a.md"
TRAVERSAL = "../outside/secret.md"


def _first_difference(expected, actual, where="$"):
    if type(expected) is not type(actual):
        return f"{where}: expected {short(expected, 60)}, got {short(actual, 60)}"
    if isinstance(expected, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual or key not in expected:
                return f"{where}.{key}: present on one side only"
            diff = _first_difference(expected[key], actual[key], f"{where}.{key}")
            if diff:
                return diff
    elif isinstance(expected, list):
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} items, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            diff = _first_difference(e, a, f"{where}[{i}]")
            if diff:
                return diff
    elif expected != actual:
        return f"{where}: expected {short(expected, 60)}, got {short(actual, 60)}"
    return None


@pytest.mark.req("SSL-OUT-005")
@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_output_equals_the_golden_vector(client, profile, vector):
    out = tool_output(client.call_tool(TOOL, {"path": vector["path"]}), "SSL-OUT-005")
    errors = schema_errors(profile.output_validator(TOOL), out)
    check(not errors, "SSL-OUT-005", f"{vector['id']}: output violates the allowlist: {errors[:3]}")
    expected = dict(vector["expected"])
    for field in vector.get("implementation_defined", []):
        expected.pop(field, None)
        out.pop(field, None)
    diff = _first_difference(expected, out)
    check(diff is None, "SSL-OUT-005", f"{vector['id']} ({vector['description']}): {diff}")


@pytest.mark.req("SSL-OUT-006")
@pytest.mark.parametrize("variant", [" inbox/example.md ", "inbox\\example.md", "./inbox//example.md",
                                     "inbox/./example.md", "\tinbox/example.md\n"])
def test_output_path_is_the_normalized_request_path(client, variant):
    out = tool_output(client.call_tool(TOOL, {"path": variant}), "SSL-OUT-006")
    check(out.get("path") == "inbox/example.md", "SSL-OUT-006",
          f"request {variant!r} gave path {out.get('path')!r}, expected 'inbox/example.md'")


@pytest.mark.req("SSL-IN-001")
def test_a_call_without_path_fails(server, client):
    error_texts(server.call_tool(TOOL, {}), "SSL-IN-001", "arguments {}")


@pytest.mark.req("SSL-IN-002")
@pytest.mark.parametrize("value", [None, 42, 4.5, True, ["inbox/example.md"], {"path": "inbox/example.md"}])
def test_a_call_whose_path_is_not_a_string_fails(server, client, value):
    error_texts(server.call_tool(TOOL, {"path": value}), "SSL-IN-002", f"path={json.dumps(value)}")


@pytest.mark.req("SSL-ERR-001")
def test_a_missing_note_gives_the_runtime_error_envelope(client, profile):
    envelope(client.call_tool(TOOL, {"path": MISSING}), profile.error_validator(), "SSL-ERR-001", "missing note")


@pytest.mark.req("SSL-ERR-002")
@pytest.mark.parametrize("path", [TRAVERSAL, "inbox/../../outside/secret.md", "..\\outside\\secret.md"])
def test_a_traversal_path_gives_the_runtime_error_envelope(client, profile, path):
    envelope(client.call_tool(TOOL, {"path": path}), profile.error_validator(), "SSL-ERR-002", "traversal path")


def _shape(response):
    if "error" in response:
        return ("jsonrpc-error", response["error"].get("code"))
    result = response["result"]
    try:
        body = json.loads(result["content"][0]["text"])
    except (KeyError, IndexError, ValueError, TypeError):
        body = None
    return ("isError" if result.get("isError") else "success", body)


@pytest.mark.req("SSL-ERR-003")
@pytest.mark.parametrize("path", [MISSING, TRAVERSAL, "links/escape-file.md", "/etc/passwd"])
def test_missing_and_traversal_errors_match_the_adjacent_tools(server, client, profile, path):
    adjacent = [t for t in body_free_tools(client, profile) if t != TOOL]
    if not adjacent:
        pytest.skip("the server lists none of the adjacent body-free tools")
    ours = _shape(server.call_tool(TOOL, {"path": path}))
    check(ours[0] != "success", "SSL-ERR-003", f"{TOOL} succeeded for an unsafe or missing path")
    for name in adjacent:
        theirs = _shape(server.call_tool(name, {"path": path}))
        check(theirs == ours, "SSL-ERR-003",
              f"{name} and {TOOL} fail differently for the same path: {short(theirs)} vs {short(ours)}")
