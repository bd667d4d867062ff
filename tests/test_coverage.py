"""Two-way coverage: every requirement has a test in one of its tiers, every cited id exists,
and each of the seven tiers has tests."""

from __future__ import annotations

import pytest

from contract_tests.contracts import specs as contracts
from contract_tests.implementation.state import STATE


class _Collector:
    def __init__(self) -> None:
        self.items: list[tuple[str, list[str], list[str]]] = []

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Every suite test of the profile, before transport and --req deselection."""
        for nodeid, (ids, tiers) in session.config.stash[STATE].cited.items():
            self.items.append((nodeid, ids, tiers))


def collect(profile_id: str) -> list[tuple[str, list[str], list[str]]]:
    collector = _Collector()
    code = pytest.main(["--pyargs", "contract_tests", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "--rc-profile", profile_id], plugins=[collector])
    assert code == 0, f"collection failed for {profile_id} (exit {code})"
    return collector.items


@pytest.fixture(scope="module", params=contracts.available_profiles())
def collected(request):
    return request.param, collect(request.param)


def test_every_requirement_of_the_profile_has_a_test_in_one_of_its_tiers(collected):
    profile_id, items = collected
    profile = contracts.load_profile(profile_id)
    missing = []
    for req in profile.requirements.values():
        tiers = {t for _node, ids, item_tiers in items if req.id in ids for t in item_tiers}
        if not tiers & set(req.tiers):
            missing.append(f"{req.id} (tiers {list(req.tiers)}, tested in {sorted(tiers) or 'none'})")
    assert not missing, "requirements without a test in their tier:\n" + "\n".join(missing)


def test_every_cited_id_is_a_requirement(collected):
    profile_id, items = collected
    known = set(contracts.load_profile(profile_id).requirements)
    unknown = sorted({(node, r) for node, ids, _t in items for r in ids if r not in known})
    assert not unknown, unknown


def test_all_seven_tiers_have_tests(collected):
    profile_id, items = collected
    seen = {t for _n, _ids, tiers in items for t in tiers}
    if contracts.load_profile(profile_id).data.get("mapped"):
        # A mapped profile asks a few questions of any server (escape, leak, write): it has no
        # seed whose every tier to cover, only the tiers of its own requirements.
        wanted = {t for r in contracts.load_profile(profile_id).requirements.values() for t in r.tiers}
        assert seen == wanted, sorted(wanted ^ seen)
        return
    assert seen == set(contracts.TIERS), sorted(set(contracts.TIERS) - seen)


def test_an_unknown_id_given_to_req_is_a_usage_error(pytester):
    result = pytester.runpytest("--rc-req", "SSL-NOPE-999")
    result.stderr.fnmatch_lines(["*--req: not requirements of section-source-local: SSL-NOPE-999*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


@pytest.mark.parametrize("body,message", [
    ('@pytest.mark.unit\n@pytest.mark.req("SSL-NOPE-001")\ndef test_x(): pass\n', "cites unknown requirement id SSL-NOPE-001"),
    ('@pytest.mark.unit\ndef test_x(): pass\n', "cites no requirement id"),
    ('@pytest.mark.req("SSL-OUT-001")\ndef test_x(): pass\n', "needs exactly one tier marker"),
])
def test_a_suite_test_that_breaks_the_conventions_fails_collection(pytester, monkeypatch, body, message):
    """Suite tests must cite known ids and carry one tier; checked on a stand-in suite directory."""
    from contract_tests.suite import items
    monkeypatch.setattr(items, "SUITE_DIR", pytester.path)
    pytester.makepyfile(test_suite_item="import pytest\n\n" + body)
    result = pytester.runpytest_inprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in "\n".join(result.errlines + result.outlines)
