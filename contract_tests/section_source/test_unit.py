"""Unit tier: the output allowlist on every fixture note (the tool surface is a shared concern)."""

from __future__ import annotations

import pytest

from contract_tests.section_source.common import TOOL, profiles_mark
from contract_tests.verdicts.checks import tool_output
from contract_tests.verdicts.findings import Findings

pytestmark = [profiles_mark, pytest.mark.unit]

SECTION_FIELDS = ["section_id", "heading_id", "level", "heading_path", "heading_text",
                  "child_section_ids", "body_available", "body_returned", "snippet_returned"]
TOP_FIELDS = ["schema", "path", "title", "sections", "truncated"]


@pytest.fixture(scope="module")
def outputs(client, fixture_vault):
    return {path: tool_output(client.call_tool(TOOL, {"path": path}), req="SSL-OUT-001")
            for path in fixture_vault.notes}


@pytest.mark.req("SSL-OUT-001")
def test_the_top_level_has_exactly_the_five_fields(outputs):
    with Findings() as findings:
        for path, out in outputs.items():
            findings.check(sorted(out) == sorted(TOP_FIELDS), f"top-level fields {sorted(out)}, expected {TOP_FIELDS}",
                           case=path)


@pytest.mark.req("SSL-OUT-002")
def test_each_section_has_exactly_the_nine_fields(outputs):
    with Findings() as findings:
        for path, out in outputs.items():
            bad = [sorted(s) for s in out.get("sections", []) if sorted(s) != sorted(SECTION_FIELDS)]
            findings.check(not bad, f"section fields {bad[0] if bad else ''}, expected the nine of "
                           "SectionSource v0", case=path)


@pytest.mark.req("SSL-OUT-003")
def test_schema_is_the_section_source_v0_identifier(outputs):
    with Findings() as findings:
        for path, out in outputs.items():
            findings.check(out.get("schema") == "knowtation.section_source/v0", f"schema is {out.get('schema')!r}",
                           case=path)


@pytest.mark.req("SSL-OUT-004")
def test_body_and_snippet_flags_are_always_false(outputs):
    with Findings() as findings:
        for path, out in outputs.items():
            bad = [s.get("heading_id") for s in out.get("sections", [])
                   if s.get("body_returned") is not False or s.get("snippet_returned") is not False]
            findings.check(not bad, f"{bad[:3]} have a body or snippet flag not false", case=path)
