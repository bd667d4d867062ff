"""Stress tier: the input and section caps, repetition, memory, pathological nesting."""

from __future__ import annotations

import json

import pytest

from contract_tests.section_source.common import TOOL, profiles_mark
from contract_tests.transport.stdio import NoResponse, ServerGone
from contract_tests.verdicts.checks import check, short, structured_error, tool_output

pytestmark = [profiles_mark, pytest.mark.stress]


@pytest.mark.req("SSL-STR-001")
def test_a_note_at_the_input_cap_is_answered_and_one_over_is_refused(server, client, fixture_vault, profile):
    at_cap = tool_output(server.call_tool(TOOL, {"path": fixture_vault.stress["cap_exact"]}, timeout=60))
    check(at_cap.get("sections"), "the note at the cap gave no sections")
    structured_error(server.call_tool(TOOL, {"path": fixture_vault.stress["cap_over"]}, timeout=60),
                     profile, "a note one character over the cap")


@pytest.mark.req("SSL-STR-002")
def test_more_than_the_section_cap_gives_exactly_the_cap_and_truncated(server, client, fixture_vault, profile):
    cap = profile.limits["max_sections"]
    out = tool_output(server.call_tool(TOOL, {"path": fixture_vault.stress["many_headings"]}, timeout=60))
    check(len(out["sections"]) == cap, f"{len(out['sections'])} sections, expected {cap}")
    check(out["truncated"] is True, "truncated is not true with more headings than the cap")
    ordinals = [int(s["heading_id"].rsplit("-", 1)[1]) for s in out["sections"]]
    check(ordinals == list(range(1, cap + 1)), "the kept sections are not the first ones")


@pytest.mark.req("SSL-STR-004")
def test_memory_stays_bounded_over_repeated_calls(server, client, profile):
    """1,000 calls on one note: resident memory grows less than the profile's limit."""
    n = profile.limits["repeat_calls"]
    rss = []
    for i in range(n):
        server.call_tool(TOOL, {"path": "notes/alpha.md"})
        if i in (99, n - 1):
            rss.append(server.rss_kib())
    if None in rss:
        pytest.skip("the server's resident memory cannot be read (no /proc, or --server-url)")
    growth_mib = (rss[1] - rss[0]) / 1024
    check(growth_mib < profile.limits["rss_growth_mib"],
          f"resident memory grew {growth_mib:.1f} MiB over {n - 100} calls")


@pytest.mark.req("SSL-STR-005")
def test_output_is_bounded_by_the_section_cap_and_the_notes_text(server, client, fixture_vault, profile):
    path = fixture_vault.stress["many_headings"]
    size = (fixture_vault.vault / path).stat().st_size
    response = server.call_tool(TOOL, {"path": path}, timeout=60)
    out = tool_output(response)
    encoded = len(json.dumps(out))
    # Per section: fixed field names plus ids and texts that come from the heading itself.
    bound = profile.limits["max_sections"] * 600 + 4 * size
    check(encoded <= bound, f"output of {encoded} bytes for a {size}-byte note exceeds {bound}")


@pytest.mark.req("SSL-STR-005")
@pytest.mark.parametrize("role", ["nested_quotes", "nested_emphasis"])
def test_pathological_nesting_gets_a_result_or_clean_error_and_the_server_stays_up(
        servers, fixture_vault, profile, role):
    srv = servers.start(fixture_vault)
    try:
        srv.initialize()
        try:
            response = srv.call_tool(TOOL, {"path": fixture_vault.stress[role]}, timeout=60)
        except (NoResponse, ServerGone) as exc:
            check(False, f"{role}: no answer ({exc})")
        result = response.get("result")
        if result is not None and result.get("isError"):
            structured_error(response, profile, role)
        elif result is None:
            check("error" in response, f"{role}: malformed response {short(response)}")
        # Alive: an ordinary call is answered (not `ping`, which some servers do not offer).
        try:
            alive = srv.call_tool(TOOL, {"path": "inbox/example.md"}, timeout=10)
        except (NoResponse, ServerGone) as exc:
            check(False, f"{role}: the server stopped answering ({exc})")
        check("result" in alive or "error" in alive, f"{role}: server stopped answering")
    finally:
        srv.close(timeout=3)
