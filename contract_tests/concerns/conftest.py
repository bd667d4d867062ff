"""Parametrize each concern test from the running profile's spec: a module-level
`cases_<test name>(profile)` gives its cases as (requirement id or ids, case data, case id);
a case lists every requirement its findings may name, so --req selects it for each. A test
a profile does not configure is not collected for it."""

from __future__ import annotations

import pytest

from contract_tests import contracts
from contract_tests.plugin import STATE


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    profile: contracts.Profile = metafunc.config.stash[STATE].profile
    make = getattr(metafunc.module, f"cases_{metafunc.function.__name__}")
    params = []
    for reqs, data, case_id in make(profile):
        reqs = [reqs] if isinstance(reqs, str) else list(reqs)  # the first is the test's own; others it may report
        tier = profile.requirements[reqs[0]].tiers[0]
        params.append(pytest.param(data, id=case_id, marks=[pytest.mark.req(*reqs), getattr(pytest.mark, tier)]))
    if not params:
        params = [pytest.param(None, id="not-applicable", marks=pytest.mark.inapplicable)]
    metafunc.parametrize("case", params)


@pytest.fixture(scope="session")
def attack_fixture(contract_fixture, profile):
    """The fixture path attacks run on: the profile's own, or its twin with symlink traps."""
    traps = profile.concerns.get("paths", {}).get("traps")
    return contract_fixture.twin(traps) if traps else contract_fixture


@pytest.fixture(scope="session")
def attack_server(servers, server, client, contract_fixture, attack_fixture):
    if attack_fixture is contract_fixture:
        return server
    srv = servers.start(attack_fixture)
    srv.initialize()
    return srv


@pytest.fixture(scope="session")
def swept(server, client, contract_fixture, names, profile):
    """One sweep per worker: every sweep call on every item, then the failing calls; returns
    what the server wrote meanwhile (protocol output, logs)."""
    from contract_tests.concerns.common import failing_calls, run, sweep_calls
    mark = server.transcript.mark()
    run(server, sweep_calls(profile, contract_fixture, names) + failing_calls(profile, contract_fixture, names))
    return server.transcript.since(mark)
