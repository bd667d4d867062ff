"""Integration tier: search order, limits and truncation, visibility, the file tools (declared
choices: test_choices.py; the start-up, and a root given relative or with a trailing slash:
test_startup.py; failures and their codes: test_failures.py). Checks read only the fields
seed 003 names; the lists inside `result` are found by the profile's locators (or the declaration)."""

from __future__ import annotations

import pytest

from contract_tests.contracts.specs import choice
from contract_tests.implementation.names import find_value
from contract_tests.retrieval_tools.common import (
    PATH_ORDERS,
    Calls,
    Findings,
    as_file_lines,
    expected_matches,
    first_difference,
    match_pairs,
    profiles_mark,
    without_nested,
)
from contract_tests.synthetic.roots import NEEDLE_BINARY, NEEDLE_COMMON, NEEDLE_HIDDEN, NEEDLE_MANY, REPOS
from contract_tests.verdicts.checks import called_ok
from contract_tests.verdicts.findings import RequirementFailure, esc
from contract_tests.verdicts.running import own

pytestmark = [profiles_mark, pytest.mark.integration]


# --- search ---------------------------------------------------------------------------

@pytest.mark.req("RT-SRCH-001")
def test_search_orders_by_repo_then_path_then_line(calls, fixture_roots):
    """Paths by code point or case-insensitively: the seed says lexicographic, not which."""
    got = without_nested(fixture_roots, match_pairs(calls.matches({"query": NEEDLE_COMMON, "repo": "both"})))
    wants = {name: expected_matches(fixture_roots, NEEDLE_COMMON, order=key, nested=False)
             for name, key in PATH_ORDERS.items()}
    with Findings() as findings:
        findings.check(got in wants.values(), "in no lexicographic path order (code point or "
                       "case-insensitive); by code point, " + first_difference(got, wants["code point"]))


def _preview_from(preview: str, line: str) -> bool:
    """A piece of the matching line; an ellipsis marking a cut at either end is allowed."""
    core = preview.strip()
    for mark in ("...", "\u2026"):
        core = core.removeprefix(mark).removesuffix(mark)
    return core.strip() in line


@pytest.mark.req("RT-SRCH-002")
def test_each_match_carries_path_line_and_a_preview_of_its_line(calls, fixture_roots, profile):
    lines = {f.path: f.lines() for f in fixture_roots.files if f.visible and not f.binary}
    from contract_tests.contracts.specs import validator
    from contract_tests.verdicts.checks import schema_errors
    match_schema = validator(profile.data["schemas"]["match"])
    with Findings() as findings:
        for match in calls.matches({"query": NEEDLE_COMMON, "repo": "both"}):
            errors = schema_errors(match_schema, match)
            if not findings.check(not errors, f"a match lacks path, line or preview: {errors[:2]}"):
                continue
            text = lines.get(match["path"], [])
            where = f"{match['path']}:{match['line']}"
            if not findings.check(0 < match["line"] <= len(text), f"{esc(where)}: no such line"):
                continue
            line = text[match["line"] - 1]
            findings.check(NEEDLE_COMMON in match["preview"], f"{esc(where)}: the preview does not "
                           "show the match")
            findings.check(_preview_from(match["preview"], line),
                           f"{esc(where)}: the preview is not taken from the matching line")


def _truncated(envelope) -> object:
    return envelope["meta"]["truncated"]


@pytest.mark.req("RT-SRCH-003")
def test_the_default_limit_is_200_and_truncated_says_when_matches_were_cut(calls, fixture_roots, profile):
    default = profile.limits["default_limit"]
    want = expected_matches(fixture_roots, NEEDLE_MANY)
    assert len(want) > default, "the fixture must hold more matches than the default limit"
    with Findings() as findings:
        full = calls.ok("search", {"query": NEEDLE_MANY, "repo": "both"})
        got = match_pairs(calls.matches({"query": NEEDLE_MANY, "repo": "both"}))
        findings.check(len(got) == default, f"without a limit: {len(got)} matches, not {default}")
        findings.check(_truncated(full) is True, "without a limit the matches were cut but "
                       f"meta.truncated is {_truncated(full)!r}")
        few = calls.ok("search", {"query": NEEDLE_MANY, "repo": "both", "limit": 7})
        got = match_pairs(calls.matches({"query": NEEDLE_MANY, "repo": "both", "limit": 7}))
        findings.check(got == want[:7], f"limit 7: not the first 7 matches ({len(got)} came)")
        findings.check(_truncated(few) is True, f"limit 7 cut the matches but meta.truncated is "
                       f"{_truncated(few)!r}")
        # A limit above the match count (not equal to it: a server may flag `truncated` when the
        # limit is reached, not knowing whether more would follow; the seed does not say).
        roomy = calls.ok("search", {"query": NEEDLE_MANY, "repo": "both", "limit": len(want) + 1})
        findings.check(_truncated(roomy) is False, f"a limit above the {len(want)} matches cut "
                       f"nothing but meta.truncated is {_truncated(roomy)!r}")


@pytest.mark.req("RT-SRCH-004")
@pytest.mark.parametrize("repo", ["docs", "code", "both"])
def test_repo_selects_which_roots_are_searched(calls, fixture_roots, repo):
    """Which matches come back, in whatever order (the order is RT-SRCH-001's)."""
    got = sorted(without_nested(fixture_roots, match_pairs(calls.matches({"query": NEEDLE_COMMON, "repo": repo}))), key=str)
    want = sorted(expected_matches(fixture_roots, NEEDLE_COMMON, repo, nested=False), key=str)
    with Findings() as findings:
        findings.check(got == want, f"repo={repo} (sorted): " + first_difference(got, want))


@pytest.mark.req("RT-SRCH-006")
def test_search_skips_binary_files(calls):
    got = match_pairs(calls.matches({"query": NEEDLE_BINARY, "repo": "both"}))
    with Findings() as findings:
        findings.check(got == [], f"binary files matched: {esc(got[:3])}")


@pytest.mark.req("RT-SRCH-009")
@pytest.mark.parametrize("traps", ["all", "files"])
def test_search_answers_on_roots_that_hold_symlinks(own_servers, fixture_roots, names, profile, traps):
    """Links to files and directories, out of the root and into the other root: search still
    answers, with (at least) the matches of the root's own files."""
    twin = fixture_roots.twin(traps)
    srv = own_servers.start(twin)
    srv.initialize()
    try:
        got = set(match_pairs(Calls(srv, names, profile).matches({"query": NEEDLE_COMMON, "repo": "both"})))
    finally:
        srv.close(timeout=3)
    missing = [m for m in expected_matches(twin, NEEDLE_COMMON, nested=False) if m not in got]
    with Findings() as findings:
        findings.check(not missing, f"the root's own matches are missing: {esc(missing[:3])}")


# --- visibility ------------------------------------------------------------------------

VIS_REQ = {"hidden": "RT-VIS-001", "ignored": "RT-VIS-002", "nested": "RT-VIS-005"}
SEARCH_VIS_REQ = {"hidden": "RT-VIS-003", "ignored": "RT-VIS-004", "nested": "RT-VIS-005"}


def _why_matched(fixture, match) -> str | None:
    """Why the file a match names is invisible ('hidden', 'ignored', 'nested'), on the match's
    own repo if it names one, else on either root; None for a visible or unknown path."""
    if not isinstance(match, dict):
        return None
    path = str(match.get("path"))
    repos = [match["repo"]] if match.get("repo") in REPOS else list(REPOS)
    return next((why for why in (fixture.why_invisible(r, path) for r in repos) if why), None)


@pytest.mark.parametrize("why", [
    pytest.param(why, marks=pytest.mark.req(SEARCH_VIS_REQ[why]), id=why)  # each rule its own test and verdict
    for why in ("hidden", "ignored")])
def test_search_never_matches_hidden_or_ignored_files(calls, fixture_roots, why):
    """Files only a nested .gitignore ignores are RT-VIS-005's (its own test): whatever it finds
    there never keeps this rule from being checked."""
    req = SEARCH_VIS_REQ[why]
    got = calls.matches({"query": NEEDLE_HIDDEN, "repo": "both"}, req=req)
    shown = sorted({str(m["path"]) for m in got if _why_matched(fixture_roots, m) == why})
    with Findings() as findings:
        findings.check(not shown, f"search matched the {why} file{'s' if len(shown) > 1 else ''} {esc(shown[:5])}",
                       req=req)


def _listing_problems(findings, fixture, repo, directory, entries, *, req: str | None = None):
    """Entries a nested .gitignore decides on are accepted shown or not (RT-VIS-005 judges them).
    Each visibility rule is checked, whether or not it held."""
    req = own(req)
    nested = fixture.nested_paths(repo)
    for why in ("hidden", "ignored"):
        vis_req = VIS_REQ[why]
        shown = [p for p in entries if fixture.why_invisible(repo, p) == why]
        findings.check(not shown, f"list_dir {repo}:{directory or '.'} shows the {why} "
                       f"entr{'ies' if len(shown) > 1 else 'y'} {esc(shown[:5])}", req=vis_req)
    prefix = f"{directory}/" if directory else ""
    want = sorted(prefix + name for name, _kind in fixture.visible_entries(repo, directory)
                  if prefix + name not in nested)
    got = sorted(p for p in entries if not fixture.why_invisible(repo, p) and p not in nested)
    findings.check(got == want, f"list_dir {repo}:{directory or '.'} gave {esc(got)}, expected {esc(want)}", req=req)


@pytest.mark.req("RT-LIST-001", "RT-VIS-001", "RT-VIS-002")
@pytest.mark.parametrize("repo", REPOS)
def test_list_dir_without_a_path_lists_the_visible_top_level(calls, fixture_roots, repo):
    entries = calls.entries({"repo": repo}, req="RT-LIST-001")
    with Findings() as findings:
        _listing_problems(findings, fixture_roots, repo, "", entries, req="RT-LIST-001")


@pytest.mark.req("RT-LIST-002", "RT-VIS-001", "RT-VIS-002")
@pytest.mark.parametrize("repo,directory", [("docs", "guide"), ("docs", "api"), ("code", "src")])
def test_list_dir_on_a_subdirectory_lists_only_its_visible_entries(calls, fixture_roots, repo, directory):
    entries = calls.entries({"repo": repo, "path": directory}, req="RT-LIST-002")
    with Findings() as findings:
        _listing_problems(findings, fixture_roots, repo, directory, entries, req="RT-LIST-002")


@pytest.mark.parametrize("repo,directory,why", [
    pytest.param(repo, directory, why, marks=pytest.mark.req(VIS_REQ[why]))  # each case proves its own rule
    for repo, directory, why in [("docs", ".secret", "hidden"), ("docs", "build", "ignored"),
                                 ("code", "node_modules", "ignored"), ("code", "node_modules/pkg", "ignored")]])
def test_listing_a_hidden_or_ignored_directory_shows_none_of_its_contents(calls, repo, directory, why):
    """An error, or an empty listing: either keeps the directory's entries out of sight."""
    response, request = calls.raw("list_dir", {"repo": repo, "path": directory})
    with Findings() as findings:
        if not called_ok(response):
            return
        from contract_tests.implementation.names import entry_paths, find_list
        from contract_tests.verdicts.checks import tool_output
        found = find_list(calls.profile, "list_dir.entries", tool_output(response, req=VIS_REQ[why]))
        paths = entry_paths(found or []) or []
        findings.check(not paths, f"listing the {why} directory {directory} shows {esc(paths[:3])}", req=VIS_REQ[why],
                       request=request)


@pytest.mark.req("RT-VIS-005")
def test_a_nested_gitignore_applies_with_its_negation(calls, fixture_roots):
    """guide/.gitignore ignores draft-*.md and re-includes draft-keep.md, as git reads it."""
    entries = calls.entries({"repo": "docs", "path": "guide"})
    matches = {path for path, _line in match_pairs(calls.matches({"query": NEEDLE_COMMON, "repo": "docs"}))}
    hidden = calls.matches({"query": NEEDLE_HIDDEN, "repo": "docs"})
    with Findings() as findings:
        for spec in (f for f in fixture_roots.files if f.nested):
            listed = spec.path in entries
            findings.check(listed == spec.visible, f"list_dir docs:guide {'omits' if spec.visible else 'shows'} "
                           f"{esc(spec.path)}, which git {'re-includes' if spec.visible else 'ignores'} by guide/.gitignore")
            if spec.visible and NEEDLE_COMMON in spec.data.decode("utf-8"):
                findings.check(spec.path in matches, f"search misses {esc(spec.path)}, which "
                               "guide/.gitignore re-includes")
        shown = sorted({str(m["path"]) for m in hidden if _why_matched(fixture_roots, m) == "nested"})
        findings.check(not shown, f"search matches {esc(shown[:5])}, which guide/.gitignore ignores")


# --- open_file, get_snippet ------------------------------------------------------------

@pytest.mark.req("RT-OPEN-001")
@pytest.mark.parametrize("repo,path", [("docs", "README.md"), ("docs", "guide/advanced.md"),
                                       ("docs", "empty.md"), ("code", "src/main.py")])
def test_open_file_returns_every_line_numbered(calls, fixture_roots, repo, path):
    spec = next(f for f in fixture_roots.files if (f.repo, f.path) == (repo, path))
    got = calls.lines("open_file", {"repo": repo, "path": path})
    want = list(enumerate(spec.lines(), 1))
    got = as_file_lines(got, spec)
    with Findings() as findings:
        findings.check(got == want, f"{repo}:{path}: " + first_difference(got, want))


@pytest.mark.req("RT-OPEN-003")
def test_a_final_newline_ends_the_last_line_and_adds_no_empty_one(calls, fixture_roots):
    """open_file on files ending in a newline and on an empty file, and get_snippet clamped at
    the end of a file: no empty line after the final newline."""
    cases = [("open_file", {"repo": "docs", "path": path}, "RT-OPEN-001")
             for path in ("README.md", "lines.md", "empty.md")]
    cases.append(("get_snippet", {"repo": "docs", "path": "lines.md", "start_line": 28, "end_line": 500},
                  "RT-SNIP-002"))
    with Findings() as findings:
        for tool, args, seed_req in cases:
            spec = next(f for f in fixture_roots.files if (f.repo, f.path) == (args["repo"], args["path"]))
            case = f"{tool}:{args['path']}"
            try:
                got = calls.lines(tool, args)
            except RequirementFailure:
                findings.block(f"{case}: no numbered lines to count", by=seed_req, case=case)
                continue
            count = len(spec.lines())
            findings.check(got[-1:] != [(count + 1, "")], f"an empty line {count + 1} after the file's {count} "
                           f"line{'s' if count != 1 else ''} (its final newline ends line {count})"
                           if count else "an empty file given as one empty line", case=case,
                           request=calls.describe(tool, args))


@pytest.mark.req("RT-OPEN-002")
@pytest.mark.parametrize("repo,path", [("docs", "image.png"), ("code", "data.bin")])
def test_opening_a_binary_file_is_a_structured_error(calls, repo, path):
    """Cites the advisory alone: a malformed error is still RT-ENV-002's finding, but a binary
    file served (which the seed allows) never leaves that seed requirement unchecked here."""
    if choice("open_binary") == "result":
        response, request = calls.raw("open_file", {"repo": repo, "path": path})
        with Findings() as findings:
            findings.check(called_ok(response), "declared open_binary: result, but the call failed", req="RT-OPEN-002",
                           request=request)
        return
    calls.error("open_file", {"repo": repo, "path": path}, "opening a binary file", req="RT-OPEN-002")


@pytest.mark.req("RT-SNIP-001")
@pytest.mark.parametrize("start,end", [(1, 1), (3, 7), (30, 30)])
def test_get_snippet_returns_exactly_the_range(calls, start, end):
    got = calls.lines("get_snippet", {"repo": "docs", "path": "lines.md", "start_line": start, "end_line": end})
    want = [(i, f"line {i}") for i in range(start, end + 1)]
    with Findings() as findings:
        findings.check(got == want, f"range {start}-{end}: " + first_difference(got, want))


@pytest.mark.req("RT-SNIP-002")
def test_get_snippet_clamps_to_the_end_of_the_file(calls):
    """The lines stop at the last line; where the server reports the snippet's end line (the
    seed's "start/end line numbers"), it is the clamped one."""
    args = {"repo": "docs", "path": "lines.md", "start_line": 28, "end_line": 500}
    got = calls.lines("get_snippet", args)
    end = find_value(calls.profile, "get_snippet.end", calls.ok("get_snippet", args))
    # lines.md has 30 lines ending in a newline; a server that counts an empty line 31 after it
    # clamps to 31 (the seed does not say how lines are counted; RT-OPEN-003 reports it).
    last = 31 if got[-1:] == [(31, "")] else 30
    with Findings() as findings:
        findings.check([n for n, _t in got] == list(range(28, last + 1)), f"lines "
                       f"{[n for n, _t in got]}, expected 28-30")
        findings.check(end is None or end == last, f"the snippet reports end line {esc(end)}, not "
                       f"the clamped {last}")


@pytest.mark.req("RT-SNIP-003", "RT-ENV-002")
@pytest.mark.parametrize("start,end", [(5, 4), (7, 1)])
def test_get_snippet_rejects_an_end_before_the_start(calls, start, end):
    calls.error("get_snippet", {"repo": "docs", "path": "lines.md", "start_line": start, "end_line": end},
                f"range {start}-{end}", req="RT-SNIP-003")


@pytest.mark.req("RT-SNIP-003", "RT-ENV-002")
@pytest.mark.parametrize("start", [0, -2])
def test_get_snippet_rejects_or_clamps_a_start_below_one(calls, start):
    response, request = calls.raw("get_snippet", {"repo": "docs", "path": "lines.md", "start_line": start,
                                                  "end_line": 3})
    if not called_ok(response):
        calls.judge_error(response, f"start {start}", request, req="RT-SNIP-003")
        return
    got = calls.lines("get_snippet", {"repo": "docs", "path": "lines.md", "start_line": start, "end_line": 3},
                      req="RT-SNIP-003")
    with Findings() as findings:
        findings.check([n for n, _t in got] == [1, 2, 3], f"start {start} was served as lines "
                       f"{[n for n, _t in got]}, neither rejected nor clamped to 1-3", req="RT-SNIP-003",
                       request=request)


@pytest.mark.req("RT-SRCH-008")
def test_search_skips_entries_it_cannot_read(own_servers, fixture_roots, names, profile):
    """A file and a directory the server cannot read (it runs without the power to bypass file
    permissions): search answers with every readable match."""
    locked = fixture_roots.twin("locked")
    srv = own_servers.start(locked, unprivileged=True)
    srv.initialize()
    try:
        got = match_pairs(Calls(srv, names, profile).matches({"query": NEEDLE_COMMON, "repo": "docs"}))
    finally:
        srv.close(timeout=3)
    got = sorted(without_nested(locked, got), key=str)
    want = sorted(expected_matches(locked, NEEDLE_COMMON, "docs", nested=False), key=str)
    with Findings() as findings:
        findings.check(got == want, "(sorted) " + first_difference(got, want))
