"""The retrieval-tools reference server (seed 003), unit by unit: configuration, path rules,
visibility (.gitignore semantics), binary detection, lines, ordering, clamping, the envelope,
and every catalogued error case run against the tool functions directly."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from reference.retrieval_tools import errors, server, walk
from reference.retrieval_tools.config import ConfigError, Roots, load_roots, parse_args
from reference.retrieval_tools.errors import ToolError
from reference.retrieval_tools.paths import normalize, resolve, round_trips
from reference.retrieval_tools.tools import FIELDS, call_tool, preview_of, schema

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = yaml.safe_load((ROOT / "reference" / "retrieval_tools" / "contract" / "errors.yaml").read_text(encoding="utf-8"))
ERROR_SCHEMA = Draft202012Validator(schema("error"))
TOOL_NAMES = ("search", "open_file", "get_snippet", "list_dir")


# -- fixture -----------------------------------------------------------------------------
def build_fixture(root: Path) -> Path:
    """The layout the suite builds (contract_tests/synthetic/roots.py; reference/retrieval_tools/contract/errors.yaml,
    `fixture_layout`), with tokens of our own to prove what is never shown."""
    docs, code = root / "docs", root / "code"
    texts = {
        docs / "README.md": "# Readme\nWelcome to the docs.\n",
        docs / "guide/intro.md": "# Intro\nStart here.\n",
        docs / "guide/advanced.md": "# Advanced\nDeep water.\n",
        docs / "api/reference.md": "# API\nCall main() to begin.\n",
        docs / ".hidden.md": "hidden HIDDENTOKEN\n",
        docs / ".secret/notes.md": "secret SECRETTOKEN\n",
        docs / ".gitignore": "build/\n*.log\n",
        docs / "build/out.md": "build BUILDTOKEN\n",
        docs / "app.log": "log LOGTOKEN\n",
        docs / "guide/.gitignore": "draft-*.md\n!draft-keep.md\n",
        docs / "guide/draft-1.md": "draft DRAFTTOKEN\n",
        docs / "guide/draft-keep.md": "draft KEEPTOKEN\n",
        docs / "empty.md": "",
        docs / "lines.md": "".join(f"line {n}\n" for n in range(1, 31)),
        code / "src/main.py": "def main():\n    print('hello')\n",
        code / "src/util.py": "def util():\n    return 'main'\n",
        code / "tests/test_main.py": "from src.main import main\n",
        code / ".env": "SECRET=ENVTOKEN\n",
        code / ".gitignore": "node_modules/\n",
        code / "node_modules/pkg/index.js": "module.exports = 'NODETOKEN';\n",
        root / "code_evil/secret.md": "evil EVILTOKEN\n",
        root / "docs_evil/secret.md": "evil EVILTOKEN\n",
        root / "outside/secret.md": "outside OUTSIDETOKEN\n",
    }
    for path, text in texts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (docs / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR IMAGETOKEN")
    (code / "data.bin").write_bytes(b"\x00\x01\x02 BINTOKEN")
    for repo in ("docs", "code"):
        (root / repo / "links").mkdir()
        os.symlink("../../outside/secret.md", root / repo / "links" / "escape-file.md")
        os.symlink("../../outside", root / repo / "links" / "escape-dir", target_is_directory=True)
    os.symlink("../../code/src/main.py", docs / "links" / "to-code.md")
    os.symlink("../../docs/README.md", code / "links" / "to-docs.md")
    return root


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory) -> Path:
    return build_fixture(tmp_path_factory.mktemp("rt"))


@pytest.fixture(scope="module")
def roots(fixture_root) -> Roots:
    return Roots(docs=(fixture_root / "docs").resolve(), code=(fixture_root / "code").resolve())


def make_roots(tmp_path: Path, files: dict[str, str | bytes]) -> Roots:
    """A scratch pair of roots; keys are 'docs/...' or 'code/...'."""
    for rel, data in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    for name in ("docs", "code"):
        (tmp_path / name).mkdir(exist_ok=True)
    return Roots(docs=(tmp_path / "docs").resolve(), code=(tmp_path / "code").resolve())


def ok(roots: Roots, tool: str, args) -> dict:
    outcome = call_tool(roots, tool, args)
    assert not outcome.is_error, outcome.body
    Draft202012Validator(schema(f"{tool}.output")).validate(outcome.body)
    return outcome.body


def fails(roots: Roots, tool: str, args) -> dict:
    outcome = call_tool(roots, tool, args)
    assert outcome.is_error, outcome.body
    assert list(outcome.body) == ["error"]
    ERROR_SCHEMA.validate(outcome.body["error"])
    return outcome.body["error"]


def search_paths(roots: Roots, query: str, **kw) -> list[tuple[str, str, int]]:
    body = ok(roots, "search", {"query": query, **kw})
    return [(m["repo"], m["path"], m["line"]) for m in body["result"]["matches"]]


# -- configuration -----------------------------------------------------------------------
def test_the_environment_wins_over_the_config_file_per_variable(tmp_path):
    for name in ("env_docs", "conf_docs", "conf_code"):
        (tmp_path / name).mkdir()
    conf = tmp_path / "rt.toml"
    conf.write_text('docs_root = "conf_docs"\ncode_root = "conf_code"\n')
    roots = load_roots(parse_args(["--config", str(conf)]), {"DOCS_ROOT": str(tmp_path / "env_docs")})
    assert roots.docs == (tmp_path / "env_docs").resolve()
    assert roots.code == (tmp_path / "conf_code").resolve()


def test_relative_roots_in_the_config_file_resolve_against_its_directory(tmp_path, monkeypatch):
    (tmp_path / "cfg" / "d").mkdir(parents=True)
    (tmp_path / "cfg" / "c").mkdir()
    (tmp_path / "cfg" / "rt.toml").write_text('docs_root = "d"\ncode_root = "./c"\n')
    monkeypatch.chdir(tmp_path)
    roots = load_roots(parse_args([]), {"RT_CONFIG": "cfg/rt.toml"})
    assert (roots.docs, roots.code) == ((tmp_path / "cfg/d").resolve(), (tmp_path / "cfg/c").resolve())


def test_the_default_config_file_is_read_from_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "d").mkdir()
    (tmp_path / "c").mkdir()
    (tmp_path / "retrieval-tools.toml").write_text('docs_root = "d"\ncode_root = "c"\n')
    monkeypatch.chdir(tmp_path)
    assert load_roots(parse_args([]), {}).code == (tmp_path / "c").resolve()


@pytest.mark.parametrize("setup,message", [
    ("missing", "DOCS_ROOT does not exist"),
    ("file", "DOCS_ROOT is not a directory"),
    ("unset", "DOCS_ROOT is not set"),
])
def test_an_unusable_root_names_the_variable_and_the_reason(tmp_path, monkeypatch, setup, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "code").mkdir()
    env = {"CODE_ROOT": str(tmp_path / "code")}
    if setup == "missing":
        env["DOCS_ROOT"] = str(tmp_path / "nope")
    elif setup == "file":
        (tmp_path / "f.md").write_text("x")
        env["DOCS_ROOT"] = str(tmp_path / "f.md")
    with pytest.raises(ConfigError) as info:
        load_roots(parse_args([]), env)
    assert str(info.value).startswith(message)


def test_an_unreadable_root_is_refused(tmp_path, monkeypatch):
    for name in ("docs", "code"):
        (tmp_path / name).mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if str(p).endswith("code") else real_access(p, m))
    with pytest.raises(ConfigError, match="^CODE_ROOT is not readable$"):
        load_roots(parse_args([]), {"DOCS_ROOT": str(tmp_path / "docs"), "CODE_ROOT": str(tmp_path / "code")})


@pytest.mark.parametrize("content,message", [
    (None, "--config file does not exist"),
    ("docs_root = [", "--config file is not valid TOML"),
    ('docs_root = 3\ncode_root = "c"\n', "DOCS_ROOT is invalid"),
])
def test_a_bad_config_file_is_refused_with_one_line(tmp_path, content, message):
    conf = tmp_path / "rt.toml"
    if content is not None:
        conf.write_text(content)
    with pytest.raises(ConfigError) as info:
        load_roots(parse_args(["--config", str(conf)]), {})
    assert str(info.value).startswith(message) and "\n" not in str(info.value)
    assert str(tmp_path) not in str(info.value)


def test_startup_failure_prints_one_line_and_exits_2_before_serving(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "LISTINGTOKEN.md").write_text("x")
    env = {**os.environ, "DOCS_ROOT": str(tmp_path / "docs"), "CODE_ROOT": str(tmp_path / "absent")}
    env.pop("RT_CONFIG", None)
    proc = subprocess.run([sys.executable, "-m", "reference.retrieval_tools.server"], cwd=ROOT, env=env,
                          input=b"", capture_output=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert proc.stderr.decode().splitlines() == ["retrieval-tools: CODE_ROOT does not exist"]


def test_a_root_that_vanishes_after_start_is_config_invalid(tmp_path):
    roots = make_roots(tmp_path, {"docs/a.md": "alpha\n", "code/b.py": "alpha\n"})
    (tmp_path / "code" / "b.py").unlink()
    (tmp_path / "code").rmdir()
    for tool, args in [("search", {"query": "alpha"}), ("list_dir", {"repo": "code"}),
                       ("open_file", {"repo": "code", "path": "b.py"})]:
        error = fails(roots, tool, args)
        assert error["code"] == "CONFIG_INVALID"
        assert error["details"] == {"repo": "code", "reason": "missing"}
    assert ok(roots, "search", {"query": "alpha", "repo": "docs"})["result"]["matches"]


# -- path rules --------------------------------------------------------------------------
@pytest.mark.parametrize("raw,expected", [
    ("guide/intro.md", "guide/intro.md"), (" guide\\intro.md\t", "guide/intro.md"),
    ("./guide//./intro.md", "guide/intro.md"), ("\u3000README.md\ufeff", "README.md"),
    ("a/b/", "a/b"),
])
def test_safe_paths_normalize(raw, expected):
    assert normalize(raw, "docs") == expected


@pytest.mark.parametrize("raw,code,reason", [
    ("", "PATH_INVALID", "empty"), ("./", "PATH_INVALID", "empty"),
    ("a\x00b", "PATH_INVALID", "control_character"), ("a\x1fb", "PATH_INVALID", "control_character"),
    ("/etc/passwd", "PATH_INVALID", "absolute_path"), ("\\etc\\passwd", "PATH_INVALID", "absolute_path"),
    ("C:\\x.md", "PATH_INVALID", "drive_path"), ("z:x.md", "PATH_INVALID", "drive_path"),
    ("\\\\host\\share\\x", "PATH_INVALID", "unc_path"), ("//host/share", "PATH_INVALID", "unc_path"),
    ("~", "PATH_INVALID", "home_path"), ("~root/x", "PATH_INVALID", "home_path"),
    ("a\ud800.md", "PATH_INVALID", "invalid_unicode"),
    ("..", "PATH_TRAVERSAL", "dot_dot_segment"), ("a/../b", "PATH_TRAVERSAL", "dot_dot_segment"),
    ("a\\..\\..\\b", "PATH_TRAVERSAL", "dot_dot_segment"),
    ("a/" * 2046 + "x.md", "PATH_INVALID", "too_long"), ("a/" * 34998 + "x.md", "PATH_INVALID", "too_long"),
    ("a/" * 300 + "../" * 301 + "x", "PATH_TRAVERSAL", "dot_dot_segment"),  # the text's own rule first
])
def test_unsafe_paths_are_refused_by_text_alone(raw, code, reason):
    with pytest.raises(ToolError) as info:
        normalize(raw, "docs")
    assert (info.value.code, info.value.details["reason"]) == (code, reason)


def test_names_with_dots_inside_are_not_traversal():
    assert normalize("a..b/..c", "docs") == "a..b/..c"


def test_the_root_is_allowed_only_for_directories():
    assert normalize("  ./ ", "docs", allow_root=True) == ""


def test_a_sibling_sharing_the_root_name_prefix_is_outside(tmp_path):
    build_fixture(tmp_path)
    code = (tmp_path / "code").resolve()
    os.symlink(tmp_path / "code_evil" / "secret.md", tmp_path / "code" / "evil.md")
    with pytest.raises(ToolError) as info:
        resolve(code, "evil.md", "code")
    assert info.value.code == "PATH_OUTSIDE_ROOT"
    assert resolve(code, "src/main.py", "code") == code / "src" / "main.py"


def test_a_symlink_inside_the_root_may_be_opened_but_is_never_listed_or_searched(tmp_path):
    roots = make_roots(tmp_path, {"docs/real.md": "needle\n"})
    os.symlink(tmp_path / "docs" / "real.md", tmp_path / "docs" / "alias.md")
    os.symlink(tmp_path / "docs", tmp_path / "docs" / "loopdir")
    assert ok(roots, "open_file", {"repo": "docs", "path": "alias.md"})["result"]["lines"][0]["text"] == "needle"
    assert [e["name"] for e in ok(roots, "list_dir", {})["result"]["entries"]] == ["real.md"]
    assert search_paths(roots, "needle") == [("docs", "real.md", 1)]
    assert fails(roots, "list_dir", {"path": "loopdir"})["code"] == "DIR_NOT_FOUND"


def test_paths_that_would_not_round_trip_are_not_listed(tmp_path):
    roots = make_roots(tmp_path, {"docs/ok.md": "x\n", "docs/back\\slash.md": "x\n", "docs/~tilde.md": "x\n",
                                  "docs/ctl\x01.md": "x\n", "docs/ trailing .md": "x\n", "docs/C:drive.md": "x\n"})
    assert [e["path"] for e in ok(roots, "list_dir", {})["result"]["entries"]] == ["ok.md"]
    assert round_trips("a/b.md") and not round_trips("a\\b.md")


# -- visibility: hidden names and .gitignore ---------------------------------------------
def visible_files(root: Path) -> list[str]:
    return [rel for rel, _abs in walk.walk_files(root)]


def test_the_fixture_lists_exactly_the_visible_files(roots):
    assert visible_files(roots.docs) == ["README.md", "api/reference.md", "empty.md", "guide/advanced.md",
                                         "guide/draft-keep.md", "guide/intro.md", "image.png", "lines.md"]
    assert visible_files(roots.code) == ["data.bin", "src/main.py", "src/util.py", "tests/test_main.py"]


def test_nested_gitignore_patterns_are_relative_to_their_directory(tmp_path):
    roots = make_roots(tmp_path, {
        "docs/.gitignore": "/top.md\n",
        "docs/top.md": "x", "docs/sub/top.md": "x",
        "docs/sub/.gitignore": "/only-here.md\nlocal/\n",
        "docs/sub/only-here.md": "x", "docs/only-here.md": "x", "docs/sub/deeper/only-here.md": "x",
        "docs/sub/local/a.md": "x", "docs/local/a.md": "x",
    })
    assert visible_files(roots.docs) == ["local/a.md", "only-here.md", "sub/deeper/only-here.md", "sub/top.md"]


def test_a_deeper_gitignore_overrides_a_shallower_one_both_ways(tmp_path):
    roots = make_roots(tmp_path, {
        "docs/.gitignore": "*.tmp\n!keep.txt\n",
        "docs/a/.gitignore": "!wanted.tmp\nkeep.txt\n",
        "docs/x.tmp": "x", "docs/keep.txt": "x",
        "docs/a/x.tmp": "x", "docs/a/wanted.tmp": "x", "docs/a/keep.txt": "x",
    })
    assert visible_files(roots.docs) == ["a/wanted.tmp", "keep.txt"]


def test_negation_cannot_reinclude_a_file_inside_an_ignored_directory(tmp_path):
    roots = make_roots(tmp_path, {
        "docs/.gitignore": "build/\n!build/keep.md\n", "docs/build/keep.md": "x",
        "docs/build/other.md": "x", "docs/ok.md": "x",
    })
    assert visible_files(roots.docs) == ["ok.md"]
    assert fails(roots, "open_file", {"repo": "docs", "path": "build/keep.md"})["code"] == "FILE_NOT_FOUND"


def test_a_directory_only_pattern_does_not_hide_a_file_of_that_name(tmp_path):
    roots = make_roots(tmp_path, {"docs/.gitignore": "out/\n", "docs/out": "a file\n", "docs/sub/out/x.md": "x"})
    assert visible_files(roots.docs) == ["out"]
    assert ok(roots, "open_file", {"repo": "docs", "path": "out"})["result"]["line_count"] == 1


def test_last_matching_pattern_in_one_file_wins(tmp_path):
    roots = make_roots(tmp_path, {"docs/.gitignore": "!a.md\n*.md\n", "docs/a.md": "x", "docs/b.txt": "x"})
    assert visible_files(roots.docs) == ["b.txt"]


def test_git_info_exclude_is_not_read(tmp_path):
    roots = make_roots(tmp_path, {"docs/.git/info/exclude": "*.md\n", "docs/a.md": "x"})
    assert visible_files(roots.docs) == ["a.md"]


def test_hidden_names_are_skipped_at_any_depth(tmp_path):
    roots = make_roots(tmp_path, {"docs/a/.b/c.md": "x", "docs/a/.d.md": "x", "docs/a/e.md": "x"})
    assert visible_files(roots.docs) == ["a/e.md"]
    assert [e["name"] for e in ok(roots, "list_dir", {"path": "a"})["result"]["entries"]] == ["e.md"]


# -- bytes, text and lines ---------------------------------------------------------------
@pytest.mark.parametrize("data,reason", [
    (b"abc\x00def", "nul_byte"), (b"caf\xe9\n", "invalid_utf8"), (b"ok\n" + b"\xff", "invalid_utf8"),
])
def test_binary_means_a_nul_in_the_first_8192_bytes_or_invalid_utf8(data, reason):
    with pytest.raises(walk.Binary) as info:
        walk.decode_text(data)
    assert info.value.reason == reason


def test_a_nul_after_the_first_8192_bytes_in_valid_utf8_is_text():
    assert walk.decode_text(b"a" * 8192 + b"\x00").endswith("\x00")


@pytest.mark.parametrize("text,lines", [
    ("", []), ("\n", [""]), ("a", ["a"]), ("a\n", ["a"]), ("a\n\n", ["a", ""]),
    ("a\r\nb\r\n", ["a", "b"]), ("a\r\r\n", ["a\r"]), ("a\rb", ["a\rb"]),
])
def test_lines_split_on_newline_and_drop_one_carriage_return(text, lines):
    assert walk.split_lines(text) == lines


def test_open_file_numbers_lines_and_counts_them(tmp_path):
    roots = make_roots(tmp_path, {"code/a.txt": "one\r\ntwo\n\nfour"})
    result = ok(roots, "open_file", {"repo": "code", "path": " a.txt "})["result"]
    assert result == {"repo": "code", "path": "a.txt", "line_count": 4, "lines": [
        {"line": 1, "text": "one"}, {"line": 2, "text": "two"}, {"line": 3, "text": ""},
        {"line": 4, "text": "four"}]}


def test_an_empty_file_has_no_lines(roots):
    assert ok(roots, "open_file", {"repo": "docs", "path": "empty.md"})["result"]["line_count"] == 0


def test_the_size_limit_is_10_mib_inclusive(tmp_path):
    roots = make_roots(tmp_path, {"docs/at.md": b"a" * walk.MAX_FILE_BYTES,
                                  "docs/over.md": b"a" * (walk.MAX_FILE_BYTES + 1)})
    assert ok(roots, "get_snippet", {"repo": "docs", "path": "at.md", "start_line": 1, "end_line": 1})
    error = fails(roots, "open_file", {"repo": "docs", "path": "over.md"})
    assert error["code"] == "FILE_TOO_LARGE" and error["details"]["limit"] == 10485760
    assert search_paths(roots, "aaa") == [("docs", "at.md", 1)]


def test_a_fifo_is_not_a_file_and_never_blocks(tmp_path):
    roots = make_roots(tmp_path, {"docs/a.md": "x\n"})
    os.mkfifo(tmp_path / "docs" / "pipe")
    assert fails(roots, "open_file", {"repo": "docs", "path": "pipe"})["code"] == "NOT_A_FILE"
    assert [e["name"] for e in ok(roots, "list_dir", {})["result"]["entries"]] == ["a.md"]
    assert search_paths(roots, "x") == [("docs", "a.md", 1)]


# -- search ------------------------------------------------------------------------------
def test_search_orders_by_repo_then_code_point_path_then_line(tmp_path):
    roots = make_roots(tmp_path, {
        "code/a.md": "hit\n", "docs/b/x.md": "hit\n", "docs/b.md": "no\nhit\nhit\n", "docs/B.md": "hit\n",
        "docs/b-c.md": "hit\n", "docs/é.md": "hit\n", "docs/z.md": "hit\n",
    })
    assert search_paths(roots, "hit") == [
        ("docs", "B.md", 1), ("docs", "b-c.md", 1), ("docs", "b.md", 2), ("docs", "b.md", 3),
        ("docs", "b/x.md", 1), ("docs", "z.md", 1), ("docs", "é.md", 1), ("code", "a.md", 1)]
    assert search_paths(roots, "hit", repo="code") == [("code", "a.md", 1)]


def test_search_is_literal_and_case_sensitive(tmp_path):
    roots = make_roots(tmp_path, {"docs/a.md": "a.b\naxb\nA.B\n(a.b)*\n"})
    assert search_paths(roots, "a.b") == [("docs", "a.md", 1), ("docs", "a.md", 4)]
    assert search_paths(roots, "(a.b)*") == [("docs", "a.md", 4)]
    assert search_paths(roots, " a.b") == []


def test_search_gives_one_entry_per_matching_line(tmp_path):
    roots = make_roots(tmp_path, {"docs/a.md": "x x x\nnone\nx\n"})
    assert search_paths(roots, "x") == [("docs", "a.md", 1), ("docs", "a.md", 3)]


def test_search_matches_within_lines_only(tmp_path):
    roots = make_roots(tmp_path, {"docs/a.md": "end\r\nstart\nend\rmid\n"})
    assert search_paths(roots, "end\nstart") == []
    assert search_paths(roots, "end\r") == [("docs", "a.md", 3)]
    body = ok(roots, "search", {"query": "end"})
    assert [m["preview"] for m in body["result"]["matches"]] == ["end", "end\rmid"]


def test_search_skips_hidden_ignored_binary_and_symlinked_files(roots):
    for token in ("HIDDENTOKEN", "SECRETTOKEN", "BUILDTOKEN", "LOGTOKEN", "DRAFTTOKEN", "ENVTOKEN",
                  "NODETOKEN", "IMAGETOKEN", "BINTOKEN", "EVILTOKEN", "OUTSIDETOKEN"):
        assert search_paths(roots, token) == [], token
    assert search_paths(roots, "KEEPTOKEN") == [("docs", "guide/draft-keep.md", 1)]


def test_the_fixture_search_for_main_spans_both_repos(roots):
    assert search_paths(roots, "main") == [
        ("docs", "api/reference.md", 2), ("code", "src/main.py", 1), ("code", "src/util.py", 2),
        ("code", "tests/test_main.py", 1)]


@pytest.mark.parametrize("limit,count,truncated", [(1, 1, True), (29, 29, True), (30, 30, False),
                                                   (31, 30, False), (10000, 30, False)])
def test_truncated_is_true_exactly_when_more_matches_existed(roots, limit, count, truncated):
    body = ok(roots, "search", {"query": "line ", "repo": "docs", "limit": limit})
    assert len(body["result"]["matches"]) == count
    assert body["meta"] == {"repo": "docs", "duration_ms": body["meta"]["duration_ms"], "truncated": truncated}
    assert [m["line"] for m in body["result"]["matches"]] == list(range(1, count + 1))


def test_truncation_counts_across_repos(tmp_path):
    roots = make_roots(tmp_path, {"docs/a.md": "hit\n", "code/b.md": "hit\n"})
    assert ok(roots, "search", {"query": "hit", "limit": 1})["meta"]["truncated"] is True
    assert ok(roots, "search", {"query": "hit", "limit": 2})["meta"]["truncated"] is False


def test_search_defaults_are_both_repos_and_200_matches(tmp_path):
    roots = make_roots(tmp_path, {"docs/a.md": "hit\n" * 150, "code/b.md": "hit\n" * 150})
    body = ok(roots, "search", {"query": "hit"})
    assert len(body["result"]["matches"]) == 200
    assert body["meta"]["repo"] == "both" and body["meta"]["truncated"] is True
    assert ok(roots, "search", {"query": "hit", "limit": 300.0})["meta"]["truncated"] is False


@pytest.mark.parametrize("index,expected_start", [(0, 0), (79, 0), (80, 0), (81, 1), (150, 70),
                                                  (430, 350), (440, 360), (599, 360)])
def test_a_long_line_previews_240_characters_from_80_before_the_first_match(index, expected_start):
    line = "".join(chr(0x4E00 + i) for i in range(600))  # distinct characters, not ASCII
    assert preview_of(line, index) == line[expected_start:expected_start + 240]
    assert preview_of("short line", 3) == "short line"
    assert preview_of("x" * 240, 200) == "x" * 240


def test_search_preview_uses_the_first_match_in_the_line(tmp_path):
    line = "a" * 100 + "NEEDLE" + "b" * 200 + "NEEDLE" + "c" * 10
    roots = make_roots(tmp_path, {"docs/a.md": line + "\n"})
    (match,) = ok(roots, "search", {"query": "NEEDLE"})["result"]["matches"]
    assert match["preview"] == line[20:260]


def test_search_reads_the_disk_at_each_call(tmp_path):
    roots = make_roots(tmp_path, {"docs/a.md": "old\n"})
    assert search_paths(roots, "fresh") == []
    (tmp_path / "docs" / "a.md").write_text("fresh\n")
    assert search_paths(roots, "fresh") == [("docs", "a.md", 1)]
    (tmp_path / "docs" / "b.md").write_text("x\nfresh\n")
    assert search_paths(roots, "fresh") == [("docs", "a.md", 1), ("docs", "b.md", 2)]


def test_search_is_deterministic(roots):
    first = ok(roots, "search", {"query": "e"})["result"]
    assert all(ok(roots, "search", {"query": "e"})["result"] == first for _ in range(3))


# -- get_snippet and list_dir ------------------------------------------------------------
def test_get_snippet_returns_the_range_and_clamps_the_end(roots):
    body = ok(roots, "get_snippet", {"repo": "docs", "path": "lines.md", "start_line": 3, "end_line": 4})
    assert body["result"]["lines"] == [{"line": 3, "text": "line 3"}, {"line": 4, "text": "line 4"}]
    assert body["meta"]["truncated"] is False
    body = ok(roots, "get_snippet", {"repo": "docs", "path": "lines.md", "start_line": 29, "end_line": 99})
    result = body["result"]
    assert (result["start_line"], result["end_line"], result["line_count"]) == (29, 30, 30)
    assert [ln["line"] for ln in result["lines"]] == [29, 30] and body["meta"]["truncated"] is True
    exact = ok(roots, "get_snippet", {"repo": "docs", "path": "lines.md", "start_line": 30, "end_line": 30})
    assert exact["meta"]["truncated"] is False and exact["result"]["lines"] == [{"line": 30, "text": "line 30"}]


def test_range_beyond_the_file_reports_the_line_count(roots):
    error = fails(roots, "get_snippet", {"repo": "docs", "path": "lines.md", "start_line": 31, "end_line": 31})
    assert error["details"] == {"field": "start_line", "reason": "start_after_last_line", "line_count": 30}


def test_list_dir_lists_visible_entries_sorted_by_name(roots):
    body = ok(roots, "list_dir", {})
    assert body["meta"]["repo"] == "docs" and body["result"]["path"] == ""
    assert [(e["name"], e["type"]) for e in body["result"]["entries"]] == [
        ("README.md", "file"), ("api", "dir"), ("empty.md", "file"), ("guide", "dir"),
        ("image.png", "file"), ("lines.md", "file"), ("links", "dir")]
    guide = ok(roots, "list_dir", {"repo": "docs", "path": "guide/"})["result"]
    assert guide["path"] == "guide"
    assert [e["path"] for e in guide["entries"]] == ["guide/advanced.md", "guide/draft-keep.md", "guide/intro.md"]
    assert ok(roots, "list_dir", {"path": "links"})["result"]["entries"] == []
    assert [e["name"] for e in ok(roots, "list_dir", {"repo": "code"})["result"]["entries"]] == [
        "data.bin", "links", "src", "tests"]


def test_every_listed_or_found_path_can_be_passed_back(roots):
    """What search and list_dir report, open_file and list_dir accept (binary files aside)."""
    for repo in ("docs", "code"):
        pending = [""]
        while pending:
            directory = pending.pop()
            for entry in ok(roots, "list_dir", {"repo": repo, "path": directory})["result"]["entries"]:
                if entry["type"] == "dir":
                    pending.append(entry["path"])
                    continue
                outcome = call_tool(roots, "open_file", {"repo": repo, "path": entry["path"]})
                assert not outcome.is_error or outcome.body["error"]["code"] == "FILE_BINARY", entry
        root = roots.get(repo)
        assert all(walk.is_visible(root, rel, False) for rel in visible_files(root))


def test_no_tool_writes_to_the_roots(roots, fixture_root):
    def snapshot():
        return sorted((str(p), p.lstat().st_size, p.lstat().st_mtime_ns) for p in fixture_root.rglob("*"))

    before = snapshot()
    for case in CATALOGUE["cases"]:
        call_tool(roots, case["tool"], case["arguments"])
    ok(roots, "search", {"query": "e", "limit": 10000})
    ok(roots, "get_snippet", {"repo": "docs", "path": "lines.md", "start_line": 1, "end_line": 99})
    assert snapshot() == before


# -- the error catalogue -----------------------------------------------------------------
def test_the_catalogue_documents_exactly_the_reference_codes_and_messages():
    documented = {e["code"]: e for e in CATALOGUE["errors"]}
    assert list(documented) == list(errors.CODES)
    for code, entry in documented.items():
        assert entry["message"] == errors.MESSAGES[code], code
        assert set(entry["details"]) <= errors.DETAIL_KEYS, code
        assert set(entry["tools"]) <= set(TOOL_NAMES) and entry["when"], code
    assert set(schema("error")["properties"]["code"]["enum"]) == set(errors.CODES)


def test_every_tool_has_a_case_for_each_of_its_reachable_codes():
    covered = {(c["tool"], c["expect_code"]) for c in CATALOGUE["cases"] + CATALOGUE["setup_cases"]}
    missing = [(tool, e["code"]) for e in CATALOGUE["errors"] if e["code"] != "INTERNAL_ERROR"
               and not e.get("unprivileged") for tool in e["tools"] if (tool, e["code"]) not in covered]
    assert not missing
    ids = [c["id"] for c in CATALOGUE["cases"] + CATALOGUE["setup_cases"]]
    assert len(ids) == len(set(ids)) and len(CATALOGUE["cases"]) >= 30


@pytest.mark.parametrize("case", CATALOGUE["cases"], ids=lambda c: c["id"])
def test_catalogue_case(roots, case):
    error = fails(roots, case["tool"], case["arguments"])
    assert error["code"] == case["expect_code"]
    assert error["message"] == errors.MESSAGES[error["code"]]
    text = json.dumps(error, ensure_ascii=False)
    for value in case["arguments"].values():
        if isinstance(value, str) and len(value.strip()) >= 3 and value not in ("docs", "code", "both"):
            assert value not in text and value.strip() not in text
    assert str(roots.docs.parent) not in text


@pytest.mark.parametrize("case", CATALOGUE["setup_cases"], ids=lambda c: c["id"])
def test_catalogue_setup_case(tmp_path, case):
    fixture = build_fixture(tmp_path)
    roots = Roots(docs=(fixture / "docs").resolve(), code=(fixture / "code").resolve())
    setup = case["setup"]
    if setup["action"] == "create_file":
        (fixture / setup["repo"] / setup["path"]).write_bytes(b"a" * setup["bytes"])
    else:
        shutil.rmtree(fixture / setup["repo"])
    error = fails(roots, case["tool"], case["arguments"])
    assert error["code"] == case["expect_code"]


def test_catalogue_cases_also_hold_on_the_suites_own_fixture(tmp_path):
    """Guards against drift between this file's helper and contract_tests/synthetic/roots.py."""
    from contract_tests.synthetic.roots import build_roots

    fixture = build_roots(tmp_path, traps="all")  # the symlink cases need the trap roots
    suite_roots = Roots(docs=fixture.repo_root("docs").resolve(), code=fixture.repo_root("code").resolve())
    wrong = {c["id"]: fails(suite_roots, c["tool"], c["arguments"])["code"] for c in CATALOGUE["cases"]}
    wrong = {k: v for k, v in wrong.items() if v != next(c["expect_code"] for c in CATALOGUE["cases"] if c["id"] == k)}
    assert not wrong


def test_an_unknown_tool_is_an_error_that_does_not_echo_its_name(roots):
    error = fails(roots, "delete_everything", {})
    assert error["code"] == "INVALID_ARGUMENT" and "delete" not in json.dumps(error)


def test_an_unexpected_field_is_not_echoed(roots):
    error = fails(roots, "list_dir", {"SECRETFIELDNAME": 1})
    assert "SECRETFIELDNAME" not in json.dumps(error)


def test_tool_errors_refuse_keys_outside_the_allowlist():
    with pytest.raises(ValueError):
        ToolError("FILE_NOT_FOUND", path="/etc/passwd")


# -- schemas and the server surface ------------------------------------------------------
@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_the_input_schema_matches_the_argument_table(tool):
    s = schema(f"{tool}.input")
    assert s["additionalProperties"] is False
    assert list(s["properties"]) == [f.name for f in FIELDS[tool]]
    assert sorted(s["required"]) == sorted(f.name for f in FIELDS[tool] if f.required)
    for f in FIELDS[tool]:
        assert s["properties"][f.name]["type"] == ("integer" if f.kind is int else "string")
        if not f.required:
            assert s["properties"][f.name]["default"] == f.default


def test_the_tool_list_is_four_read_only_tools_with_both_schemas():
    tools = server.tool_list()
    assert [t.name for t in tools] == list(TOOL_NAMES)
    for t in tools:
        a = t.annotations
        assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == (True, False, True, False)
        assert t.input_schema == schema(f"{t.name}.input") and t.output_schema == schema(f"{t.name}.output")
        assert t.description


def test_results_carry_the_same_envelope_as_text_and_structured_content(roots):
    result = server.to_result(call_tool(roots, "list_dir", {}))
    assert json.loads(result.content[0].text) == result.structured_content and not result.is_error
    error = server.to_result(call_tool(roots, "list_dir", {"path": ".."}))
    assert error.is_error and len(error.content) == 1
    assert json.loads(error.content[0].text)["error"]["code"] == "PATH_TRAVERSAL"


def test_the_log_line_names_tool_repo_duration_outcome_and_code_only(roots):
    line = server.log_line("open_file", call_tool(roots, "open_file", {"repo": "docs", "path": "guide/zzsecret.md"}))
    assert line.startswith("tool=open_file repo=docs duration_ms=")
    assert line.endswith(" outcome=error code=FILE_NOT_FOUND") and "zzsecret" not in line
    line = server.log_line("search", call_tool(roots, "search", {"query": "Welcome"}))
    assert line.startswith("tool=search repo=both ") and line.endswith(" outcome=ok") and "Welcome" not in line
    assert server.log_line("x", call_tool(roots, "x", {})).startswith("tool=unknown repo=- ")


def test_the_server_serves_every_tool_over_stdio(fixture_root):
    from contract_tests.transport.stdio import StdioServer

    env = {**os.environ, "DOCS_ROOT": str(fixture_root / "docs"), "CODE_ROOT": str(fixture_root / "code")}
    srv = StdioServer([sys.executable, "-m", "reference.retrieval_tools.server"], env=env, cwd=ROOT)
    try:
        assert "result" in srv.initialize()
        listed = srv.request("tools/list", {})["result"]["tools"]
        assert [t["name"] for t in listed] == list(TOOL_NAMES)
        calls = [("search", {"query": "main"}), ("open_file", {"repo": "code", "path": "src/main.py"}),
                 ("get_snippet", {"repo": "docs", "path": "lines.md", "start_line": 2, "end_line": 3}),
                 ("list_dir", {"repo": "docs", "path": "guide"})]
        for name, args in calls:
            result = srv.call_tool(name, args)["result"]
            assert not result.get("isError") and json.loads(result["content"][0]["text"]) == result["structuredContent"]
        failed = srv.call_tool("open_file", {"repo": "docs", "path": "../outside/secret.md"})["result"]
        assert failed["isError"] is True
        assert json.loads(failed["content"][0]["text"])["error"]["code"] == "PATH_TRAVERSAL"
    finally:
        assert srv.close() == 0
    calls_logged = [line for line in srv.transcript.stderr if line.startswith("tool=")]
    assert len(calls_logged) == 5 and calls_logged[-1].endswith("outcome=error code=PATH_TRAVERSAL")
    assert not any("secret" in line or "main" in line for line in srv.transcript.stderr)
