"""One sweep per worker, on a server of the suite's own started on the fixture's root: the
fixture as built (before any server of the run started on it) is compared with the fixture after
the sweep's server stops (GF-WRITE-001)."""

from __future__ import annotations

import pytest

from contract_tests.contracts.mapping import ready_seconds
from contract_tests.generic_files.sweep import Sweep, run_sweep
from contract_tests.transport.limits import patience


@pytest.fixture(scope="session")
def mapping(suite):
    return suite.mapping


@pytest.fixture(scope="session")
def swept(own_servers, contract_fixture, mapping) -> Sweep:
    before = getattr(contract_fixture, "as_built", None)
    if before is None:
        before = contract_fixture.snapshot()
    srv = own_servers.start(contract_fixture)
    try:
        srv.initialize(timeout=max(ready_seconds(mapping), patience()))  # a server that indexes first
        sweep = run_sweep(srv, contract_fixture, mapping)
    finally:
        srv.close(timeout=5)
    sweep.stderr = list(srv.transcript.stderr)
    sweep.stdout = list(srv.transcript.stdout)
    sweep.changes = contract_fixture.changes(before)
    sweep.compared = len(before) if hasattr(before, "__len__") else 1
    return sweep
