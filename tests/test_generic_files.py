"""The generic-files profile's own plumbing: what its fixture's paths name, the mapping's usage
errors, and `retrieval-contract map` (--mapping auto) on the worked examples' real servers.
The verdicts on correct and broken servers are test_mutants' and test_variants' (launch_gf_*)
and the matrix's (every worked example runs in `retrieval-contract all`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from contract_tests.contracts import mapping
from contract_tests.contracts import specs as contracts
from contract_tests.synthetic.files import build_files

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "generic-files"


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "contract_tests.cli", *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return build_files(tmp_path_factory.mktemp("files"), 1000)


def test_the_fixture_root_holds_the_files_the_spec_asks_for(files):
    assert len(files.items()) == contracts.load_profile("generic-files").limits["files"]
    assert all(files.file_token(item) for item in files.items())
    for name in ("vault_evil", "vault-evil", "vaultevil", "outside"):
        assert (files.root / name / "secret.md").is_file()


def test_the_entries_a_mappings_prepare_may_not_name_are_the_roots_own(files):
    """contracts/mapping.py holds the root's top-level entries (OWN_ENTRIES) apart from the
    fixture that builds them: the two stay one list."""
    assert sorted(p.name for p in files.served.iterdir()) == sorted(mapping.OWN_ENTRIES)


@pytest.mark.parametrize("path,kind,names", [
    ("inbox/example.md", "inside", {"inbox/example.md"}),
    ("links/inside.md", "inside", {"inbox/example.md"}),            # a symlink that stays inside
    ("links/escape-file.md", "outside", set()),
    ("links/prefix-dir/secret.md", "outside", set()),
    ("../vault_evil/secret.md", "outside", set()),
    ("inbox/example.md\x00.txt", "missing", set()),                   # cut at the NUL: another file
    ("inbox/%65xample.md", "inside", {"inbox/example.md"}),           # a server may decode it
    (" inbox/example.md ", "inside", {"inbox/example.md"}),           # or trim it
    ("/inbox/example.md", "inside", {"inbox/example.md"}),            # or read "/" as the root
    ("no-such-dir-rc/missing-rc.md", "missing", set()),
])
def test_what_a_path_may_name(files, path, kind, names):
    assert files.readings(path) == (kind, names)


def test_an_absolute_path_of_the_prefix_sibling_is_outside(files):
    assert files.readings(f"{files.served}_evil/secret.md") == ("outside", set())
    assert files.readings(f"{files.served}/inbox/example.md") == ("inside", {"inbox/example.md"})


@pytest.mark.parametrize("args,words", [
    (["--profile", "generic-files", "--mapping", "{bad}"], ["not a valid mapping", "tools/0"]),
    (["--profile", "retrieval-tools", "--mapping", "{good}"], ["--mapping", "not driven by a mapping"]),
    (["--profile", "generic-files", "--server-cmd", "{python} x.py {root}"], ["needs --mapping FILE"]),
    (["--profile", "generic-files", "--mapping", "auto"], ["--mapping auto", "--server-cmd"]),
    (["--profile", "generic-files", "--mapping", "{nocmd}"], ["no `server.cmd`"]),
    (["--profile", "generic-files", "--mapping", "{missing}"], ["cannot read mapping"]),
])
def test_a_bad_mapping_or_option_is_a_usage_error_that_names_it(tmp_path, args, words):
    bad = tmp_path / "bad.yaml"
    bad.write_text("paths: relative\ntools:\n  - {name: read, role: read, pathz: path}\n", encoding="utf-8")
    nocmd = tmp_path / "nocmd.yaml"
    nocmd.write_text("paths: relative\ntools:\n  - {name: read, role: read, path: path}\n", encoding="utf-8")
    values = {"{bad}": str(bad), "{good}": str(EXAMPLES / "fs.yaml"), "{nocmd}": str(nocmd),
              "{missing}": str(tmp_path / "none.yaml")}
    run = _cli(*[values.get(a, a) for a in args], cwd=tmp_path)
    assert run.returncode == 4, run.stdout[-2000:] + run.stderr[-2000:]
    for word in words:
        assert word in run.stdout + run.stderr, run.stdout[-2000:] + run.stderr[-2000:]


def _shape(data: dict) -> tuple:
    """What a proposal must get right: each tool's role and arguments, the paths style, the tools
    that name the root by design (the denial forms tools/list cannot show are the user's)."""
    tools = sorted((t["name"], t["role"], t.get("path"), t.get("paths"), t.get("query")) for t in data["tools"])
    return tools, data["paths"], sorted(data.get("discloses_root", []))


@pytest.mark.parametrize("example", ["fs", "vault", "docs"])
def test_map_proposes_the_worked_mapping_for_each_example(tmp_path, example):
    worked = mapping.load(str(EXAMPLES / f"{example}.yaml"))
    env = "".join(f"{k}={v} " for k, v in worked["server"].get("env", {}).items())
    out = tmp_path / "proposed.yaml"
    run = _cli("map", "--server-cmd", f"env {env}{worked['server']['cmd']}" if env else worked["server"]["cmd"],
               "--out", str(out))
    assert run.returncode == 0, run.stderr[-2000:]
    proposed = mapping.validate(yaml.safe_load(out.read_text(encoding="utf-8")), str(out))
    assert _shape(proposed) == _shape(worked)


def test_a_link_lying_in_the_root_is_told_from_a_path_through_it(files):
    """A stat or listing may answer for the link itself (lstat): only the last component counts."""
    assert files.names_a_link_inside("links/escape-file.md")
    assert files.names_a_link_inside(f"{files.served}/links/escape-dir")
    assert not files.names_a_link_inside("links/escape-dir/secret.md")
    assert not files.names_a_link_inside("inbox/example.md")
    assert not files.names_a_link_inside("../outside/secret.md")


def test_auto_keeps_the_path_forms_the_server_serves_and_never_files_its_own_guess():
    """--mapping auto tries its proposal (contract_tests/generic_files/trial.py): a server that
    resolves relative paths against its working directory keeps absolute paths; a tool no form
    serves is left out with the reason; nothing served at all is a usage error, not GF-TOOL-001."""
    from contract_tests.generic_files.trial import TrialFailed, decide
    proposed = {"paths": "both", "tools": [{"name": "read", "role": "read", "path": "path"},
                                           {"name": "ls", "role": "list", "path": "path"}]}
    kept, notes = decide(proposed, {"relative": {"read": "denied", "ls": "denied"}, "absolute": {}})
    assert kept["paths"] == "absolute" and len(kept["tools"]) == 2
    assert any("absolute kept" in note for note in notes)
    kept, notes = decide(proposed, {"relative": {}, "absolute": {}})
    assert kept == proposed
    kept, notes = decide({**proposed, "paths": "relative"}, {"relative": {}, "absolute": {}})
    assert kept["paths"] == "both"  # every form served is swept, whatever the proposal read
    assert any("paths relative proposed, both kept" in note for note in notes)
    kept, notes = decide(proposed, {"relative": {"ls": "x"}, "absolute": {"ls": "y", "read": "z"}})
    assert kept["paths"] == "relative" and [t["name"] for t in kept["tools"]] == ["read"]
    assert any("ls left out" in note for note in notes)
    with pytest.raises(TrialFailed, match="no mapped tool served"):
        decide(proposed, {"relative": {"read": "a", "ls": "b"}, "absolute": {"read": "c", "ls": "d"}})


def _plain(role: str, text: str):
    from contract_tests.generic_files.sweep import Call
    return Call("t", role, "t", "plain", "t()", {}, text, False)


def test_a_plain_call_reached_the_plain_file_only_with_evidence_of_it(files):
    """GF-ESC-001 passes only where a tool with a path read the plain file (sweep.reached): a read
    its content, a list its name, a stat its token (heading) or its exact byte size."""
    from contract_tests.generic_files.sweep import reached
    from contract_tests.synthetic.files import PLAIN_SIZE
    token = f"rcf{files.file_token('inbox/example.md')}"
    assert reached(_plain("read", f"# Example {token}"), files)
    assert not reached(_plain("read", "# Example"), files)
    assert reached(_plain("list", "[FILE] example.md"), files)
    assert not reached(_plain("list", "[]"), files)
    assert reached(_plain("stat", f'{{"size": {PLAIN_SIZE}}}'), files)
    assert reached(_plain("stat", f'{{"title": "Example {token}"}}'), files)
    assert not reached(_plain("stat", f'{{"size": {PLAIN_SIZE}1, "mtime": 1{PLAIN_SIZE}}}'), files)
    assert reached(_plain("search", "inbox/example.md"), files)


def test_an_answer_about_an_outside_file_shows_its_canary_or_its_size(files):
    """Every outside file holds the canary and is OUTSIDE_SIZE bytes; every folder outside holds a
    file named after the canary (a listing of `..` carries it); the size counts only where the
    path names something outside."""
    import os

    from contract_tests.generic_files.sweep import Probe, reveals_outside
    from contract_tests.synthetic.files import OUTSIDE_DIRS, OUTSIDE_FILES, OUTSIDE_SIZE, OUTSIDE_WORD
    canary = files.canaries["outside"]
    for rel in OUTSIDE_FILES:
        assert os.path.getsize(files.root / rel) == OUTSIDE_SIZE
    for folder in OUTSIDE_DIRS:
        assert canary in " ".join(os.listdir(files.root / folder)), folder
        assert any(OUTSIDE_WORD in (files.root / folder / name).read_text() for name in os.listdir(files.root / folder)
                   if (files.root / folder / name).is_file())
    outside = Probe("p", "sibling-prefix", "../vault_evil/secret.md", "relative", "outside")
    missing = Probe("m", "missing", "nope.md", "relative", "missing")
    assert reveals_outside(f"size: {OUTSIDE_SIZE}", files, outside)
    assert not reveals_outside(f"size: {OUTSIDE_SIZE}", files, missing)
    assert not reveals_outside(f"mtime: 1{OUTSIDE_SIZE}, size 3.{OUTSIDE_SIZE}", files, outside)
    assert reveals_outside(f"[FILE] {OUTSIDE_WORD}-{canary}.md", files, None)
    inside = [path for path in files.served.rglob("*.md") if not path.is_symlink() and "links" not in path.parts]
    assert len(inside) > 900 and not any(OUTSIDE_WORD in path.read_text() for path in inside)


def test_a_mapping_that_reaches_no_file_never_passes_the_escape_check(suite_run, tmp_path):
    """A search without a path argument is all the mapping maps: no probe could show an escape,
    so GF-ESC-001 reads blocked (exit 7), never pass."""
    docs = yaml.safe_load((EXAMPLES / "docs.yaml").read_text())
    docs["tools"] = [tool for tool in docs["tools"] if tool["role"] == "search"]
    path = tmp_path / "search-only.yaml"
    path.write_text(yaml.safe_dump(docs))
    run = suite_run("--profile", "generic-files", "--mapping", str(path), "--req", "GF-ESC-001,GF-TOOL-001")
    status = run.status()
    assert (status["GF-ESC-001"], status["GF-TOOL-001"]) == ("blocked", "pass"), run.output[-3000:]
    assert run.code == 7
    assert "no probe could reach a file" in run.output


def test_a_read_only_hint_without_a_destructive_hint_passes_the_annotation_check(suite_run):
    """MCP: destructiveHint "is meaningful only when readOnlyHint == false"; a tool annotated
    readOnlyHint true alone passes MCP-TOOLS-002 even under --strict (the variant
    gf_fs_read_only_hint_alone), where readOnlyHint false fails it (gf_fs_read_tool_not_read_only)."""
    from tests.mutants import command, registry, suite_args
    known = registry()
    for name, want in (("gf_fs_read_only_hint_alone", "pass"), ("gf_fs_read_tool_not_read_only", "fail")):
        m = known[name]
        run = suite_run(*suite_args(m), "--server-cmd", command(m), "--req", "MCP-TOOLS-002", "--strict")
        assert run.status().get("MCP-TOOLS-002") == want, f"{name}: {run.output[-2000:]}"


def test_under_two_workers_the_tests_that_read_the_sweep_run_in_one_so_the_server_is_swept_once(suite_run):
    """plugin.pytest_xdist_make_scheduler: with `-n 2` every test of generic_files/test_files.py
    runs in the same worker (each worker that runs one sweeps the whole corpus)."""
    run = suite_run("--profile", "generic-files", "--mapping", "examples/generic-files/fs.yaml", "-n", "2", "-vv")
    assert run.code == 0, run.output[-3000:]
    workers = {line.split("]")[0] for line in run.output.splitlines()
               if line.startswith("[gw") and "generic_files/test_files.py::" in line}
    assert len(workers) == 1, run.output[-3000:]
