"""Security tier: refused arguments, what errors and results may carry, generated Markdown.
(Path attacks, leak sweeps, blocked surfaces, prompt injection: contract_tests/concerns.)"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract_tests.section_source.common import TOOL, attacks, body_free_tools, forbidden, profiles_mark
from contract_tests.synthetic import canaries
from contract_tests.synthetic.corpus import attack_path
from contract_tests.verdicts.checks import error_texts, keys_of, not_a_failure, schema_errors, short, tool_output
from contract_tests.verdicts.findings import Findings, describe_call

pytestmark = [profiles_mark, pytest.mark.security]

FUZZ = settings(max_examples=120, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.req("SSL-IN-003")
def test_malformed_or_extra_arguments_are_refused(server, client):
    with Findings() as findings:
        for entry in attacks()["arguments"]:
            if not findings.wants(entry["id"]):
                continue
            response = server.call_tool(TOOL, entry["arguments"])
            findings.check(not_a_failure(response) is None, f"expected a failure, got {not_a_failure(response)}",
                           case=entry["id"], request=describe_call(TOOL, entry["arguments"]))


def _value_patterns():
    return [(p["id"], re.compile(p["pattern"])) for p in forbidden()["forbidden_value_patterns"]]


@pytest.mark.req("SSL-ERR-004")
def test_errors_carry_no_content_frontmatter_or_absolute_paths(server, client, fixture_vault):
    requests = [attack_path(e, fixture_vault.placeholders()) for e in attacks()["paths"]]
    requests += ["inbox/missing.md", fixture_vault.stress["cap_over"]]
    classes = ("body", "code", "frontmatter", "path", "outside")
    with Findings() as findings:
        for path in requests:
            response = server.call_tool(TOOL, {"path": path})
            if not_a_failure(response):
                continue
            request = describe_call(TOOL, {"path": path})
            for text in error_texts(response, "error"):
                for pid, pattern in _value_patterns():
                    findings.check(not pattern.search(text), f"an error message matches {pid}: {short(text, 80)}",
                                   request=request)
                leaks = canaries.scan_text(text, fixture_vault.canaries, "error", classes)
                findings.check(not leaks, f"an error carries private content: {leaks[0] if leaks else ''}",
                               request=request)


@pytest.fixture(scope="module")
def every_output(client, fixture_vault, profile):
    outputs = []
    for name in body_free_tools(client, profile):
        for path in fixture_vault.notes:
            outputs.append((name, path, tool_output(client.call_tool(name, {"path": path}), req="SSL-OUT-007")))
    return outputs


@pytest.mark.req("SSL-OUT-007")
def test_no_excluded_field_appears_in_any_result(every_output, profile):
    banned = set(forbidden()["forbidden_keys"])
    with Findings() as findings:
        for name, path, out in every_output:
            keys = keys_of(out) & banned
            findings.check(not keys, f"{name} returned excluded fields {sorted(keys)}", case=path)
            if name in profile.data["schemas"]["outputs"]:
                errors = schema_errors(profile.output_validator(name), out)
                findings.check(not errors, f"{name} violates its allowlist: {errors[:2]}", case=path)


def _non_heading_strings(out) -> list[str]:
    return [str(out.get(k)) for k in ("schema", "path") if k in out]


@pytest.mark.req("SSL-RES-002")
def test_no_resource_uri_appears_in_any_output(every_output):
    uri = re.compile(next(p["pattern"] for p in forbidden()["forbidden_value_patterns"] if p["id"] == "resource-uri"))
    with Findings() as findings:
        for name, path, out in every_output:
            keys = keys_of(out) & {"uri", "resource_uri", "resourceUri"}
            findings.check(not keys, f"{name} has URI fields {sorted(keys)}", case=path)
            for text in _non_heading_strings(out):
                findings.check(not uri.search(text), f"{name} returns a URI: {short(text, 60)}",
                               case=path)


HEADING = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=30)
BLOCK = st.one_of(
    st.builds(lambda lvl, t: "#" * lvl + " " + t, st.integers(1, 7), HEADING),
    st.builds(lambda t: t + "\n" + "=" * 3, HEADING),
    st.just("```\n# not a heading {body}\n```"),
    st.just("> quoted {body}"), st.just("- item {body}"), st.just("para {body} text"),
    st.just("    code {body}"), st.just("---"), st.just("<div>{body}</div>"),
)


@pytest.mark.req("SSL-SEC-005")
def test_generated_markdown_gives_allowlisted_body_free_output(client, fixture_vault, profile):
    validator = profile.output_validator(TOOL)
    token = fixture_vault.canaries["body"]
    counter = iter(range(1_000_000))

    @FUZZ
    @given(st.lists(BLOCK, max_size=12))
    def probe(blocks):
        path = f"generated/note-{next(counter)}.md"
        fixture_vault.write(path, "\n\n".join(blocks).replace("{body}", token) + "\n")
        out = tool_output(client.call_tool(TOOL, {"path": path}))
        with Findings() as findings:
            errors = schema_errors(validator, out)
            findings.check(not errors, f"output violates the allowlist: {errors[:2]}", case=path)
            findings.check(token not in json.dumps(out).lower(), "body text in output", case=path)

    probe()
