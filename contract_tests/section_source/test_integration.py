"""Integration tier: golden vectors, path normalisation, and the error contract."""

from __future__ import annotations

import json

import pytest

from contract_tests.checks import check, check_vector, envelope, error_texts, fail, short, tool_output
from contract_tests.contracts import load_profile
from contract_tests.section_source.common import TOOL, body_free_tools, profiles_mark

pytestmark = [profiles_mark, pytest.mark.integration]

VECTORS = load_profile("section-source-local").vectors()
MISSING = "inbox/does-not-exist-7f3a.md"
TRAVERSAL = "../outside/secret.md"


@pytest.mark.req("SSL-OUT-005")
@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_output_equals_the_golden_vector(client, profile, vector):
    out = tool_output(client.call_tool(TOOL, {"path": vector["path"]}), "SSL-OUT-005")
    check_vector(out, vector, profile.output_validator(TOOL), "SSL-OUT-005")


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
    for path, (kind, _code, _msg) in ours.items():
        check(kind != "success", "SSL-ERR-003", f"{TOOL} succeeded for a missing or unsafe path")
    for name in adjacent:
        theirs = {p: _failure(server.call_tool(name, {"path": p})) for p in paths}
        for path in paths:
            check(theirs[path][:2] == ours[path][:2], "SSL-ERR-003",
                  f"{name} and {TOOL} fail differently (kind, code): {theirs[path][:2]} vs {ours[path][:2]}")
        for a in paths:
            for b in paths:
                if theirs[a][2] == theirs[b][2] and ours[a][2] != ours[b][2]:
                    fail("SSL-ERR-003", f"{TOOL} tells apart two paths that {name} does not "
                                        f"(messages {short(ours[a][2], 60)} vs {short(ours[b][2], 60)})")
