"""The tool surface, for every profile: the profile's tools listed (and described), their input
schemas, declared output schemas honoured, blocked surfaces absent, resources and prompts
that expose nothing they must not, and prompt-injection text returned as inert data."""

from __future__ import annotations

import re
from typing import Any

import pytest

from contract_tests.concerns.common import render, run, sweep_calls
from contract_tests.contracts import specs as contracts
from contract_tests.contracts.specs import policy
from contract_tests.synthetic import canaries
from contract_tests.verdicts.checks import (
    called_ok,
    check_structured,
    output_validators,
    schema_errors,
    short,
    tool_output,
    values_at,
)
from contract_tests.verdicts.findings import Findings, describe_call, esc


def _surface(profile) -> dict[str, Any]:
    return profile.concerns.get("surface", {})


def _listed(client) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in client.list_tools()}


def cases_test_the_profiles_tools_are_listed(profile):
    spec = _surface(profile).get("listed")
    return [(spec["req"], spec, spec["req"])] if spec else []


def test_the_profiles_tools_are_listed(case, client, profile):
    listed = _listed(client)
    with Findings() as findings:
        for name in profile.required_tools:
            if not findings.check(name in listed, f"{name} is not listed (listed: {sorted(listed)})", req=case["req"]):
                continue
            if case.get("described"):
                findings.check((listed[name].get("description") or "").strip(), f"{name} has no description",
                               req=case["req"])


def cases_test_input_schemas_declare_what_the_seed_fixes(profile):
    """One case per tool; a property beyond `only` is a case of its own when the spec reports it
    under another requirement (`only_req`, e.g. an advisory), so neither verdict hides the other."""
    out = []
    for spec in _surface(profile).get("inputs", []):
        own = spec.get("only_req")
        if own and "only" in spec:
            out.append((spec["req"], {k: v for k, v in spec.items() if k not in ("only", "only_req")},
                        f"{spec['req']}-{spec['tool']}"))
            out.append((own, {"req": own, "tool": spec["tool"], "only": spec["only"], "after": spec["req"]},
                        f"{own}-{spec['tool']}"))
        else:
            out.append((spec["req"], spec, f"{spec['req']}-{spec['tool']}"))
    return out


def test_input_schemas_declare_what_the_seed_fixes(case, client):
    req, name = case["req"], case["tool"]
    tool = _listed(client).get(name)
    with Findings() as findings:
        schema = (tool or {}).get("inputSchema") or {}
        props = schema.get("properties") or {}
        if case.get("after") and not (tool is not None and schema.get("type") == "object" and isinstance(props, dict)):
            # Only the properties beyond the seed's are this case's: what the tool and its schema
            # lack is the seed case's finding.
            findings.block(f"{name} is not listed with an object inputSchema (see {case['after']})", req=req,
                           by=case["after"])
            return
        if not findings.check(tool is not None, f"{name} is not listed", req=req):
            return
        if not findings.check(schema.get("type") == "object" and isinstance(props, dict),
                              f"{name}: the inputSchema is not an object schema with properties", req=req):
            return
        for param, kind in case.get("requires", {}).items():
            findings.check(param in schema.get("required", []), f"{name}: {param} is not required", req=req)
            findings.check(props.get(param, {}).get("type") == kind, f"{name}: {param} is not declared as {kind}",
                           req=req)
        for param in case.get("declares", []):
            findings.check(param in props, f"{name}: the inputSchema does not declare {param}", req=req)
        if "only" in case:
            extra = sorted(set(props) - set(case["only"]))
            findings.check(not extra, f"{name}: declares properties besides {case['only']}: {extra}", req=req)
        if case.get("closed"):
            findings.check(schema.get("additionalProperties") is False, f"{name}: additionalProperties is not false",
                           req=req)


def cases_test_parameters_the_suite_drives_are_found(profile):
    spec = _surface(profile).get("parameters")
    return [(spec["req"], spec, spec["req"])] if spec else []


def test_parameters_the_suite_drives_are_found(case, names):
    with Findings() as findings:
        findings.held(req=case["req"])  # every parameter the suite drives was looked up in tools/list
        for problem in names.problems:
            findings.fail(problem, req=case["req"])


def cases_test_declared_output_schemas_are_honoured(profile):
    return [("MCP-TOOLS-004", None, "MCP-TOOLS-004")] if profile.concerns.get("sweep") else []


def test_declared_output_schemas_are_honoured(case, server, client, contract_fixture, profile, names):
    """Every tool that declares an outputSchema returns structuredContent valid against it."""
    req = "MCP-TOOLS-004"
    listed = _listed(client)
    with Findings() as findings:
        validators = output_validators(findings, {name: tool["outputSchema"] for name, tool in listed.items()
                                                  if tool.get("outputSchema") is not None}, req=req)
        calls = [c for c in sweep_calls(profile, contract_fixture, names, contract_fixture.items()[:30])
                 if c[0] in validators]
        if not validators and not findings.items:
            pytest.skip("no tool declares an outputSchema: there is no structured result to hold to one")
        for (name, args), response in zip(calls, run(server, calls)):
            check_structured(findings, validators[name], name, response, req=req, request=describe_call(name, args))


def _by_role(spec: dict[str, Any], key: str) -> list[tuple[str, dict[str, Any], str]]:
    """A spec's case, or one case per role when it names `roles` (a session per role's token)."""
    roles = spec.get("roles")
    if not roles:
        return [(spec["req"], spec, key)]
    return [(spec["req"], {**spec, "role": role}, f"{key}-{role}") for role in roles]


def _as_role(case, findings: Findings, servers, server, fixture):
    """The case's view of the server: None for the client under test; else a new initialized
    session with the fixture's token for the case's role (closed by the caller). A refused
    session is "refused" for a role the case may see refused (an unknown one: refusing grants
    nothing); for another role the case is blocked by the requirement that gives it a session."""
    role = case.get("role")
    if role is None:
        return None
    conn = servers.session(server, fixture, fixture.token(role))
    response = conn.initialize()
    if "result" in response:
        conn.rc_capabilities = response["result"].get("capabilities") or {}
        return conn
    conn.close()
    if role in case.get("refusable", []):
        return "refused"
    findings.block(f"role {role}: the session was not initialized ({short(response.get('error') or response)})",
                   req=case["req"], by=case["by"])
    return "blocked"


def _role_tools(conn) -> list[dict[str, Any]]:
    return (conn.request("tools/list", {}).get("result") or {}).get("tools", [])


def cases_test_no_blocked_tool_is_listed(profile):
    return [c for spec in _surface(profile).get("blocked", []) for c in _by_role(spec, spec["req"])]


def test_no_blocked_tool_is_listed(case, client, profile, servers, server, contract_fixture):
    surfaces = policy(case["policy"])["tools"][case["group"]]
    allowed = set(profile.required_tools + profile.adjacent_tools)
    if case.get("declared_extras_allowed"):
        allowed |= set(contracts.DECLARATION.get("extra_tools", []))
    with Findings() as findings:
        conn = _as_role(case, findings, servers, server, contract_fixture)
        if isinstance(conn, str):
            return
        try:
            listed = _listed(client) if conn is None else {t.get("name"): t for t in _role_tools(conn)}
        finally:
            if conn is not None:
                conn.close()
        who = f"role {case['role']}: " if "role" in case else ""
        findings.held(req=case["req"])  # the listing is in hand: every name of it is read below
        for name in sorted(listed, key=str):
            if name in surfaces.get("names", []):
                findings.fail(f"{who}blocked tool listed: {name}", req=case["req"])
                continue
            hits = [p for p in surfaces.get("patterns", []) if re.search(p, str(name), re.IGNORECASE)]
            if hits and name not in allowed:
                findings.fail(f"{who}tool {name} matches the blocked pattern {hits[0]}", req=case["req"])


def _matches(patterns: list[str], *texts: Any) -> list[str]:
    return [p for p in patterns for t in texts if isinstance(t, str) and re.search(p, t, re.IGNORECASE)]


def _listing(conn, client, method: str, key: str) -> list[dict[str, Any]]:
    if conn is None:
        return {"resources/list": client.list_resources, "resources/templates/list": client.list_resource_templates,
                "prompts/list": client.list_prompts}[method]()
    return (conn.request(method, {}).get("result") or {}).get(key, [])


def cases_test_no_resource_exposes_what_the_seed_blocks(profile):
    spec = _surface(profile).get("resources")
    return _by_role(spec, spec["req"]) if spec else []


def test_no_resource_exposes_what_the_seed_blocks(case, server, client, servers, contract_fixture):
    """Listed resources and templates (when the server declares resources), and reads of
    guessed URIs (always: an undeclared capability must not serve content either). With
    `no_reads`, a guessed read must not reach the fixture's store either."""
    req, rules = case["req"], policy(case["policy"])["resources"]
    with Findings() as findings:
        conn = _as_role(case, findings, servers, server, contract_fixture)
        if isinstance(conn, str):
            return
        who = f"role {case['role']}: " if "role" in case else ""
        try:
            if "resources" in (client.capabilities if conn is None else conn.rc_capabilities):
                for res in _listing(conn, client, "resources/list", "resources"):
                    hits = _matches(rules["forbidden_patterns"], res.get("uri"), res.get("name"), res.get("description"))
                    findings.check(not hits, f"{who}resource {esc(res.get('uri'))} matches {hits}", req=req)
                for tpl in _listing(conn, client, "resources/templates/list", "resourceTemplates"):
                    hits = _matches(rules["forbidden_patterns"], tpl.get("uriTemplate"), tpl.get("name"))
                    findings.check(not hits, f"{who}resource template {esc(tpl.get('uriTemplate'))} matches {hits}",
                                   req=req)
            for uri in rules["probe_uris"]:
                with contract_fixture.reading() as reads:
                    response = (server if conn is None else conn).request("resources/read", {"uri": uri})
                leaks = canaries.scan_lines([str(response["result"])], contract_fixture.canaries, "results",
                                            [c for c in ("body", "code", "frontmatter")
                                             if c in contract_fixture.canaries]) if "result" in response else []
                findings.check("result" not in response or not leaks and not response["result"].get("contents"),
                               f"{who}resources/read {uri} returned content", req=req)
                if case.get("no_reads"):
                    findings.check(not reads.locations, f"{who}resources/read {uri} reached the store: "
                                   f"{esc(reads.locations[:3])}", req=req)
        finally:
            if conn is not None:
                conn.close()


def cases_test_no_prompt_exposes_what_the_seed_blocks(profile):
    spec = _surface(profile).get("prompts")
    return _by_role(spec, spec["req"]) if spec else []


def test_no_prompt_exposes_what_the_seed_blocks(case, client, servers, server, contract_fixture):
    patterns = policy(case["policy"])["prompts"]["forbidden_patterns"]
    with Findings() as findings:
        conn = _as_role(case, findings, servers, server, contract_fixture)
        if isinstance(conn, str):
            return
        who = f"role {case['role']}: " if "role" in case else ""
        try:
            declared = "prompts" in (client.capabilities if conn is None else conn.rc_capabilities)
            # Undeclared, prompts/list is still asked (an error is nothing listed): what a server
            # lists without declaring it is exposed all the same.
            listing = _listing(conn, client, "prompts/list", "prompts") if declared else _prompts_anyway(conn, client)
            findings.held(req=case["req"])  # the listing is in hand: every prompt of it is read below
            for prompt in listing:
                hits = _matches(patterns, prompt.get("name"), prompt.get("description"))
                findings.check(not hits, f"{who}prompt {esc(prompt.get('name'))} matches {hits}", req=case["req"])
        finally:
            if conn is not None:
                conn.close()


def _prompts_anyway(conn, client) -> list[Any]:
    """What prompts/list answers from a server that declared no prompts capability (an error, as
    it should, is an empty list)."""
    if conn is None:
        from mcp.shared.exceptions import MCPError
        try:
            return client.list_prompts()
        except MCPError:  # a JSON-RPC error: nothing listed
            return []
    return (conn.request("prompts/list", {}).get("result") or {}).get("prompts", [])


def cases_test_prompt_injection_text_comes_back_inert(profile):
    spec = _surface(profile).get("injection")
    return [(spec["req"], spec, spec["req"])] if spec else []


def test_prompt_injection_text_comes_back_inert(case, server, client, contract_fixture, profile, names):
    """The injection note's headings come back verbatim as data, with nothing else changed:
    the same fields, and one read of that note only."""
    req = case["req"]
    tool = case["call"]["tool"]
    args = names.args(tool, render(case["call"]["arguments"], {}))
    with contract_fixture.reading() as reads:
        response = server.call_tool(tool, args)
    request = describe_call(tool, args)
    with Findings() as findings:
        if not called_ok(response):
            findings.fail(f"the call on the injection note failed: {short(response, 200)}", req=req, request=request)
            return
        out = tool_output(response, req=req)
        if tool in profile.data["schemas"].get("outputs", {}):
            errors = schema_errors(profile.output_validator(tool), out)
            findings.check(not errors, f"the output violates the allowlist: {errors[:2]}", req=req, request=request)
        got = values_at(out, case["texts"])
        findings.check(got == list(contract_fixture.injection_texts),
                       f"the injection headings did not come back verbatim: {esc(got, 300)}", req=req, request=request)
        for pointer, value in case.get("constants", {}).items():
            values = values_at(out, pointer)
            findings.check(all(v == value for v in values), f"{pointer} is not {value} in every entry", req=req,
                           request=request)
        if reads.seen:
            items = reads.items(case.get("root", "vault"))
            findings.check(reads.locations and not reads.outside(case.get("root", "vault")) and len(set(items)) <= 1,
                           f"the call read {esc(reads.locations[:4])}, not the note alone", req=req, request=request)
