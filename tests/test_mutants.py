"""Every policy the suite guards is proved by a mutant the suite catches, by requirement id."""

from __future__ import annotations

import pytest

from tests.conftest import mutant_command, mutant_suite_args

# mutant -> requirement ids the suite must report as failed
CAUGHT_BY = {
    "body_in_output": ["SSL-OUT-002", "SSL-SEC-001", "SSL-E2E-002"],
    "snippet_field": ["SSL-OUT-001", "SSL-OUT-007"],
    "frontmatter_in_output": ["SSL-SEC-002"],
    "absolute_path_in_error": ["SSL-ERR-004", "SSL-SEC-003"],
    "unsafe_path_echoed": ["SSL-ERR-005"],
    "traversal_resolved": ["SSL-IN-005", "SSL-IN-007"],
    "symlink_followed": ["SSL-IN-006"],
    "sibling_prefix_accepted": ["SSL-IN-006", "SSL-IN-008"],
    "extra_input_accepted": ["SSL-TOOL-003", "SSL-IN-003"],
    "vault_scan": ["SSL-PERF-001", "SSL-PERF-002"],
    "cache_file_written": ["SSL-DI-002"],
    "sidecar_in_vault": ["SSL-DI-001"],
    "stale_cache": ["SSL-DI-003"],
    "caps_ignored": ["SSL-STR-001", "SSL-STR-002"],
    "unstable_ids": ["SSL-STR-003", "SSL-OUT-005"],
    "resource_registered": ["SSL-RES-001"],
    "error_reveals_more": ["SSL-ERR-003"],
    "blocked_tool": ["SSL-BLK-001"],
    "stdout_log": ["MCP-STDIO-001"],
    "http_origin_unchecked": ["MCP-HTTP-004"],
    "http_binds_all_interfaces": ["MCP-HTTP-005"],
    "rt_wrong_ordering": ["RT-SRCH-001"],
    "rt_nondeterministic_order": ["RT-SRCH-005", "RT-SRCH-001"],
    "rt_limit_not_applied": ["RT-SRCH-003"],
    "rt_hidden_listed": ["RT-VIS-001"],
    "rt_gitignore_ignored": ["RT-VIS-002"],
    "rt_traversal_accepted": ["RT-PATH-001", "RT-PATH-002", "RT-PATH-004"],
    "rt_cross_root_escape": ["RT-PATH-003"],
    "rt_snippet_not_clamped": ["RT-SNIP-002"],
    "rt_content_in_logs": ["RT-LOG-001"],
    "rt_starts_with_missing_root": ["RT-CFG-001", "RT-CFG-002"],
    "rt_absolute_path_in_error": ["RT-OUT-001"],
    "rt_index_written": ["RT-RO-001"],
    "rt_startup_lists_root": ["RT-CFG-004"],
    "hosted_gateway_header_missing": ["SSH-UP-004"],
    "hosted_wrong_vault_header": ["SSH-UP-002"],
    "hosted_actor_user_id": ["SSH-UP-003", "SSH-ERR-004"],
    "hosted_fetch_before_validation": ["SSH-IN-002", "SSH-IN-003"],
    "hosted_raw_upstream_body": ["SSH-ERR-003"],
    "hosted_unknown_role_gets_editor": ["SSH-ACL-002"],
    "hosted_token_logged": ["SSH-LOG-001"],
    "hosted_path_logged": ["SSH-LOG-002"],
    "hosted_cross_session_state": ["SSH-STR-003", "SSH-DI-002"],
    "hosted_list_scan": ["SSH-UP-001", "SSH-UP-006"],
    "hosted_foreign_origin": ["MCP-HTTP-004"],
    "hosted_tool_in_1k": ["SSH-ACL-003", "SSH-ACL-004"],
    "hosted_canister_path_used": ["SSH-OUT-003"],
    "hosted_signature_unchecked": ["SSH-AUTH-002"],
    "hosted_expired_accepted": ["SSH-AUTH-002"],
    "hosted_blocked_tool": ["SSH-BLK-001"],
    "hosted_secret_in_error": ["SSH-SEC-003"],
    "hosted_provider_connection": ["SSH-UP-007"],
    "hosted_cache_file": ["SSH-DI-003"],
}


@pytest.mark.parametrize("mutant", sorted(CAUGHT_BY))
def test_the_suite_catches_the_mutant_by_requirement_id(suite_run, mutant):
    expected = CAUGHT_BY[mutant]
    run = suite_run(*mutant_suite_args(mutant), "--server-cmd", mutant_command(mutant), "--req", ",".join(expected))
    assert run.results is not None, f"no report written:\n{run.output[-3000:]}"
    assert run.code != 0, f"{mutant}: the suite passed a broken server"
    status = run.status()
    missed = [req for req in expected if status.get(req) != "fail"]
    assert not missed, f"{mutant}: not reported failing: {[(r, status.get(r)) for r in missed]}\n{run.output[-3000:]}"
    for req in expected:  # the failure names the requirement id
        assert f"[{req}]" in run.output or req in run.output
