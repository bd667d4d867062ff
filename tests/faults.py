"""Faults injected into the suite itself, to prove how it reports them (loaded with
`-p tests.faults`, the fault named by RC_FAULT; the suite's own tests are unchanged).

- crash-fixture: the session fixture every section-source test needs (the SDK's tool list)
  crashes with KeyError('tampered'), as a suite bug would;
- crash-check: the check of a tool's output crashes in the test body;
- block-fixture: that fixture cannot be prepared (a precondition failed): every test using it
  is blocked in its setup, and its body must not run;
- block-check: the check of a tool's output is blocked in the test body;
- kill-worker: the check of a tool's output kills the xdist worker running it (as the kernel's
  OOM killer would).
"""

from __future__ import annotations

import os
from pathlib import Path

from contract_tests.transport import sdk
from contract_tests.verdicts import checks
from contract_tests.verdicts.findings import blocked

FAULT = os.environ.get("RC_FAULT", "")
BODY_RAN = os.environ.get("RC_FAULT_BODY_LOG")  # a file: one line per test body that ran


def _crash(*_args, **_kwargs):
    raise KeyError("tampered")


def _blocked_tools(*_args, **_kwargs):
    raise blocked("the tool list could not be read (injected)", req="SSL-TOOL-001", by="FAULT-PRECONDITION")


_real_tool_output = checks.tool_output


def _blocked_output(response, *, req=None):
    raise blocked("the output could not be judged (injected)", req=req, by="FAULT-PRECONDITION")


def _logged_output(response, *, req=None):
    if BODY_RAN:  # the node id of the test whose body is running
        with Path(BODY_RAN).open("a", encoding="utf-8") as log:
            log.write(os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0] + "\n")
    return _real_tool_output(response, req=req)


if FAULT == "crash-fixture":
    sdk.SdkClient.list_tools = _crash
elif FAULT == "crash-check":
    checks.tool_output = _crash
elif FAULT == "block-fixture":
    sdk.SdkClient.list_tools = _blocked_tools
    checks.tool_output = _logged_output
elif FAULT == "block-check":
    checks.tool_output = _blocked_output
elif FAULT == "kill-worker":
    checks.tool_output = lambda *_a, **_k: os._exit(137)
