"""Parametrize each concern test from the running profile's spec: a module-level
`cases_<test name>(profile)` gives its cases as (requirement id or ids, case data, case id);
a case lists every requirement its findings may name, so --req selects it for each. A test
a profile does not configure is not collected for it."""

from __future__ import annotations

import pytest

from contract_tests.contracts import specs as contracts
from contract_tests.implementation.state import STATE


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
def attack_server(request, server, client, contract_fixture, attack_fixture):
    """The server the path attacks run on: the one under test, or one of the suite's own on the
    twin with symlink traps."""
    if attack_fixture is contract_fixture:
        return server
    srv = request.getfixturevalue("own_servers").start(attack_fixture)
    srv.initialize()
    return srv


class Sweep(list):
    """Per server, (protocol output, logs, params sent by id); `blocker` is (requirement, why)
    when the sweep's precondition call failed; `attacks` are the path attacks among its calls
    that the path sweep judges (outside content in their answers is its finding)."""
    blocker: tuple[str, str] | None = None
    attacks: set[str] = set()


@pytest.fixture(scope="session")
def swept(server, client, contract_fixture, names, profile, attack_fixture, attack_server):
    """One sweep per worker: every sweep call on every item, then the failing calls (on the
    attack twin too, when the profile has one, so its symlink traps are swept); returns, per
    server, (what it wrote meanwhile: protocol output, logs; what the caller sent, by id)."""
    from contract_tests.concerns.common import failing_calls, judged_attacks, precondition_failure, run, sweep_calls
    since = _unscanned(server)
    responses = run(server, sweep_calls(profile, contract_fixture, names) + failing_calls(profile, contract_fixture, names))
    out = Sweep([(*_take(server, since), server.sent_params)])
    out.blocker = precondition_failure(profile, responses)
    if out.blocker:
        server.rc_scanned = since  # the leak tests are blocked: the canary guard scans it all
    out.attacks = judged_attacks(profile, contract_fixture, names)
    if attack_server is not server:
        since = _unscanned(attack_server)
        run(attack_server, failing_calls(profile, attack_fixture, names))
        out.append((*_take(attack_server, since), attack_server.sent_params))
        out.attacks |= judged_attacks(profile, attack_fixture, names)
    return out


def _unscanned(server) -> tuple[int, ...]:
    return getattr(server, "rc_scanned", (0, 0, 0))


def _take(server, since: tuple[int, ...]) -> tuple[list[str], list[str]]:
    """What the server wrote that no scan has seen (its start-up, then the sweep), handed to the
    leak tests to judge, each leak once under its requirement: the canary guard after the test
    that set the sweep up does not scan it again."""
    mark = server.transcript.mark()
    taken = server.transcript.since(since)
    server.rc_scanned = mark
    return taken
