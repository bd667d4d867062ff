"""Assertions shared by suite tests. Every failure names the requirement id and what was
seen, never private content (excerpts go through canary redaction)."""

from __future__ import annotations

import json
from typing import Any, NoReturn

from jsonschema import Draft202012Validator

from contract_tests.verdicts.findings import Finding, RequirementFailure, difference, esc
from contract_tests.verdicts.running import _checked, own


def fail(message: str, *, req: str | None = None, case: str | None = None, request: str | None = None) -> NoReturn:
    req = own(req)
    _checked(req, case)
    raise RequirementFailure([Finding(req, message, case, request)])


def check(condition: Any, message: str, *, req: str | None = None, case: str | None = None,
          request: str | None = None) -> None:
    """`condition` must hold for `req` (a check of it ran: the report counts it)."""
    req = own(req)
    _checked(req, case)
    if not condition:
        fail(message, req=req, case=case, request=request)


def short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return esc(text, limit)


def result_of(response: dict[str, Any]) -> dict[str, Any] | None:
    """The CallToolResult of a raw response (None for a JSON-RPC error); SDK dicts pass through."""
    if "jsonrpc" in response:
        return response.get("result")
    return response


def texts(result: dict[str, Any]) -> list[str]:
    return [block.get("text", "") for block in result.get("content", []) if block.get("type") == "text"]


def payload(result: dict[str, Any], *, req: str | None = None) -> Any:
    """The JSON a tool returned: structuredContent, else its single text block parsed."""
    req = own(req)
    blocks = texts(result)
    structured = result.get("structuredContent")
    if structured is not None:
        for text in blocks:
            try:
                parsed = json.loads(text)
            except ValueError:
                continue
            check(parsed == structured, "text block and structuredContent disagree", req=req)
        return structured
    check(len(blocks) == 1, f"expected one JSON text block, got {len(blocks)} text blocks", req=req)
    try:
        return json.loads(blocks[0])
    except ValueError:
        fail(f"tool output is not JSON: {short(blocks[0])}", req=req)


def tool_output(response: dict[str, Any], *, req: str | None = None) -> Any:
    """Assert a successful tool result and return its JSON."""
    req = own(req)
    result = result_of(response)
    if result is None:
        fail(f"expected a tool result, got JSON-RPC error {short(response.get('error'))}", req=req)
    check(not result.get("isError"), f"expected success, got isError: {short(texts(result))}", req=req)
    return payload(result, req=req)


def error_texts(response: dict[str, Any], what: str, *, req: str | None = None) -> list[str]:
    """Assert the call failed (isError result or JSON-RPC error); return every error text."""
    req = own(req)
    result = result_of(response)
    if result is None:  # a JSON-RPC error: the call failed (a check of it, held)
        check(isinstance(response.get("error"), dict), f"{what}: expected a failure, got {short(response, 200)}",
              req=req)
        error = response["error"]
        return [str(error.get("message", "")), json.dumps(error.get("data", ""), ensure_ascii=False)]
    check(result.get("isError") is True, f"{what}: expected a failure, got a successful result", req=req)
    return texts(result)


def output_validators(findings: Any, schemas: dict[str, Any], *, req: str | None = None,
                      case: Any = None) -> dict[str, Draft202012Validator]:
    """A validator per tool's declared outputSchema (MCP-TOOLS-004); an outputSchema that is not
    valid JSON Schema is a finding (`case(name)` names its case, when given)."""
    from jsonschema.exceptions import SchemaError
    out = {}
    for name, schema in sorted(schemas.items()):
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            findings.fail(f"{name}: the outputSchema is not a valid JSON Schema: {short(exc.message)}", req=req,
                          case=case(name) if case else None)
            continue
        out[name] = Draft202012Validator(schema)
    return out


def check_structured(findings: Any, validator: Draft202012Validator, name: str, response: dict[str, Any], *,
                     req: str | None = None, case: str | None = None, request: str | None = None) -> None:
    """A successful result of a tool that declares an outputSchema carries structuredContent that
    validates against it (MCP-TOOLS-004); a failed call is not checked."""
    if not called_ok(response):
        return
    structured = response["result"].get("structuredContent")
    if not findings.check(structured is not None, f"{name} declares an outputSchema but returned no "
                          "structuredContent", req=req, case=case, request=request):
        return
    errors = schema_errors(validator, structured)
    findings.check(not errors, f"{name}: structuredContent violates its outputSchema: {errors[:2]}", req=req,
                   case=case, request=request)


def not_json_rpc(lines: list[str]) -> list[str]:
    """The non-blank lines that are not a valid JSON-RPC message (MCP-RPC-003)."""
    import mcp_types as types
    adapter = types.jsonrpc_message_adapter
    bad = []
    for line in lines:
        if not line.strip():
            continue
        try:
            adapter.validate_json(line, by_name=False)
        except ValueError:
            bad.append(line)
    return bad


def schema_errors(validator: Draft202012Validator, value: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:200]}"
            for e in sorted(validator.iter_errors(value), key=str)]


def first_difference(expected: Any, actual: Any, where: str = "$") -> str | None:
    """Where two JSON values first differ (a short description), or None when equal."""
    if type(expected) is not type(actual):
        return f"{where}: expected {short(expected, 60)}, got {short(actual, 60)}"
    if isinstance(expected, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual or key not in expected:
                return f"{where}.{key}: present on one side only"
            diff = first_difference(expected[key], actual[key], f"{where}.{key}")
            if diff:
                return diff
    elif isinstance(expected, list):
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} items, got {len(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            diff = first_difference(e, a, f"{where}[{i}]")
            if diff:
                return diff
    elif isinstance(expected, str) and expected != actual:
        return f"{where}: strings {difference(expected, actual)}"
    elif expected != actual:
        return f"{where}: expected {short(expected, 60)}, got {short(actual, 60)}"
    return None


def keys_of(value: Any) -> set[str]:
    """Every object key at any depth of a JSON value."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.update(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def check_vector(out: dict[str, Any], vector: dict[str, Any], validator: Draft202012Validator, *,
                 req: str | None = None) -> None:
    """Assert a tool output is allowlisted and equals a golden vector's expected output
    (fields the vector marks implementation-defined are not compared)."""
    req = own(req)
    errors = schema_errors(validator, out)
    check(not errors, f"{vector['id']}: output violates the allowlist: {errors[:3]}", req=req)
    expected = dict(vector["expected"])
    out = dict(out)
    for name in vector.get("implementation_defined", []):
        expected.pop(name, None)
        out.pop(name, None)
    diff = first_difference(expected, out)
    check(diff is None, f"{vector['id']} ({vector['description']}): {diff}", req=req)


def json_pointer(document: Any, pointer: str) -> Any:
    """The value at an RFC 6901 pointer ("" is the whole document); KeyError if absent."""
    node = document
    if not pointer:
        return node
    for raw in pointer.lstrip("/").split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise KeyError(pointer)
    return node


def _error_document(response: dict[str, Any]) -> tuple[str, Any]:
    """(channel, the JSON document of a failed call): an isError result's JSON text, or a
    JSON-RPC error's data. The document is None when there is none to parse."""
    result = result_of(response)
    if result is None:
        return "jsonrpc", (response.get("error") or {}).get("data")
    for text in texts(result):
        try:
            return "tool_result", json.loads(text)
        except ValueError:
            continue
    return "tool_result", result.get("structuredContent")


def values_at(value: Any, pattern: str) -> list[Any]:
    """Values at a pointer with `*` for every list item (e.g. /sections/*/heading_text)."""
    nodes = [value]
    for part in pattern.lstrip("/").split("/"):
        nxt = []
        for node in nodes:
            if part == "*" and isinstance(node, list):
                nxt.extend(node)
            else:
                try:
                    nxt.append(json_pointer(node, "/" + part))
                except KeyError:
                    continue
        nodes = nxt
    return nodes


def called_ok(response: dict[str, Any]) -> bool:
    """True for a successful tool result (not isError, not a JSON-RPC error, not an HTTP refusal)."""
    return not_a_failure(response) == "a successful result"


def not_a_failure(response: dict[str, Any]) -> str | None:
    """Why a response is not a failure the suite can read (a successful result, an HTTP
    refusal without a JSON-RPC answer), or None when it is a failure."""
    if "rc_http_status" in response:
        return f"HTTP {response['rc_http_status']} with no JSON-RPC answer"
    result = result_of(response)
    if result is not None and not result.get("isError"):
        return "a successful result"
    if result is None and "error" not in response:
        return "neither a result nor an error"
    return None


def structured_error(response: dict[str, Any], profile: Any, what: str, *,
                     req: str | None = None, request: str | None = None, case: str | None = None) -> Any:
    """Assert a failed call carries the profile's structured error document on an accepted
    channel (the declared one, if the implementation declared it); return the document.

    The one error assertion of the suite: it reads the profile's `errors` spec (schema, code
    pointer, channels), never a fixed shape."""
    req = own(req)
    spec = profile.errors
    problem = not_a_failure(response)
    if problem:
        fail(f"{what}: expected a failure, got {problem}", req=req, case=case, request=request)
    channel, document = _error_document(response)
    accepted = profile.error_channels
    check(channel in accepted, f"{what}: the error came as {channel.replace('_', ' ')}; accepted: "
          f"{', '.join(accepted)}", req=req, case=case, request=request)
    if document is None:
        fail(f"{what}: the failure carries no JSON error document ({channel}): {short(response, 200)}", req=req,
             case=case, request=request)
    errors = schema_errors(validator_for(spec["schema"]), document)
    check(not errors, f"{what}: the error document does not match the profile's error schema: {errors[:2]}", req=req,
          case=case, request=request)
    return document


def error_code(document: Any, profile: Any) -> str | None:
    """The code of an error document: at the profile's code pointer (the first of its pointers
    that holds a string, where the seed leaves the object's place open)."""
    pointers = profile.errors["code"]
    for pointer in [pointers] if isinstance(pointers, str) else pointers:
        try:
            value = json_pointer(document, pointer)
        except KeyError:
            continue
        if isinstance(value, str):
            return value
    return None


def validator_for(name: str) -> Draft202012Validator:
    from contract_tests.contracts.specs import validator
    return validator(name)
