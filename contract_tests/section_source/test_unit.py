"""Unit tier: the tool's declared surface and the output allowlist."""

from __future__ import annotations

import pytest

from contract_tests.checks import check, tool_output
from contract_tests.section_source.common import TOOL, listed_tools, profiles_mark

pytestmark = [profiles_mark, pytest.mark.unit]

SECTION_FIELDS = ["section_id", "heading_id", "level", "heading_path", "heading_text",
                  "child_section_ids", "body_available", "body_returned", "snippet_returned"]
TOP_FIELDS = ["schema", "path", "title", "sections", "truncated"]


@pytest.fixture(scope="module")
def tool(client):
    tools = listed_tools(client)
    check(TOOL in tools, "SSL-TOOL-001", f"{TOOL} is not listed (listed: {sorted(tools)})")
    return tools[TOOL]


@pytest.fixture(scope="module")
def outputs(client, fixture_vault, tool):
    return {path: tool_output(client.call_tool(TOOL, {"path": path}), "SSL-OUT-001")
            for path in fixture_vault.notes}


@pytest.mark.req("SSL-TOOL-001")
def test_get_section_source_is_listed_with_a_description(tool):
    check((tool.get("description") or "").strip(), "SSL-TOOL-001", "the tool has no description")


@pytest.mark.req("SSL-TOOL-002")
def test_the_input_schema_requires_a_string_path(tool):
    schema = tool.get("inputSchema", {})
    check("path" in schema.get("required", []), "SSL-TOOL-002", "path is not required")
    check(schema.get("properties", {}).get("path", {}).get("type") == "string", "SSL-TOOL-002",
          "path is not declared as a string")


@pytest.mark.req("SSL-TOOL-003")
def test_the_input_schema_accepts_nothing_but_path(tool):
    schema = tool.get("inputSchema", {})
    extra = sorted(set(schema.get("properties", {})) - {"path"})
    check(not extra, "SSL-TOOL-003", f"extra input properties declared: {extra}")
    check(schema.get("additionalProperties") is False, "SSL-TOOL-003",
          "additionalProperties is not false")


@pytest.mark.req("SSL-OUT-001")
def test_the_top_level_has_exactly_the_five_fields(outputs):
    for path, out in outputs.items():
        check(sorted(out) == sorted(TOP_FIELDS), "SSL-OUT-001",
              f"{path}: top-level fields {sorted(out)}, expected {TOP_FIELDS}")


@pytest.mark.req("SSL-OUT-002")
def test_each_section_has_exactly_the_nine_fields(outputs):
    for path, out in outputs.items():
        for section in out.get("sections", []):
            check(sorted(section) == sorted(SECTION_FIELDS), "SSL-OUT-002",
                  f"{path}: section fields {sorted(section)}, expected the nine of SectionSource v0")


@pytest.mark.req("SSL-OUT-003")
def test_schema_is_the_section_source_v0_identifier(outputs, profile):
    for path, out in outputs.items():
        check(out.get("schema") == "knowtation.section_source/v0", "SSL-OUT-003",
              f"{path}: schema is {out.get('schema')!r}")


@pytest.mark.req("SSL-OUT-004")
def test_body_and_snippet_flags_are_always_false(outputs):
    for path, out in outputs.items():
        for section in out.get("sections", []):
            check(section.get("body_returned") is False and section.get("snippet_returned") is False,
                  "SSL-OUT-004", f"{path}: {section.get('heading_id')} has a body/snippet flag not false")
