"""Security tier: paths into the other root, search through symlinks, start-up messages.
(Path attacks, leak sweeps and log scans: contract_tests/concerns.)"""

from __future__ import annotations

import pytest

from contract_tests.retrieval_tools.common import Calls, Findings, profiles_mark, start_with_roots, started
from contract_tests.synthetic import canaries
from contract_tests.synthetic.roots import NEEDLE_COMMON
from contract_tests.verdicts.checks import called_ok
from contract_tests.verdicts.findings import esc

pytestmark = [profiles_mark, pytest.mark.security]


@pytest.fixture(scope="module")
def trap_calls(own_servers, fixture_roots, names, profile):
    srv = own_servers.start(fixture_roots.twin("all"))
    srv.initialize()
    return Calls(srv, names, profile)


@pytest.mark.req("RT-PATH-003")
@pytest.mark.parametrize("tool", ["open_file", "get_snippet", "list_dir"])
def test_a_path_cannot_reach_into_the_other_root(trap_calls, fixture_roots, tool):
    traps = fixture_roots.twin("all")
    # (`../code/...` is a traversal: RT-PATH-001's case, in the path-attack sweep.)
    paths = [("docs", "links/to-code.md"), ("code", "links/to-docs.md"), ("docs", f"{traps.root}/code/src/main.py"),
             ("code", f"{traps.root}/docs/README.md")]
    with Findings() as findings:
        for repo, path in paths:
            args = {"repo": repo, "path": path} | ({"start_line": 1, "end_line": 5} if tool == "get_snippet" else {})
            response, request = trap_calls.raw(tool, args)
            findings.check(not called_ok(response), f"{repo}:{esc(path)} reached the other root",
                           case=f"{tool}:{repo}:{path}", request=request)


@pytest.mark.req("RT-PATH-004")
@pytest.mark.parametrize("traps", ["files", "all"])
def test_search_never_returns_content_from_outside_the_roots(own_servers, fixture_roots, names, profile, traps):
    """Roots with links out of them (files only, or files and directories): a search for a term
    the outside files hold returns none of their content."""
    twin = fixture_roots.twin(traps)
    srv = own_servers.start(twin)
    srv.initialize()
    calls = Calls(srv, names, profile)
    try:
        response, request = calls.raw("search", {"query": NEEDLE_COMMON, "repo": "both"})
    finally:
        srv.close(timeout=3)
    leaks = canaries.scan_lines([str(response)], twin.canaries, "results", ("outside",))
    with Findings() as findings:
        findings.check(not leaks, f"search returned outside content: {leaks[0] if leaks else ''}",
                       request=request)


@pytest.mark.req("RT-CFG-004")
@pytest.mark.parametrize("spoil", ["DOCS_ROOT", "CODE_ROOT"])
def test_a_start_up_error_never_lists_a_roots_contents(own_servers, fixture_roots, tmp_path, spoil):
    proc = start_with_roots(own_servers, fixture_roots, spoil, str(tmp_path / "no-such-root"))
    names = ["README.md", "guide", "api", "lines.md", "src", "main.py", "many.txt", "tests"]
    shown = [n for n in names if n in proc.stderr]
    with Findings() as findings:
        findings.check(started(proc) is None, f"the server started with a missing root: {started(proc)}")
        findings.check(not shown, f"the start-up error lists root contents: {shown}")
