"""Integration tier: start-up. A missing, non-directory or unreadable root stops the server,
which refuses to start (seed 003's configuration rules); a root given relative or with a trailing
slash is refused or served alike."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contract_tests.contracts.specs import choice
from contract_tests.retrieval_tools.common import (
    Calls,
    Findings,
    as_file_lines,
    expected_matches,
    first_difference,
    match_pairs,
    names_the_root,
    profiles_mark,
    start_with_roots,
    started,
    without_nested,
)
from contract_tests.synthetic.roots import NEEDLE_COMMON
from contract_tests.verdicts.checks import called_ok
from contract_tests.verdicts.findings import esc
from contract_tests.verdicts.running import own

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
    from contract_tests.transport.privileges import unprivileged_prefix
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


# --- a root spelled otherwise ------------------------------------------

@pytest.mark.req("RT-CFG-005")
@pytest.mark.parametrize("form", ["relative", "trailing-slash"])
def test_a_relative_or_trailing_slash_root_is_refused_or_served_alike(own_servers, fixture_roots, names, profile, form):
    home = own_servers.fresh_home()
    docs = fixture_roots.repo_root("docs")
    value = os.path.relpath(docs, home) if form == "relative" else str(docs) + "/"
    srv = own_servers.start(fixture_roots, home=home, extra={"docs_root": value})
    response = srv.initialize()
    with Findings() as findings:
        if "result" not in response:
            srv.close(timeout=3)
            findings.check(choice("relative_roots") != "serve",
                           f"declared relative_roots: serve, but the server did not start with DOCS_ROOT={value}")
            return
        calls = Calls(srv, names, profile)
        try:
            got = calls.lines("open_file", {"repo": "docs", "path": "README.md"})
            spec = next(f for f in fixture_roots.files if (f.repo, f.path) == ("docs", "README.md"))
            findings.check(as_file_lines(got, spec) == list(enumerate(spec.lines(), 1)),
                           "open_file README.md differs from "
                           f"the file with DOCS_ROOT={value}")
            # Which matches, in whatever order, nested-.gitignore files aside (RT-SRCH-001, RT-VIS-005).
            matches = sorted(without_nested(fixture_roots, match_pairs(calls.matches(
                {"query": NEEDLE_COMMON, "repo": "docs"}))), key=str)
            want = sorted(expected_matches(fixture_roots, NEEDLE_COMMON, "docs", nested=False), key=str)
            findings.check(matches == want, f"search differs with DOCS_ROOT={value} (sorted): "
                           + first_difference(matches, want))
            # The root itself (no path: the one listing a root spelled otherwise can break alone),
            # then a subdirectory: the visible entries, relative to the root.
            for directory in ("", "guide"):
                entries = calls.entries({"repo": "docs", **({"path": directory} if directory else {})})
                where = f"list_dir docs:{directory or '(no path)'}"
                findings.check(all(not Path(p).is_absolute() for p in entries),
                               f"{where} gave absolute paths with DOCS_ROOT={value}")
                prefix = f"{directory}/" if directory else ""
                nested = fixture_roots.nested_paths("docs")
                got = sorted(p for p in entries if not fixture_roots.why_invisible("docs", p) and p not in nested)
                want = sorted(prefix + name for name, _kind in fixture_roots.visible_entries("docs", directory)
                              if prefix + name not in nested)
                findings.check(got == want, f"{where} differs with DOCS_ROOT={value}: gave {esc(got)}, "
                               f"expected {esc(want)}")
            response, request = calls.raw("open_file", {"repo": "docs", "path": "../code/src/main.py"})
            findings.check(not called_ok(response), f"a traversal into the other root succeeded with "
                           f"DOCS_ROOT={value}", request=request)
        finally:
            srv.close(timeout=3)
