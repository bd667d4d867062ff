"""Unit tier: the output allowlist (phase 1L; the declared surface is a shared concern)."""

from __future__ import annotations

import pytest

from contract_tests.section_source_hosted.common import TOOL, profiles_mark
from contract_tests.verdicts.checks import check, schema_errors, tool_output

pytestmark = [profiles_mark, pytest.mark.unit]

SECTION_FIELDS = {"section_id", "heading_id", "level", "heading_path", "heading_text",
                  "child_section_ids", "body_available", "body_returned", "snippet_returned"}
TOP_FIELDS = {"schema", "path", "title", "sections", "truncated"}


@pytest.mark.req("SSH-OUT-001")
def test_every_result_is_exactly_body_free_section_source_v0(client, contract_fixture, profile):
    validator = profile.output_validator(TOOL)
    for path in contract_fixture.notes:
        out = tool_output(client.call_tool(TOOL, {"path": path}))
        errors = schema_errors(validator, out)
        check(not errors, f"{path}: output violates the allowlist: {errors[:3]}")
        check(set(out) == TOP_FIELDS, f"{path}: top-level fields {sorted(out)}")
        check(out["schema"] == "knowtation.section_source/v0", f"{path}: schema {out['schema']!r}")
        for section in out["sections"]:
            check(set(section) == SECTION_FIELDS, f"{path}: section fields {sorted(section)}")
            check(section["body_returned"] is False and section["snippet_returned"] is False,
                  f"{path}: body_returned/snippet_returned not false")
