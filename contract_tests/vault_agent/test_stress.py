"""vault-agent under load: refusing a download over the MCP cap without holding the file in memory."""

from __future__ import annotations

import pytest

from contract_tests.transport.system import needs_proc
from contract_tests.vault_agent.common import error_code_of, peak_kib, profiles_mark, reset_peak
from contract_tests.verdicts.findings import Findings, describe_call

pytestmark = profiles_mark


@needs_proc
@pytest.mark.stress
@pytest.mark.req("VA-SIZE-005")
def test_refusing_a_download_over_the_cap_does_not_read_the_file_into_memory(server, client, names, profile):
    if server.proc is None:
        pytest.skip("the suite did not start the server: its memory cannot be read")
    if not reset_peak(server.pid):
        pytest.skip("cannot reset the server's peak memory (/proc/PID/clear_refs)")
    before = peak_kib(server.pid)
    args = names.args("get_attachment", {"vaultRelativePath": "attachments/huge.bin", "download": True,
                                         "allowLarge": True})
    response = server.call_tool("get_attachment", args, timeout=120)
    grown = (peak_kib(server.pid) - before) / 1024
    limit = profile.limits["memory_growth_mib"]
    with Findings() as findings:
        findings.check(grown < limit, f"peak memory grew by {grown:.0f} MiB refusing a 64 MiB download "
                       f"(limit {limit} MiB): the file was read before the size was checked "
                       f"(answer: {error_code_of(response) or 'no Phase 1 code'})",
                       request=describe_call("get_attachment", args))
