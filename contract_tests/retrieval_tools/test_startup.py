"""Integration tier: start-up refusals. A missing, non-directory or unreadable root stops the
server, which refuses to start (seed 003's configuration rules)."""

from __future__ import annotations

import pytest

from contract_tests.retrieval_tools.common import Findings, names_the_root, profiles_mark, start_with_roots, started
from contract_tests.running import own
from contract_tests.verdicts import esc

pytestmark = [profiles_mark, pytest.mark.integration]


def _refuses(proc, root_name, value, findings, *, req: str | None = None):
    req = own(req)
    findings.check(started(proc) is None, f"the server started with a bad {root_name}: {started(proc)}", req=req)
    findings.check(names_the_root(proc.stderr + proc.stdout, root_name, value),
                   f"the start-up error does not say which root ({root_name}, "
                   f"{root_name.split('_')[0].lower()} or the path): {esc(proc.stderr[-300:])}", req=req)


@pytest.mark.req("RT-CFG-001")
@pytest.mark.parametrize("root_name", ["DOCS_ROOT", "CODE_ROOT"])
def test_a_missing_root_variable_stops_the_server(own_servers, fixture_roots, root_name):
    with Findings() as findings:
        _refuses(start_with_roots(own_servers, fixture_roots, root_name, None), root_name,
                 None, findings)


@pytest.mark.req("RT-CFG-002")
@pytest.mark.parametrize("root_name", ["DOCS_ROOT", "CODE_ROOT"])
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_root_that_is_not_a_directory_stops_the_server(own_servers, fixture_roots, tmp_path, root_name, kind):
    bad = tmp_path / "not-a-root"
    if kind == "file":
        bad.write_text("x")
    with Findings() as findings:
        _refuses(start_with_roots(own_servers, fixture_roots, root_name, str(bad)), root_name,
                 str(bad), findings)


@pytest.mark.req("RT-CFG-003")
@pytest.mark.parametrize("root_name", ["DOCS_ROOT", "CODE_ROOT"])
def test_an_unreadable_root_stops_the_server(own_servers, fixture_roots, tmp_path, root_name):
    from contract_tests.harness.privileges import unprivileged_prefix
    prefix, why = unprivileged_prefix()
    if prefix is None:
        pytest.skip(why)
    bad = tmp_path / "locked"
    bad.mkdir()
    bad.chmod(0)
    try:
        proc = start_with_roots(own_servers, fixture_roots, root_name, str(bad), prefix=prefix)
    finally:
        bad.chmod(0o700)
    with Findings() as findings:
        _refuses(proc, root_name, str(bad), findings)
