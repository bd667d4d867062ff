"""`retrieval-contract scoreboard`: a board built offline from the worked-example servers and the
generic-files mutants (the verdicts, the site, scoreboard.json against its schema, the badges,
resume, shards and their merge), the sandbox's confinement, the install cache's runtime checks,
and, opt-in (RC_SCOREBOARD_CATALOG=1), the shipped catalog built from the registries."""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
import yaml

from contract_tests.scoreboard import catalog as catalog_mod
from contract_tests.scoreboard import install, sandbox
from contract_tests.scoreboard.board import portable, rerun_line

ROOT = Path(__file__).resolve().parent.parent
FS = str(ROOT / "examples" / "generic-files" / "fs.yaml")
DOCS = str(ROOT / "examples" / "generic-files" / "docs.yaml")
MUTANTS = ROOT / "tests" / "mutants" / "launch_gf_fs.py"
# the docs example, its root read from a config file the scoreboard writes from the template
DOCS_FROM_CONFIG = ("import json, os, runpy, sys; os.environ['DOCS_DIR'] = json.load(open(sys.argv[1]))['root']; "
                    "sys.argv = ['docs']; runpy.run_module('reference.generic_files.docs', run_name='__main__')")


def scoreboard(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "contract_tests.cli", "scoreboard", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900)


def write_catalog(path: Path, servers: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"servers": servers}, sort_keys=False))
    return path


def quick_entries() -> list[dict]:
    """Entries that need no run of the sweep: two whose runtime is missing, two that cannot start."""
    return [
        {"name": "needs-node-99", "package": "npm:@modelcontextprotocol/server-filesystem@2026.8.31",
         "runtime": {"node": ">=99"}},
        {"name": "needs-python-9", "package": "pypi:mcp-server-example==1.0.0", "runtime": {"python": ">=9"}},
        {"name": "exits-at-once", "package": "command:{python} -c 'import sys; sys.exit(3)' {root}"},
        {"name": "exits-too", "package": "command:{python} -c 'import sys; sys.stderr.write("
                                          "\"getaddrinfo ENOTFOUND registry.example.invalid\\n\"); sys.exit(4)' {root}"},
    ]


@pytest.fixture(scope="session")
def board(tmp_path_factory):
    """One offline board: the fs example (passes), two fs mutants (an escape; a tool not read-only),
    the docs example started from a config file (passes), and the quick entries. Built once per
    run: the first xdist worker to need it builds it, the other waits and reads it."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    base = tmp_path_factory.getbasetemp()
    folder = base.parent / f"rc-scoreboard-{run}" if run else base / "rc-scoreboard"
    with (base.parent / f"rc-scoreboard-{run}.lock" if run else base / "rc-scoreboard.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / "built.json"
        if not done.is_file():
            proc = _build_board(folder)
            done.write_text(json.dumps([proc.returncode, proc.stdout, proc.stderr]))
        code, stdout, stderr = json.loads(done.read_text())
    return folder / "catalog.yaml", folder / "out", subprocess.CompletedProcess([], code, stdout, stderr)


def _build_board(folder: Path) -> subprocess.CompletedProcess:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    servers = [
        {"name": "fs-example", "package": "command:{python} -m reference.generic_files.fs {root}", "mapping": FS,
         "note": "the worked example"},
        {"name": "fs-prefix-sibling", "package": f"command:{{python}} {MUTANTS} gf_fs_prefix_sibling {{root}}",
         "mapping": FS},
        {"name": "fs-not-read-only", "package": f"command:{{python}} {MUTANTS} gf_fs_read_tool_not_read_only {{root}}",
         "mapping": FS},
        {"name": "docs-from-config", "package": f"command:{{python}} -c {shlex.quote(DOCS_FROM_CONFIG)}",
         "args": ["{config}"], "config": {"name": "docs.json", "text": '{"root": "{root}"}'}, "mapping": DOCS},
        *quick_entries(),
    ]
    path = write_catalog(folder / "catalog.yaml", servers)
    out = folder / "out"
    return scoreboard(str(path), "--out", str(out), "-j", "2", "--cache", str(folder / "cache"))


def _doc(out: Path) -> dict:
    return json.loads((out / "scoreboard.json").read_text())


def test_the_board_judges_each_server_as_a_run_of_the_suite_would(board):
    _path, out, proc = board
    assert proc.returncode == 0, proc.stdout + proc.stderr
    servers = {s["name"]: s for s in _doc(out)["servers"]}
    assert servers["fs-example"]["overall"] == "pass", servers["fs-example"]
    assert servers["docs-from-config"]["overall"] == "pass", servers["docs-from-config"]
    escape = servers["fs-prefix-sibling"]
    assert escape["overall"] == "fail" and escape["verdicts"]["GF-ESC-001"] == "fail"
    assert escape["first_finding"].startswith("GF-ESC-001 (fail): sibling-prefix")  # the id once
    assert {r for r, v in escape["verdicts"].items() if v == "fail"} == {"GF-ESC-001"}
    hint = servers["fs-not-read-only"]
    assert hint["overall"] == "advisory" and hint["verdicts"]["MCP-TOOLS-002"] == "advisory", hint
    for name in ("needs-node-99", "needs-python-9"):
        assert servers[name]["state"] == "not run" and servers[name]["overall"] == "not run", servers[name]
        assert servers[name]["verdicts"] == {}
    assert "needs Node ≥ 99" in servers["needs-node-99"]["reason"]
    assert "needs Python ≥ 9" in servers["needs-python-9"]["reason"]
    assert servers["exits-at-once"]["overall"] == "error" and servers["exits-at-once"]["state"] == "ran"
    assert "exited or closed its output before answering initialize" in servers["exits-at-once"]["reason"]
    assert servers["exits-too"]["network"] == ["getaddrinfo ENOTFOUND registry.example.invalid"]  # recorded
    assert servers["exits-at-once"]["network"] == [] and servers["fs-example"]["network"] == []
    page = (out / "servers" / "exits-too.html").read_text()
    assert "<h2>Network</h2>" in page and "ENOTFOUND" in page
    iso = {s["isolation"] for s in servers.values()}
    assert iso == {sandbox.choose("auto")}


def test_scoreboard_json_matches_its_schema_and_names_every_catalog_entry(board):
    path, out, _proc = board
    doc = _doc(out)
    jsonschema.validate(doc, json.loads((ROOT / "schemas" / "scoreboard.schema.json").read_text()))
    assert [s["name"] for s in doc["servers"]] == [e.name for e in catalog_mod.load(path)]
    assert doc["missing"] == []
    assert doc["requirements"][0]["id"].startswith("GF-")


def test_each_server_has_a_page_with_every_finding_its_rerun_line_its_mapping_and_a_badge(board):
    _path, out, _proc = board
    doc = _doc(out)
    page = (out / "servers" / "fs-prefix-sibling.html").read_text()
    assert "GF-ESC-001: fail" in page and "request: tools/call" in page
    assert "rerun: <code>retrieval-contract --profile generic-files --mapping fs-prefix-sibling.mapping.yaml" in page
    assert "test_no_path_or_search_reads_outside_the_root" in page
    mapping = yaml.safe_load((out / "servers" / "fs-prefix-sibling.mapping.yaml").read_text())
    assert "gf_fs_prefix_sibling" in mapping["server"]["cmd"] and "sandbox" not in mapping["server"]["cmd"]
    for server in doc["servers"]:
        svg = ET.fromstring((out / server["badge"]).read_text())
        texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
        assert texts[0] == "retrieval-contract", texts
        want = {"pass": "pass", "fail": "1 failing", "advisory": "pass, 1 advisory", "not run": "not run",
                "error": "error"}[server["overall"]]
        assert texts[1] == want, (server["name"], texts)
        assert (out / server["page"]).is_file()
    md = (out / "scoreboard.md").read_text()
    assert "| [fs-prefix-sibling](servers/fs-prefix-sibling.html) |" in md
    index = (out / "index.html").read_text()
    assert index.count("<tr data-overall=") == len(doc["servers"])


def test_a_rebuild_keeps_unchanged_entries_and_reruns_a_changed_or_refreshed_one(board, tmp_path):
    path, out, _proc = board
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    before = _doc(copy)
    again = scoreboard(str(path), "--out", str(copy), "--cache", str(tmp_path / "cache"),
                       "--only", "fs-example", "--only", "exits-at-once", "--only", "needs-node-99")
    assert again.returncode == 0, again.stderr
    assert "kept        fs-example" in again.stdout and "kept        exits-at-once" in again.stdout
    assert "kept        needs-node-99" not in again.stdout  # a missing runtime is looked for again
    built = {s["name"]: s["built"] for s in _doc(copy)["servers"]}
    assert built["fs-example"] == {s["name"]: s["built"] for s in before["servers"]}["fs-example"]
    data = yaml.safe_load(path.read_text())
    data["servers"][6]["package"] = "command:{python} -c 'import sys; sys.exit(5)' {root}"  # exits-at-once, changed
    changed = write_catalog(tmp_path / "catalog.yaml", data["servers"])
    for s in data["servers"]:  # the mapping paths are absolute: the copy stands anywhere
        assert not str(s.get("mapping", "/")).startswith(".")
    third = scoreboard(str(changed), "--out", str(copy), "--cache", str(tmp_path / "cache"),
                       "--only", "exits-at-once", "--only", "exits-too", "--refresh")
    assert "kept" not in third.stdout, third.stdout
    fourth = scoreboard(str(changed), "--out", str(copy), "--cache", str(tmp_path / "cache"), "--only", "exits-at-once")
    assert "kept        exits-at-once" in fourth.stdout, fourth.stdout
    data["servers"][6]["note"] = "checked by hand again"  # a note changes no run
    data["servers"][6]["checked"] = {"fail": []}
    noted = write_catalog(tmp_path / "noted.yaml", data["servers"])
    fifth = scoreboard(str(noted), "--out", str(copy), "--cache", str(tmp_path / "cache"), "--only", "exits-at-once")
    assert "kept        exits-at-once" in fifth.stdout, fifth.stdout
    assert {s["name"]: s["note"] for s in _doc(copy)["servers"]}["exits-at-once"] == "checked by hand again"


def test_shards_build_their_own_entries_and_a_merge_makes_the_whole_board(tmp_path):
    path = write_catalog(tmp_path / "catalog.yaml", quick_entries())
    for i in (1, 2):
        proc = scoreboard(str(path), "--out", str(tmp_path / f"s{i}"), "--shard", f"{i}/2", "--cache", str(tmp_path))
        assert proc.returncode == 0, proc.stderr
    one = _doc(tmp_path / "s1")
    assert [s["name"] for s in one["servers"]] == ["needs-node-99", "exits-at-once"]
    assert one["missing"] == ["needs-python-9", "exits-too"]
    merged = scoreboard(str(path), "--out", str(tmp_path / "all"), "--merge", str(tmp_path / "s1"), str(tmp_path / "s2"))
    assert merged.returncode == 0, merged.stderr
    whole = _doc(tmp_path / "all")
    assert [s["name"] for s in whole["servers"]] == [e["name"] for e in quick_entries()] and whole["missing"] == []
    assert (tmp_path / "all" / "servers" / "exits-too.html").is_file()
    part = scoreboard(str(path), "--out", str(tmp_path / "part"), "--merge", str(tmp_path / "s2"))
    assert part.returncode == 0, part.stderr
    assert _doc(tmp_path / "part")["missing"] == ["needs-node-99", "exits-at-once"]
    assert "Missing from this board" in (tmp_path / "part" / "index.html").read_text()


@pytest.mark.parametrize("servers, words", [
    ([{"name": "a", "package": "npm:left-pad"}], "servers/0/package"),  # no pinned version
    ([{"name": "a", "package": "command:x {root}"}, {"name": "a", "package": "command:y {root}"}], "used twice"),
    ([{"name": "a", "package": "command:x {root}", "mapping": "missing.yaml"}], "no mapping file missing.yaml"),
    ([{"name": "a", "package": "npm:x@1.0.0", "args": ["--stdio"]}], "nothing gives the server its root"),
    ([{"name": "a", "package": "npm:x@1.0.0", "args": ["{config}"]}], "{config} is used but the entry has no config"),
    ([{"name": "a", "package": "npm:x@1.0.0", "colour": "red"}], "Additional properties"),
])
def test_a_wrong_catalog_exits_2_naming_each_problem_and_runs_nothing(tmp_path, servers, words):
    path = write_catalog(tmp_path / "catalog.yaml", servers)
    proc = scoreboard(str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


def test_wrong_options_exit_2(tmp_path):
    path = write_catalog(tmp_path / "catalog.yaml", quick_entries()[:1])
    assert scoreboard(str(path), "--out", str(tmp_path / "o"), "--only", "nobody").returncode == 2
    assert scoreboard(str(path), "--out", str(tmp_path / "o"), "--shard", "3/2").returncode == 2
    assert scoreboard(str(path), "--out", str(tmp_path / "o"), "--merge", str(tmp_path)).returncode == 2


def test_rerun_lines_carry_the_root_the_environment_and_the_config_as_the_suite_takes_them(tmp_path):
    entry = catalog_mod.load(write_catalog(tmp_path / "c.yaml", [
        {"name": "env", "package": "pypi:some-server==1.2", "args": [], "env": {"NOTES_DIR": "{root}", "MODE": "a b"}},
        {"name": "cfg", "package": "npm:@x/notes@2.0.0", "beside": ["zod@3.25.76"], "args": ["--config", "{config}"],
         "config": {"name": "c.json", "text": '{"vault": "{root}"}'}},
    ]))
    env = portable(entry[0], "some-server")
    assert shlex.split(env)[:3] == ["env", "NOTES_DIR={root}", "MODE=a b"] and "uvx --from some-server==1.2" in env
    cfg = shlex.split(portable(entry[1], "notes"))
    assert cfg[:2] == ["sh", "-c"] and cfg[-1] == '{"vault": "{root}"}'
    assert "npx -y -p @x/notes@2.0.0 -p zod@3.25.76 notes --config c.json" in cfg[2]
    line = shlex.split(rerun_line(entry[0], "env.mapping.yaml", "contract_tests/x.py::test_y", "some-server"))
    assert line[:5] == ["retrieval-contract", "--profile", "generic-files", "--mapping", "env.mapping.yaml"]
    assert line[-1] == "contract_tests/x.py::test_y"


# -- the sandbox ---------------------------------------------------------------------------------

PROBE = ("import os, socket, sys\n"
         "out = []\n"
         "out.append('secret:' + ('seen' if os.path.exists(sys.argv[2]) else 'hidden'))\n"
         "out.append('fixture:' + ('seen' if os.path.exists(os.path.join(sys.argv[1], 'in.md')) else 'hidden'))\n"
         "try:\n"
         "    socket.create_connection(('192.0.2.1', 9), timeout=2); out.append('net:open')\n"
         "except OSError as exc:\n"
         "    out.append('net:' + type(exc).__name__)\n"
         "print(' '.join(out))\n")


def _probe(tmp_path: Path, isolation: str) -> str:
    fixture = tmp_path / "fixture" / "vault"
    fixture.mkdir(parents=True)
    (fixture / "in.md").write_text("inside")
    secret = tmp_path / "elsewhere" / "secret.md"  # the user's own file, beside neither
    secret.parent.mkdir()
    secret.write_text("mine")
    home = tmp_path / "private" / "home"
    home.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-c", PROBE, "{root}", str(secret)], "isolation": isolation,
            "visible": [sys.prefix, sys.base_prefix, str(ROOT)]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ, HOME=str(home))
    proc = subprocess.run([sys.executable, "-m", "contract_tests.scoreboard.sandbox", str(tmp_path / "spec.json"),
                           str(fixture)], cwd=home, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.mark.skipif(not sandbox.works("bwrap"), reason="bubblewrap is not installed or cannot make namespaces here")
def test_under_bwrap_the_server_sees_the_fixture_but_not_the_users_files_nor_the_network(tmp_path):
    assert _probe(tmp_path, "bwrap").split() == ["secret:hidden", "fixture:seen", "net:OSError"]


@pytest.mark.skipif(not sandbox.works("unshare"), reason="unshare cannot make a user and network namespace here")
def test_under_unshare_the_server_has_no_network(tmp_path):
    words = _probe(tmp_path, "unshare").split()
    assert words[1] == "fixture:seen" and words[2] != "net:open", words


def test_isolation_none_changes_nothing_and_a_missing_tool_is_a_usage_error(tmp_path, monkeypatch):
    assert _probe(tmp_path, "none").split()[:2] == ["secret:seen", "fixture:seen"]
    monkeypatch.setattr(sandbox, "works", lambda tool: tool == "none")
    assert sandbox.choose("auto") == "none"
    with pytest.raises(RuntimeError, match="cannot isolate"):
        sandbox.choose("bwrap")


# -- the install cache ---------------------------------------------------------------------------

def _cached_npm(tmp_path: Path, manifest: dict, **raw) -> catalog_mod.Entry:
    tmp_path.mkdir(parents=True, exist_ok=True)
    entry = catalog_mod.load(write_catalog(tmp_path / "c.yaml", [{"name": "x", "package": "npm:@x/server@1.0.0", **raw}]))[0]
    folder = install._folder(tmp_path / "cache", entry) / "node_modules" / "@x" / "server"
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps(manifest))
    return entry


@pytest.mark.skipif(not shutil.which("node") or not shutil.which("npm"), reason="node and npm check npm ranges")
def test_an_npm_package_whose_engines_the_machine_lacks_is_not_run_and_bins_are_chosen_or_named(tmp_path):
    assert install.node_satisfies("20.1.0", "^18 || >=20") and not install.node_satisfies("20.1.0", ">=22")
    entry = _cached_npm(tmp_path, {"engines": {"node": ">=99"}, "bin": "dist/index.js"})
    with pytest.raises(install.NotRun, match="needs Node ≥ 99 \\(its package.json engines\\)"):
        install.install(entry, tmp_path / "cache")
    two = _cached_npm(tmp_path / "b", {"bin": {"one": "a.js", "two": "b.js"}})
    with pytest.raises(install.InstallError, match="installs 2 executables \\(one, two\\): name one with `bin:`"):
        install.install(two, tmp_path / "b" / "cache")
    chosen = _cached_npm(tmp_path / "c", {"bin": {"one": "a.js", "two": "b.js"}}, bin="two")
    got = install.install(chosen, tmp_path / "c" / "cache")
    assert got.argv[1].endswith("/@x/server/b.js") and got.argv[2:] == ["{root}"] and got.bin == "two"


def test_a_python_range_no_interpreter_meets_is_not_run(tmp_path):
    entry = catalog_mod.load(write_catalog(tmp_path / "c.yaml", [
        {"name": "x", "package": "pypi:x==1", "runtime": {"python": ">=9"}}]))[0]
    with pytest.raises(install.NotRun, match="needs Python ≥ 9; this machine has 3\\."):
        install.install(entry, tmp_path)
    assert install.pythons() and install.pythons()[0][0] >= install.pythons()[-1][0]


# -- in a real browser ---------------------------------------------------------------------------

def _chromium() -> str | None:
    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


@pytest.mark.skipif(_chromium() is None, reason="no chromium binary on PATH (CI installs it: apt-get install chromium)")
def test_in_a_real_browser_the_index_filters_and_sorts_from_its_own_files(board):
    _path, out, _proc = board

    def dom(fragment: str) -> str:
        proc = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--virtual-time-budget=5000", "--dump-dom", (out / "index.html").as_uri() + fragment],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    filtered = dom("#verdict=fail")
    assert "1 of 8 servers" in filtered
    rows = [line for line in filtered.split("<tr ")[1:]]
    shown = [r for r in rows if 'style="display: none;"' not in r.split(">")[0]]
    assert len(shown) == 1 and 'data-overall="fail"' in shown[0]
    text = dom("#q=needs-")
    assert "2 of 8 servers" in text
    ordered = dom("#sort=overall")  # fail first, then error, advisory, not run, pass
    overalls = [r.split('data-overall="')[1].split('"')[0] for r in ordered.split("<tr ")[1:] if 'data-overall="' in r]
    assert overalls[0] == "fail" and overalls[-1] == "pass", overalls


# -- opt-in: the shipped catalog, from the registries ---------------------------------------------

@pytest.mark.skipif(os.environ.get("RC_SCOREBOARD_CATALOG") != "1",
                    reason="builds the shipped catalog from the npm and PyPI registries: set RC_SCOREBOARD_CATALOG=1")
def test_the_shipped_catalog_builds_and_every_finding_is_the_one_checked_by_hand(tmp_path):
    path = ROOT / "examples" / "scoreboard" / "catalog.yaml"
    out = Path(os.environ.get("RC_SCOREBOARD_OUT") or tmp_path / "board")
    proc = scoreboard(str(path), "--out", str(out), "-j", "2")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    raw = {s["name"]: s for s in yaml.safe_load(path.read_text())["servers"]}
    wrong = {}
    for server in _doc(out)["servers"]:
        checked = raw[server["name"]].get("checked") or {}
        if server["state"] == "not run":
            continue
        got = {status: sorted(r for r, v in server["verdicts"].items() if v == status) for status in ("fail", "advisory")}
        want = {status: sorted(checked.get(status, [])) for status in ("fail", "advisory")}
        if server["state"] != "ran" or got != want:
            wrong[server["name"]] = (server["state"], server["reason"][:200], got, want)
    assert not wrong, wrong


def test_a_stopped_build_kills_its_runs_and_their_servers_and_keeps_what_it_built(tmp_path):
    """SIGTERM (a cancelled CI job) or Ctrl-C: exit 130, and no suite run or server outlives it."""
    import signal
    import time
    marker = f"rc-hang-{os.getpid()}-{time.monotonic_ns()}"
    path = write_catalog(tmp_path / "catalog.yaml", [
        {"name": "hangs", "package": f"command:{{python}} -c 'import time; time.sleep(600)' {marker} {{root}}"},
        quick_entries()[0]])
    proc = subprocess.Popen([sys.executable, "-m", "contract_tests.cli", "scoreboard", str(path), "--out",
                             str(tmp_path / "out"), "-j", "2", "--cache", str(tmp_path / "cache")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _running(marker):
        time.sleep(0.2)
    assert _running(marker), "the hanging server never started"
    proc.send_signal(signal.SIGTERM)
    try:  # at once: the hanging server would keep the run going until its initialize times out (20 s)
        _out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the build did not stop within 10 s of SIGTERM") from None
    assert proc.returncode == 130 and "interrupted" in err, err
    time.sleep(0.5)
    assert not _running(marker), "a server outlived the build"
    assert json.loads((tmp_path / "out" / "entries" / "needs-node-99" / "entry.json").read_text())["state"] == "not run"


def _running(marker: str) -> bool:
    return subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0
