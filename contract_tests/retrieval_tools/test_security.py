"""Security tier: path attacks on every file tool and root, cross-root escapes, leaks, logs."""

from __future__ import annotations

import pytest

from contract_tests.checks import check
from contract_tests.harness import canaries, fsevents
from contract_tests.harness.corpus import attack_path
from contract_tests.harness.roots import NEEDLE_COMMON, REPOS
from contract_tests.retrieval_tools.common import (FILE_TOOLS, UNSAFE_CATEGORIES, attacks, error, file_args,
                                                    profiles_mark, start_with_roots)

pytestmark = [profiles_mark, pytest.mark.security]


def _entries():
    entries = [e for e in attacks()["paths"] if e["category"] in UNSAFE_CATEGORIES]
    return [pytest.param(e, id=e["id"]) for e in entries]


def _placeholders(fixture, repo):
    return {"vault": str(fixture.repo_root(repo)), "root": str(fixture.root)}


@pytest.mark.req("RT-PATH-002")
@pytest.mark.parametrize("entry", _entries())
def test_the_attack_corpus_fails_on_every_file_tool_and_root(server, client, fixture_roots, entry):
    for repo in REPOS:
        path = attack_path(entry, _placeholders(fixture_roots, repo))
        root = fixture_roots.repo_root(repo)
        for tool in FILE_TOOLS:
            what = f"{tool} {repo} attack {entry['id']}"
            if fsevents.available():
                with fsevents.OpenWatcher(fixture_roots.root) as watcher:
                    response = server.call_tool(tool, file_args(tool, repo, path))
                    opened = watcher.opened()
            else:
                response, opened = server.call_tool(tool, file_args(tool, repo, path)), set()
            error(response, "RT-PATH-002", what)
            outside = sorted(str(p.relative_to(fixture_roots.root)) for p in opened
                             if p != root and root not in p.parents)
            check(not outside, "RT-PATH-002", f"{what}: opened entries outside the root: {outside[:3]}")


@pytest.mark.req("RT-PATH-001")
@pytest.mark.parametrize("tool", FILE_TOOLS)
@pytest.mark.parametrize("repo", REPOS)
@pytest.mark.parametrize("path", ["../outside/secret.md", "src/../../outside/secret.md", "..", "../code",
                                  "..\\outside\\secret.md", "guide/../../docs_evil/secret.md"])
def test_traversal_paths_are_rejected_with_a_structured_error(server, client, tool, repo, path):
    error(server.call_tool(tool, file_args(tool, repo, path)), "RT-PATH-001", f"{tool} {repo} {path!r}")


@pytest.mark.req("RT-PATH-003")
@pytest.mark.parametrize("tool", FILE_TOOLS)
@pytest.mark.parametrize("repo,path", [("docs", "links/to-code.md"), ("code", "links/to-docs.md"),
                                       ("docs", "../code/src/main.py"), ("code", "../docs/README.md"),
                                       ("docs", "{root}/code/src/main.py")])
def test_a_path_cannot_reach_into_the_other_root(server, client, fixture_roots, tool, repo, path):
    path = path.replace("{root}", str(fixture_roots.root))
    error(server.call_tool(tool, file_args(tool, repo, path)), "RT-PATH-003", f"{tool} {repo} {path}")


def _sweep(server, fixture):
    server.call_tool("search", {"query": NEEDLE_COMMON, "repo": "both"})
    for spec in fixture.files:
        server.call_tool("open_file", {"repo": spec.repo, "path": spec.path})
    for repo in REPOS:
        server.call_tool("list_dir", {"repo": repo})
        for path in ("links", "links/escape-dir", "../outside", "links/escape-file.md"):
            server.call_tool("list_dir", {"repo": repo, "path": path})
            server.call_tool("open_file", {"repo": repo, "path": path})


@pytest.mark.req("RT-PATH-004")
def test_no_content_from_outside_the_roots_appears(server, client, fixture_roots):
    _sweep(server, fixture_roots)
    leaks = canaries.scan_lines(server.transcript.stdout, fixture_roots.canaries, "stdout", ["outside"])
    check(not leaks, "RT-PATH-004", f"outside content returned: {leaks[0] if leaks else ''}")


@pytest.mark.req("RT-OUT-001")
def test_no_result_or_error_carries_an_absolute_path(server, client, fixture_roots):
    mark = server.transcript.mark()
    _sweep(server, fixture_roots)
    for path in ("/etc/passwd", "{root}/outside/secret.md", "missing.md", "guide"):
        for tool in FILE_TOOLS:
            server.call_tool(tool, file_args(tool, "docs", path.replace("{root}", str(fixture_roots.root))))
    out, _err = server.transcript.since(mark)
    leaks = canaries.scan_lines(out, fixture_roots.canaries, "stdout", ["path"])
    check(not leaks, "RT-OUT-001", f"an absolute path in output: {leaks[0] if leaks else ''}")


@pytest.mark.req("RT-LOG-001")
def test_log_lines_never_include_file_contents(server, client, fixture_roots):
    _sweep(server, fixture_roots)
    server.call_tool("open_file", {"repo": "code", "path": ".env"})
    leaks = canaries.scan_lines(server.transcript.stderr, fixture_roots.canaries, "stderr",
                                ["content", "hidden", "outside"])
    check(not leaks, "RT-LOG-001", f"a log line carries file contents: {leaks[0] if leaks else ''}")


@pytest.mark.req("RT-CFG-004")
@pytest.mark.parametrize("spoil", ["DOCS_ROOT", "CODE_ROOT"])
def test_a_start_up_error_never_lists_a_roots_contents(suite, fixture_roots, tmp_path, spoil):
    proc = start_with_roots(suite, fixture_roots, tmp_path, spoil, str(tmp_path / "no-such-root"))
    check(proc.returncode != 0, "RT-CFG-004", "the server started with a missing root")
    names = ["README.md", "guide", "api", "lines.md", "src", "main.py", "many.txt", "tests"]
    shown = [n for n in names if n in proc.stderr]
    check(not shown, "RT-CFG-004", f"the start-up error lists root contents: {shown}")
