"""mcp-base: the protocol every profile shares, probed over raw JSON-RPC."""

from __future__ import annotations

import json
import time
from typing import Any

import mcp_types as types
import pytest

from contract_tests.concerns.common import strip_volatile
from contract_tests.contracts.mapping import ready_seconds
from contract_tests.contracts.specs import spec
from contract_tests.transport.stdio import StdioServer, protocol_version
from contract_tests.verdicts.checks import called_ok, check, fail, not_json_rpc, result_of, short, texts, tool_output
from contract_tests.verdicts.findings import Findings, blocked

BASE = spec("mcp-base")["protocol"]
HANDSHAKE = BASE["handshake_versions"]
MODERN = BASE["modern_versions"][0]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "retrieval-contract", "version": "0.1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture
def fresh(servers, contract_fixture):
    """A connection before its handshake (a new session over HTTP, a new process over stdio)."""
    srv = servers.handshake(contract_fixture)
    yield srv
    srv.close(timeout=3)


@pytest.fixture
def fresh_process(servers, contract_fixture):
    """A new process: what malformed input does to it is this test's alone."""
    srv = servers.start(contract_fixture)
    yield srv
    srv.close(timeout=3)


def _modern_supported(srv) -> bool:
    response = srv.request("server/discover", {"_meta": MODERN_META})
    result = response.get("result") or {}
    return MODERN in result.get("supportedVersions", [])


@pytest.mark.unit
@pytest.mark.req("MCP-INIT-001")
def test_initialize_returns_version_capabilities_and_server_info(fresh, record_property):
    """With the version the run speaks (negotiated by the preflight, or --protocol-version)."""
    response = fresh.initialize(protocol_version())
    check("result" in response, f"initialize failed: {short(response.get('error'))}")
    result = response["result"]
    try:
        types.InitializeResult.model_validate(result)
    except ValueError as exc:
        fail(f"InitializeResult does not validate: {short(str(exc))}")
    info = result.get("serverInfo", {})
    check(info.get("name") and "version" in info, f"serverInfo lacks name/version: {short(info)}")
    record_property("server_info", info)


@pytest.mark.integration
@pytest.mark.req("MCP-INIT-002")
def test_initialize_answers_the_requested_version_or_another_supported_one(servers, contract_fixture, profile):
    """One handshake per version, each on a fresh connection (started side by side: over stdio
    a fresh process is the point, its start-up time is not). A profile whose seed asks for an
    error where MCP asks for a counter-offer lists `error` under protocol.unsupported_version; a
    JSON-RPC error then counts as declining a version the server does not support."""
    started = [(version, servers.handshake(contract_fixture)) for version in HANDSHAKE]
    error_allowed = "error" in profile.data.get("protocol", {}).get("unsupported_version", [])
    with Findings() as findings:
        for version, srv in started:
            try:
                response = srv.initialize(version)
            finally:
                srv.close(timeout=3)
            if error_allowed and "error" in response and "result" not in response:
                continue
            if not findings.check("result" in response, f"initialize failed: {short(response.get('error'))}",
                                  case=version):
                continue
            answered = response["result"].get("protocolVersion")
            findings.check(answered in HANDSHAKE, f"answered unknown version {answered!r}",
                           case=version)


@pytest.mark.integration
@pytest.mark.req("MCP-INIT-003")
def test_initialize_with_an_unknown_version_never_echoes_it(fresh):
    probe = BASE["unsupported_version_probe"]
    response = fresh.initialize(probe)
    if "result" in response:
        answered = response["result"].get("protocolVersion")
        check(answered != probe and answered in HANDSHAKE + [MODERN],
              f"answered {answered!r} to an unsupported version")
    else:
        check("error" in response, "neither result nor error")


@pytest.mark.integration
@pytest.mark.req("MCP-MODERN-001")
def test_server_discover_lists_supported_versions_and_capabilities_without_a_handshake(fresh):
    response = fresh.request("server/discover", {"_meta": MODERN_META})
    if "error" in response:
        pytest.skip("server does not support the 2026-07-28 revision (server/discover answered an error)")
    result = response["result"]
    check(MODERN in result.get("supportedVersions", []),
          f"supportedVersions lacks {MODERN}: {short(result.get('supportedVersions'))}")
    check(isinstance(result.get("capabilities"), dict), "discover result has no capabilities")


@pytest.mark.integration
@pytest.mark.req("MCP-MODERN-002")
def test_a_stateless_request_with_an_unsupported_version_gets_a_json_rpc_error(fresh):
    if not _modern_supported(fresh):
        pytest.skip("server does not support the 2026-07-28 revision")
    meta = dict(MODERN_META, **{"io.modelcontextprotocol/protocolVersion": BASE["unsupported_version_probe"]})
    response = fresh.request("tools/list", {"_meta": meta})
    check("error" in response and "result" not in response, "tools/list with an unsupported _meta version got a result")


@pytest.mark.unit
@pytest.mark.req("MCP-TOOLS-001")
def test_tools_list_is_a_valid_result_with_unique_names_and_object_schemas(client):
    tools = client.list_tools()
    names = [t["name"] for t in tools]
    check(len(names) == len(set(names)), f"duplicate tool names: {names}")
    for tool in tools:
        check(tool.get("inputSchema", {}).get("type") == "object",
              f"tool {tool['name']} inputSchema is not an object schema")


@pytest.mark.unit
@pytest.mark.req("MCP-TOOLS-002")
def test_every_profile_tool_is_annotated_read_only_and_not_destructive(client, profile):
    ours = set(profile.required_tools + profile.adjacent_tools)
    listed = [tool for tool in client.list_tools() if tool["name"] in ours]
    if not listed:  # e.g. a phase in which the profile's tool is absent
        pytest.skip("none of the profile's tools is listed: there is no annotation to check")
    for tool in listed:
        notes = tool.get("annotations") or {}
        check(notes.get("readOnlyHint") is True, f"{tool['name']}: readOnlyHint is not true")
        # MCP: destructiveHint "is meaningful only when readOnlyHint == false": beside a true
        # readOnlyHint it may be absent or false, never true.
        check(notes.get("destructiveHint") is not True, f"{tool['name']}: destructiveHint is true")


@pytest.mark.integration
@pytest.mark.req("MCP-TOOLS-003")
def test_an_unknown_tool_fails_and_never_succeeds(server, client):
    response = server.call_tool("rc_no_such_tool_7f3a", {})
    if "result" in response:
        check(response["result"].get("isError") is True, "an unknown tool call succeeded")
    else:
        check("error" in response, "neither result nor error")


@pytest.mark.integration
@pytest.mark.req("MCP-RPC-001")
def test_an_unknown_method_gets_method_not_found(server, client):
    response = server.request("rc/no-such-method", {})
    check(response.get("error", {}).get("code") == -32601, f"expected error -32601, got {short(response)}")


MALFORMED = (b"{not json\n", b'{"jsonrpc":"1.0","id":"rc-bad-1","method":"ping"}\n',
             b'{"jsonrpc":"2.0","id":"rc-bad-2"}\n', b"[]\n", b'"just a string"\n', b"\xff\xfe\n")


def _is_json_rpc_reply(message: Any) -> bool:
    """A JSON-RPC 2.0 error response (its id may be null when the request's could not be read)
    or a notification; never a result for malformed input, nor a bare object without `jsonrpc`
    or without `id`."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    if "method" in message:
        return "id" not in message
    return "id" in message and "error" in message


@pytest.mark.stress
@pytest.mark.req("MCP-RPC-002")
def test_malformed_messages_get_errors_or_are_dropped_and_the_server_keeps_answering(fresh_process, profile):
    """Any JSON-RPC response with the probe's id is an answer (an error too: the server need not
    implement ping); the probe is tools/list, which every profile's server offers."""
    opened = fresh_process.initialize()
    if "result" not in opened:
        raise blocked(f"initialize failed: {short(opened.get('error'))}", by="MCP-INIT-001")
    with Findings() as findings:
        for raw in MALFORMED:
            before = len(fresh_process.unsolicited)
            fresh_process.send_bytes(raw)
            probe = fresh_process.request("tools/list", {}, timeout=10)
            findings.check(("result" in probe or "error" in probe) and "rc_http_status" not in probe,
                           f"after {short(raw.decode('utf-8', 'replace'), 60)} the server stopped "
                           f"answering: tools/list got {short(probe, 200)}", case=_case_of(raw))
            # Over HTTP a malformed POST may be refused at the HTTP level, with any body (MCP:
            # "The HTTP response body MAY comprise a JSON-RPC error response"): only stdio's
            # lines are all messages.
            for message in fresh_process.unsolicited[before:] if isinstance(fresh_process, StdioServer) else []:
                findings.check(_is_json_rpc_reply(message),
                               f"{short(raw.decode('utf-8', 'replace'), 60)} got a reply that is not JSON-RPC 2.0: "
                               f"{short(message)}", case=_case_of(raw))


def _case_of(raw: bytes) -> str:
    return f"malformed-{MALFORMED.index(raw) + 1}"


@pytest.mark.security
@pytest.mark.req("MCP-RPC-003")
def test_every_message_the_server_sent_is_valid_json_rpc(server, client):
    client.list_tools()
    server.request("ping")
    lines = [line for line in list(server.transcript.stdout) if line.strip()]
    bad = not_json_rpc(lines)
    if bad:
        fail(f"invalid JSON-RPC message on stdout: {short(bad[0], 80)}")
    check(lines, "no message of the server's was read (the answers to tools/list and ping were expected)")


@pytest.mark.unit
@pytest.mark.req("MCP-PING-001")
def test_ping_gets_an_empty_result(server, client):
    response = server.request("ping")
    check(response.get("result") == {} or set(response.get("result", {"x": 1})) <= {"_meta", "resultType"},
          f"ping answered {short(response)}")


@pytest.mark.integration
@pytest.mark.req("MCP-CAP-001")
@pytest.mark.parametrize("capability,method,key", [
    ("resources", "resources/list", "resources"),
    ("resources", "resources/templates/list", "resourceTemplates"),
    ("prompts", "prompts/list", "prompts"),
])
def test_each_declared_capability_answers_its_list_method(server, client, capability, method, key):
    if capability not in client.capabilities:
        pytest.skip(f"server does not declare {capability}")
    response = server.request(method, {})
    check("result" in response and isinstance(response["result"].get(key), list),
          f"{capability} declared but {method} answered {short(response)}")


@pytest.mark.e2e
@pytest.mark.req("MCP-STDIO-001")
def test_stdout_carries_only_mcp_messages(fresh_process):
    srv = fresh_process
    srv.initialize()
    srv.request("tools/list", {})
    srv.request("ping")
    srv.close(timeout=5)
    first = short(srv.bad_lines[0], 80) if srv.bad_lines else ""
    check(not srv.bad_lines, f"{len(srv.bad_lines)} non-JSON line(s) on stdout, first: {first}")


@pytest.mark.e2e
@pytest.mark.req("MCP-STDIO-002")
def test_the_server_exits_cleanly_when_stdin_closes(fresh_process):
    fresh_process.initialize()
    started = time.monotonic()
    code = fresh_process.close(timeout=5)
    check(code == 0, f"exit status {code} after stdin closed ({time.monotonic() - started:.1f} s; None = killed after 5 s)")


@pytest.mark.e2e
@pytest.mark.req("MCP-MODERN-003")
def test_the_stateless_era_gives_the_same_tools_and_output(servers, contract_fixture, client, profile, names):
    # A profile's one ordinary call (generic-files: the mapping's read tool on the plain file;
    # a mapping without a read tool gives none, and only the tool lists are compared).
    sample = dict(profile.data.get("sample_call") or {"tool": None, "arguments": {}})
    if sample["tool"] is not None:
        sample["arguments"] = names.args(sample["tool"], sample["arguments"])
    srv = servers.handshake(contract_fixture)
    try:
        if "result" not in srv.request("server/discover", {"_meta": MODERN_META}):
            pytest.skip("server does not support the 2026-07-28 revision")
        listed = srv.request("tools/list", {"_meta": MODERN_META})
        modern_names = sorted(t["name"] for t in listed.get("result", {}).get("tools", []))
        check(modern_names == sorted(t["name"] for t in client.list_tools()),
              f"tools differ between eras: {modern_names}")
        if sample["tool"] not in modern_names:
            return  # not offered in this phase: the tool lists are what both eras must agree on
        _when_ready(lambda: client.call_tool(sample["tool"], sample["arguments"]), profile)
        response = srv.request("tools/call", {"name": sample["tool"], "arguments": sample["arguments"],
                                              "_meta": MODERN_META})
        modern_out = _era_output(response)
    finally:
        srv.close(timeout=3)
    classic_out = _era_output(client.call_tool(sample["tool"], sample["arguments"]))
    volatile = list(sample.get("volatile", []))
    if strip_volatile(modern_out, volatile) != strip_volatile(classic_out, volatile) and "volatile" not in sample:
        # No document names this call's volatile members (generic-files: the mapping's read
        # tool): what differs between two calls in the same era (a duration, a timestamp) is the
        # server's own, not the era's.
        again = _era_output(client.call_tool(sample["tool"], sample["arguments"]))
        volatile += _differing(classic_out, again)
    check(strip_volatile(modern_out, volatile) == strip_volatile(classic_out, volatile),
          "tool output differs between protocol eras" + (f" (beyond what differs from call to call: {volatile})"
                                                         if volatile else ""))


def _differing(one: Any, other: Any, path: str = "") -> list[str]:
    """The dotted paths (strip_volatile's) of the object members in which two outputs differ;
    the whole output ("" stripped as nothing: compared as it is) where they differ elsewhere."""
    if isinstance(one, dict) and isinstance(other, dict):
        return [found for key in sorted(set(one) | set(other))
                for found in (_differing(one.get(key), other.get(key), f"{path}.{key}" if path else key)
                              if key in one and key in other else [f"{path}.{key}" if path else key])]
    return [path] if one != other and path else []


def _when_ready(call, profile) -> None:
    """A server a mapping says indexes before it serves (`ready.seconds`): its ordinary call is
    repeated, a second apart, until it succeeds or that time is spent, before the eras are
    compared (a refusal while it indexes is no difference between them)."""
    seconds = ready_seconds(profile.data.get("mapping"))
    deadline = time.monotonic() + seconds
    while seconds and not called_ok(call()) and time.monotonic() + 1 < deadline:
        time.sleep(1)


def _era_output(response: dict[str, Any]) -> Any:
    """A successful call's output, as both eras must give it: its JSON where the tool answers in
    JSON (structuredContent, or one text block that parses), else its text blocks as they are (a
    tool may answer in plain text: MCP does not ask for JSON)."""
    result = result_of(response)
    if result is None or result.get("isError") or result.get("structuredContent") is not None:
        return tool_output(response)
    blocks = texts(result)
    if len(blocks) == 1:
        try:
            return json.loads(blocks[0])
        except ValueError:
            pass
    return {"text": blocks}


@pytest.mark.stress
@pytest.mark.req("MCP-SIZE-001")
def test_no_message_is_over_the_size_limit(server, client, servers):
    """Every message of every server this worker started so far, and a tools/list now, read
    against --max-message-bytes (a check whose own answer was too large is blocked by this
    requirement and files the finding itself)."""
    server.request("tools/list", {})
    with Findings() as findings:
        findings.held()  # every server's oversize records (kept as its messages were read) are read below
        for srv in [server, *[s for s in servers.started if s is not server]]:
            for record in getattr(srv, "oversize", []):
                findings.fail(f"a message of {record.size:,} bytes, over the {record.limit:,}-byte "
                              f"limit; it began: {short(record.prefix.decode('utf-8', 'replace'), 200)}")
