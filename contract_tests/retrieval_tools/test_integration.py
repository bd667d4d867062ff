"""Integration tier: search order and limits, visibility, file tools, the error catalogue, start-up."""

from __future__ import annotations

import os

import pytest

from contract_tests.checks import check
from contract_tests.harness.roots import NEEDLE_BINARY, NEEDLE_COMMON, NEEDLE_HIDDEN, NEEDLE_MANY
from contract_tests.retrieval_tools.common import (FILE_TOOLS, TOOLS, catalogue, error, file_args, ok,
                                                    profiles_mark, start_with_roots)

pytestmark = [profiles_mark, pytest.mark.integration]


def _matches(envelope):
    return [(m["repo"], m["path"], m["line"]) for m in envelope["result"]["matches"]]


def _search(server, query, repo="both", **extra):
    return ok(server.call_tool("search", {"query": query, "repo": repo, **extra}), "RT-SRCH-001", "search")


@pytest.mark.req("RT-SRCH-001")
def test_search_orders_by_repo_then_path_then_line(server, client, fixture_roots):
    got = _matches(_search(server, NEEDLE_COMMON))
    want = fixture_roots.expected_matches(NEEDLE_COMMON)
    check(got == want, "RT-SRCH-001", f"order or content differs: first difference at "
          f"{next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))} "
          f"(got {len(got)} matches, expected {len(want)})")


@pytest.mark.req("RT-SRCH-002")
def test_each_match_carries_repo_path_line_and_a_preview_of_the_line(server, client, fixture_roots):
    lines = {(f.repo, f.path): f.lines() for f in fixture_roots.files}
    for match in _search(server, NEEDLE_COMMON)["result"]["matches"]:
        line = lines[(match["repo"], match["path"])][match["line"] - 1]
        check(match["preview"] in line, "RT-SRCH-002",
              f"{match['path']}:{match['line']}: the preview is not taken from the matching line")
        check(NEEDLE_COMMON in match["preview"], "RT-SRCH-002",
              f"{match['path']}:{match['line']}: the preview does not show the match")


@pytest.mark.req("RT-SRCH-003")
def test_the_default_limit_is_200_and_truncated_says_when_matches_were_cut(server, client, fixture_roots, profile):
    default = profile.limits["default_limit"]
    total = len(fixture_roots.expected_matches(NEEDLE_MANY))
    assert total > default, "fixture must hold more matches than the default limit"
    full = _search(server, NEEDLE_MANY)
    check(len(full["result"]["matches"]) == default and full["meta"]["truncated"] is True, "RT-SRCH-003",
          f"without a limit: {len(full['result']['matches'])} matches, truncated {full['meta']['truncated']}")
    few = _search(server, NEEDLE_MANY, limit=7)
    check(_matches(few) == fixture_roots.expected_matches(NEEDLE_MANY)[:7] and few["meta"]["truncated"] is True,
          "RT-SRCH-003", "limit 7 did not return the first 7 matches with truncated true")
    exact = _search(server, NEEDLE_MANY, limit=total)
    check(len(exact["result"]["matches"]) == total and exact["meta"]["truncated"] is False, "RT-SRCH-003",
          f"limit equal to the match count: truncated {exact['meta']['truncated']}")


@pytest.mark.req("RT-SRCH-004")
@pytest.mark.parametrize("repo", ["docs", "code", "both"])
def test_repo_selects_which_roots_are_searched(server, client, fixture_roots, repo):
    got = _matches(_search(server, NEEDLE_COMMON, repo=repo))
    check(got == fixture_roots.expected_matches(NEEDLE_COMMON, repo), "RT-SRCH-004",
          f"repo={repo}: matches differ from that root's files")


@pytest.mark.req("RT-SRCH-006")
def test_search_skips_binary_files(server, client):
    got = _matches(_search(server, NEEDLE_BINARY))
    check(got == [], "RT-SRCH-006", f"binary files matched: {got}")


VIS_REQ = {"hidden": "RT-VIS-001", "ignored": "RT-VIS-002"}


def _check_visible(fixture, repo_paths, what):
    for repo, path in repo_paths:
        why = fixture.why_invisible(repo, path)
        check(why is None, VIS_REQ.get(why, "RT-VIS-001"), f"{what} shows {why} entry {repo}:{path}")


@pytest.mark.req("RT-VIS-001", "RT-VIS-002")
def test_hidden_and_ignored_files_never_appear_in_search(server, client, fixture_roots):
    got = _matches(_search(server, NEEDLE_HIDDEN))
    _check_visible(fixture_roots, [(repo, path) for repo, path, _line in got], "search")
    check(got == [], "RT-VIS-001", f"search for a term only hidden or ignored files hold matched {got[:3]}")


def _listing(server, repo, directory, req):
    args = {"repo": repo, "path": directory} if directory else {"repo": repo}
    envelope = ok(server.call_tool("list_dir", args), req, "list_dir")
    return envelope["result"]["entries"]


@pytest.mark.req("RT-VIS-001", "RT-VIS-002", "RT-LIST-001")
@pytest.mark.parametrize("repo", ["docs", "code"])
def test_list_dir_without_a_path_lists_the_visible_top_level(server, client, fixture_roots, repo):
    entries = _listing(server, repo, "", "RT-LIST-001")
    _check_visible(fixture_roots, [(repo, e["path"]) for e in entries], f"list_dir {repo}")
    got = sorted((e["name"], e["type"]) for e in entries if e["name"] != "links")
    want = [e for e in fixture_roots.visible_entries(repo) if e[0] != "links"]
    check(got == want, "RT-LIST-001", f"list_dir {repo}: {got} != {want}")
    for entry in entries:
        check(entry["path"] == entry["name"], "RT-LIST-001", f"top-level entry path {entry['path']!r}")


@pytest.mark.req("RT-VIS-001", "RT-VIS-002", "RT-LIST-002")
@pytest.mark.parametrize("repo,directory", [("docs", "guide"), ("docs", "api"), ("code", "src")])
def test_list_dir_on_a_subdirectory_lists_only_its_visible_entries(server, client, fixture_roots, repo, directory):
    entries = _listing(server, repo, directory, "RT-LIST-002")
    _check_visible(fixture_roots, [(repo, e["path"]) for e in entries], f"list_dir {repo}:{directory}")
    got = sorted((e["name"], e["type"]) for e in entries)
    check(got == fixture_roots.visible_entries(repo, directory), "RT-LIST-002",
          f"list_dir {repo}:{directory} gave {got}")
    for entry in entries:
        check(entry["path"] == f"{directory}/{entry['name']}", "RT-LIST-002",
              f"entry path {entry['path']!r} is not relative to the root")


@pytest.mark.req("RT-OPEN-001")
@pytest.mark.parametrize("repo,path", [("docs", "README.md"), ("docs", "guide/advanced.md"),
                                       ("docs", "empty.md"), ("code", "src/main.py")])
def test_open_file_returns_every_line_numbered(server, client, fixture_roots, repo, path):
    spec = next(f for f in fixture_roots.files if (f.repo, f.path) == (repo, path))
    result = ok(server.call_tool("open_file", {"repo": repo, "path": path}), "RT-OPEN-001", "open_file")["result"]
    got = [(entry["line"], entry["text"]) for entry in result["lines"]]
    check(got == list(enumerate(spec.lines(), 1)), "RT-OPEN-001", f"{repo}:{path}: lines differ from the file")


@pytest.mark.req("RT-OPEN-002")
@pytest.mark.parametrize("repo,path", [("docs", "image.png"), ("code", "data.bin")])
def test_opening_a_binary_file_is_a_structured_error(server, client, repo, path):
    error(server.call_tool("open_file", {"repo": repo, "path": path}), "RT-OPEN-002", f"open_file {path}")


def _snippet(server, start, end, req):
    return server.call_tool("get_snippet", {"repo": "docs", "path": "lines.md", "start_line": start, "end_line": end})


@pytest.mark.req("RT-SNIP-001")
@pytest.mark.parametrize("start,end", [(1, 1), (3, 7), (30, 30)])
def test_get_snippet_returns_exactly_the_range(server, client, start, end):
    result = ok(_snippet(server, start, end, "RT-SNIP-001"), "RT-SNIP-001", "get_snippet")["result"]
    got = [(e["line"], e["text"]) for e in result["lines"]]
    check(got == [(i, f"line {i}") for i in range(start, end + 1)], "RT-SNIP-001", f"range {start}-{end}: {got[:3]}")


@pytest.mark.req("RT-SNIP-002")
def test_get_snippet_clamps_to_the_end_of_the_file(server, client):
    envelope = ok(_snippet(server, 28, 500, "RT-SNIP-002"), "RT-SNIP-002", "get_snippet")
    got = [e["line"] for e in envelope["result"]["lines"]]
    check(got == [28, 29, 30], "RT-SNIP-002", f"lines {got}, expected 28-30")
    check(envelope["result"]["end_line"] == 30, "RT-SNIP-002", "end_line is not clamped to 30")


@pytest.mark.req("RT-SNIP-003")
@pytest.mark.parametrize("start,end", [(0, 3), (-2, 3), (5, 4), (31, 40)])
def test_get_snippet_rejects_invalid_ranges(server, client, start, end):
    obj = error(_snippet(server, start, end, "RT-SNIP-003"), "RT-SNIP-003", f"range {start}-{end}")
    check(obj["code"] in ("RANGE_INVALID", "INVALID_ARGUMENT"), "RT-SNIP-003", f"code {obj['code']}")


@pytest.mark.req("RT-ERR-002")
@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("repo", ["both-ish", "DOCS", "", "../docs"])
def test_an_invalid_repo_is_repo_invalid(server, client, tool, repo):
    args = {"query": NEEDLE_COMMON, "repo": repo} if tool == "search" else file_args(tool, repo, "README.md")
    obj = error(server.call_tool(tool, args), "RT-ERR-002", f"{tool} repo={repo!r}")
    check(obj["code"] == "REPO_INVALID", "RT-ERR-002", f"{tool} repo={repo!r}: code {obj['code']}")


@pytest.mark.req("RT-ERR-002")
@pytest.mark.parametrize("tool", FILE_TOOLS)
def test_both_is_not_a_repo_for_file_tools(server, client, tool):
    obj = error(server.call_tool(tool, file_args(tool, "both", "README.md")), "RT-ERR-002", f"{tool} repo=both")
    check(obj["code"] == "REPO_INVALID", "RT-ERR-002", f"{tool} repo=both: code {obj['code']}")


@pytest.mark.req("RT-ERR-003")
@pytest.mark.parametrize("args,code", [({"query": ""}, "QUERY_EMPTY"), ({"query": "   "}, "QUERY_EMPTY"),
                                       ({"query": NEEDLE_COMMON, "limit": 0}, "LIMIT_INVALID")])
def test_an_empty_query_or_zero_limit_is_a_structured_error(server, client, args, code):
    obj = error(server.call_tool("search", {"repo": "both", **args}), "RT-ERR-003", f"search {args}")
    check(obj["code"] == code, "RT-ERR-003", f"search {args}: code {obj['code']}, expected {code}")


def _cases():
    cases = [c for c in catalogue().get("cases", []) if c.get("scope", "profile") == "profile"]
    return [pytest.param(case, id=case["id"]) for case in cases]


@pytest.mark.req("RT-ERR-001", "RT-ENV-002")
@pytest.mark.parametrize("case", _cases())
def test_every_catalogued_error_case_gives_its_code(server, client, case):
    obj = error(server.call_tool(case["tool"], case["arguments"]), "RT-ENV-002", f"case {case['id']}")
    check(obj["code"] == case["expect_code"], "RT-ERR-001",
          f"case {case['id']}: code {obj['code']}, expected {case['expect_code']}")


def _refuses(proc, req, root_name):
    check(proc.returncode != 0, req, f"the server started (exit {proc.returncode}) with a bad {root_name}")
    check(root_name in proc.stderr, req, f"the start-up error does not name {root_name}")


@pytest.mark.req("RT-CFG-001")
@pytest.mark.parametrize("root_name", ["DOCS_ROOT", "CODE_ROOT"])
def test_a_missing_root_variable_stops_the_server(suite, fixture_roots, tmp_path, root_name):
    _refuses(start_with_roots(suite, fixture_roots, tmp_path, root_name, None), "RT-CFG-001", root_name)


@pytest.mark.req("RT-CFG-002")
@pytest.mark.parametrize("root_name", ["DOCS_ROOT", "CODE_ROOT"])
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_root_that_is_not_a_directory_stops_the_server(suite, fixture_roots, tmp_path, root_name, kind):
    bad = tmp_path / "not-a-root"
    if kind == "file":
        bad.write_text("x")
    _refuses(start_with_roots(suite, fixture_roots, tmp_path, root_name, str(bad)), "RT-CFG-002", root_name)


@pytest.mark.req("RT-CFG-003")
@pytest.mark.parametrize("root_name", ["DOCS_ROOT", "CODE_ROOT"])
def test_an_unreadable_root_stops_the_server(suite, fixture_roots, tmp_path, root_name):
    if os.geteuid() == 0:
        pytest.skip("running as root: permissions cannot make a directory unreadable")
    bad = tmp_path / "locked"
    bad.mkdir()
    bad.chmod(0)
    try:
        proc = start_with_roots(suite, fixture_roots, tmp_path, root_name, str(bad))
    finally:
        bad.chmod(0o700)
    _refuses(proc, "RT-CFG-003", root_name)
