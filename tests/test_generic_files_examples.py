"""The generic-files worked examples (reference/generic_files) and their mutants, checked
directly with the official SDK client, without the suite: each correct server reads a file
inside its root and denies every escape in its mapping's denial form (outside content never
appears in a response or on stderr, nothing is written), and each mutant really shows its
defect."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from jsonschema import Draft202012Validator
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from contract_tests.transport.http import free_port
from tests.conftest import ROOT
from tests.mutants import REFERENCE_MODULE

MAPPINGS = ROOT / "examples" / "generic-files"
LAUNCHERS = ROOT / "tests" / "mutants"
OUTSIDE = "OUTSIDE-SENTINEL-4c1f"
SIBLING = "SIBLING-SENTINEL-9e27"
INSIDE = "alpha note body"
ESCAPES = ("../outside/secret.md", "links/escape-file.md", "links/escape-dir/secret.md", "links/prefix-file.md",
           "links/prefix-dir/secret.md")


@dataclass
class Tree:
    base: Path
    root: Path

    def absolute(self, relative: str) -> str:
        return str(self.root / relative)

    def attacks(self, absolute_too: bool) -> list[str]:
        """Every escape, root-relative and (where the server takes them) absolute, plus NUL,
        encoded dots and the prefix sibling."""
        out = [*ESCAPES, "notes/alpha.md\x00.txt", "%2e%2e/outside/secret.md", f"{self.base}/vault_evil/secret.md",
               f"{self.base}/outside/secret.md"]
        return out + [self.absolute(path) for path in ESCAPES] if absolute_too else out

    def snapshot(self) -> dict[str, tuple]:
        """Every entry under the base: its bytes (or link target) and mtime."""
        seen = {}
        for path in sorted(self.base.rglob("*")):
            info = path.lstat()
            body = os.readlink(path) if path.is_symlink() else path.read_bytes() if path.is_file() else None
            seen[str(path.relative_to(self.base))] = (body, info.st_mtime_ns)
        return seen


@pytest.fixture
def tree(tmp_path) -> Tree:
    base = Path(os.path.realpath(tmp_path))
    root = base / "vault"
    files = {"inbox/example.md": "# Example\n\nthe inbox example\n", "notes/alpha.md": f"# Alpha\n\n{INSIDE}\n",
             "notes/beta.txt": "beta plain text\n", ".hidden/secret.md": "hidden but inside\n"}
    files.update({f"bulk/{n // 20:02d}/note-{n:03d}.md": f"# Note {n}\n\nfiller text number {n}\n"
                  for n in range(120)})
    for relative, body in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(body)
    for folder, sentinel in (("outside", OUTSIDE), ("vault_evil", SIBLING)):
        (base / folder).mkdir()
        (base / folder / "secret.md").write_text(f"# Secret\n\n{sentinel} secret words\n")
    (root / "links").mkdir()
    for name, target in (("escape-file.md", "../../outside/secret.md"), ("escape-dir", "../../outside"),
                         ("prefix-file.md", "../../vault_evil/secret.md"), ("prefix-dir", "../../vault_evil"),
                         ("inside-file.md", "../notes/alpha.md")):
        (root / "links" / name).symlink_to(target)
    return Tree(base, root)


# -- talking to a server ---------------------------------------------------------------------

def dump(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


@dataclass
class Session:
    tools: dict[str, dict[str, Any]]
    answers: list[dict[str, Any]]
    stderr: str


def talk(argv: list[str], calls: list[tuple[str, dict[str, Any]]], env: dict[str, str] | None = None) -> Session:
    """Start `python ARGV` over stdio, list its tools and make each call in turn; a JSON-RPC
    error comes back as {"rpc_error": {...}}."""
    async def main(errlog) -> tuple[list, list]:
        params = StdioServerParameters(command=sys.executable, args=argv, env=env, cwd=str(ROOT))
        with anyio.fail_after(60):
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = dump(await session.list_tools())["tools"]
                    answers = []
                    for name, arguments in calls:
                        try:
                            answers.append(dump(await session.call_tool(name, arguments)))
                        except MCPError as exc:
                            answers.append({"rpc_error": {"code": exc.error.code, "message": exc.error.message}})
                    return tools, answers

    with tempfile.TemporaryFile("w+") as errlog:
        tools, answers = anyio.run(main, errlog)
        errlog.seek(0)
        return Session({t["name"]: t for t in tools}, answers, errlog.read())


def body(answer: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in answer.get("content", []))


def denied(server: str, answer: dict[str, Any]) -> bool:
    """The mapping's denial forms (examples/generic-files/<server>.yaml); isError and a
    JSON-RPC error always count."""
    if "rpc_error" in answer or answer.get("isError"):
        return True
    if server == "fs":
        return "Error - " in body(answer)
    if server == "vault":
        return "error" in answer.get("structuredContent", {}) and "error" in json.loads(body(answer))
    return False


def commands(tree: Tree) -> dict[str, tuple[list[str], dict[str, str] | None]]:
    """Each example's argv after `python`, and its environment, as its mapping's server block says."""
    out = {}
    for name in ("fs", "vault", "docs"):
        server = yaml.safe_load((MAPPINGS / f"{name}.yaml").read_text())["server"]
        argv = server["cmd"].replace("{root}", str(tree.root)).split()[1:]
        env = {k: v.replace("{root}", str(tree.root)) for k, v in server.get("env", {}).items()} or None
        out[name] = argv, env
    return out


def through(launcher: str, mutant: str, argv: list[str]) -> list[str]:
    """A reference argv (`-m reference.generic_files.X ARGS`) through a mutant launcher."""
    return [str(LAUNCHERS / launcher), mutant, *argv[2:]]


# Per server: (read tool, path argument, list-of-paths tool, its argument, list tool, its argument).
SHAPES = {"fs": ("read_text_file", "path", "read_multiple_files", "paths", "list_directory", "path"),
          "vault": ("get_note", "filepath", "get_notes", "filepaths", "list_notes", "dirpath"),
          "docs": ("read_doc", "path", None, None, None, None)}


def probes(server: str, tree: Tree) -> list[tuple[str, dict[str, Any]]]:
    read, arg, many, many_arg, listing, list_arg = SHAPES[server]
    calls = []
    for path in tree.attacks(absolute_too=server == "fs") + ["notes/missing.md"]:
        calls.append((read, {arg: path}))
        if many:
            calls.append((many, {many_arg: [path]}))
    for folder in ("links/escape-dir", "links/prefix-dir", "../outside", f"{tree.base}/vault_evil"):
        if listing:
            calls.append((listing, {list_arg: folder}))
    if server == "fs":
        calls += [("get_file_info", {"path": p}) for p in ESCAPES]
        calls += [("search_files", {"path": p, "pattern": "*"}) for p in ("links/escape-dir", "links/prefix-dir")]
    return calls


# -- the mappings ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fs", "vault", "docs"])
def test_each_mapping_is_valid_and_starts_its_example_through_the_reference_module(name):
    schema = json.loads((ROOT / "schemas" / "mapping.schema.json").read_text())
    mapping = yaml.safe_load((MAPPINGS / f"{name}.yaml").read_text())
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(mapping)]
    assert not errors, errors
    cmd = mapping["server"]["cmd"]
    assert cmd.startswith(f"{{python}} -m reference.generic_files.{name}")
    assert len(REFERENCE_MODULE.findall(cmd)) == 1  # the mutant plumbing puts its launcher there
    assert "{root}" in cmd + json.dumps(mapping["server"].get("env", {}))


# -- the correct examples --------------------------------------------------------------------

@pytest.mark.parametrize("server", ["fs", "vault", "docs"])
def test_the_example_reads_inside_and_denies_every_escape_in_its_mapping_form(tree, server):
    argv, env = commands(tree)[server]
    mapping = yaml.safe_load((MAPPINGS / f"{server}.yaml").read_text())
    read, arg = SHAPES[server][:2]
    before = tree.snapshot()
    plain = [(read, {arg: "notes/alpha.md"}), (read, {arg: "links/inside-file.md"})]
    attacks = probes(server, tree)
    session = talk(argv, plain + attacks, env)
    assert {t["name"] for t in mapping["tools"]} <= set(session.tools)
    for tool in mapping["tools"]:  # every mapped argument is in the tool's input schema
        named = {tool[k] for k in ("path", "paths", "query") if k in tool}
        assert named <= set(session.tools[tool["name"]]["inputSchema"]["properties"]), tool
    assert INSIDE in body(session.answers[0]) and not denied(server, session.answers[0])
    assert INSIDE in body(session.answers[1])  # a link that stays inside is followed here
    for (tool, arguments), answer in zip(attacks, session.answers[2:]):
        assert denied(server, answer), (tool, arguments, answer)
    everything = json.dumps(session.answers) + session.stderr
    assert OUTSIDE not in everything and SIBLING not in everything
    assert str(tree.base) not in session.stderr and INSIDE not in session.stderr
    if mapping["paths"] == "relative":  # no absolute path, not even in a denial
        assert str(tree.base) not in json.dumps(session.answers)
    assert tree.snapshot() == before


def test_the_fs_example_lists_searches_stats_and_discloses_its_root_only_by_design(tree):
    argv, env = commands(tree)["fs"]
    session = talk(argv, [("list_directory", {"path": "notes"}), ("search_files", {"path": "", "pattern": "*secret*"}),
                          ("get_file_info", {"path": tree.absolute("notes/alpha.md")}),
                          ("list_allowed_directories", {}), ("read_multiple_files", {"paths": ["notes/alpha.md"]})],
                   env)
    listing, search, info, roots, many = (body(a) for a in session.answers)
    assert listing.splitlines() == ["[FILE] alpha.md", "[FILE] beta.txt"]
    assert search.splitlines() == [tree.absolute(".hidden/secret.md")]  # no link out of the root
    assert re.search(r"^size: \d+$", info, re.M) and "type: file" in info
    assert roots == f"Allowed directories:\n{tree.root}"
    assert many.startswith("notes/alpha.md:\n") and INSIDE in many
    assert session.tools["write_file"]["annotations"]["readOnlyHint"] is False


def test_the_vault_and_docs_examples_list_and_search_with_relative_paths(tree):
    argv, env = commands(tree)["vault"]
    vault = talk(argv, [("list_notes", {}), ("search_notes", {"query": "HIDDEN"}), ("get_notes",
                 {"filepaths": ["notes/alpha.md", "inbox/example.md"]}), ("search_notes", {"query": "secret words"})],
                 env)
    listing, search = (a["structuredContent"] for a in vault.answers[:2])
    assert "notes/" in listing["entries"] and listing["dirpath"] == ""
    assert search == {"results": [{"filepath": ".hidden/secret.md", "line": "hidden but inside"}]}
    assert "# notes/alpha.md" in body(vault.answers[2]) and "the inbox example" in body(vault.answers[2])
    assert vault.answers[3]["structuredContent"] == {"results": []}  # only the files outside say it
    argv, env = commands(tree)["docs"]
    docs = talk(argv, [("search_docs", {"query": "hidden"}), ("search_docs", {"query": "filler 7", "limit": 1}),
                       ("search_docs", {"query": "!!"}), ("search_docs", {"query": "secret words"})], env)
    assert [hit["path"] for hit in docs.answers[0]["structuredContent"]["results"]] == [".hidden/secret.md"]
    assert len(docs.answers[1]["structuredContent"]["results"]) == 1
    assert docs.answers[2]["rpc_error"]["code"] == -32602
    assert docs.answers[3]["structuredContent"] == {"results": []}
    assert "indexed 125 documents" in docs.stderr


# -- the mutants and variants ----------------------------------------------------------------

def test_the_fs_mutants_follow_links_and_prefix_siblings_out_of_the_root(tree):
    argv, env = commands(tree)["fs"]
    before = tree.snapshot()
    symlink = talk(through("launch_gf_fs.py", "gf_fs_symlink_escape", argv),
                   [("read_text_file", {"path": "links/escape-file.md"}),
                    ("read_text_file", {"path": "../outside/secret.md"})], env)
    assert OUTSIDE in body(symlink.answers[0]) and not denied("fs", symlink.answers[0])
    assert denied("fs", symlink.answers[1])  # the lexical check still stops `..`
    prefix = talk(through("launch_gf_fs.py", "gf_fs_prefix_sibling", argv),
                  [("read_text_file", {"path": f"{tree.base}/vault_evil/secret.md"}),
                   ("read_text_file", {"path": "links/escape-file.md"})], env)
    assert SIBLING in body(prefix.answers[0])
    assert denied("fs", prefix.answers[1])
    variant = talk(through("launch_gf_fs.py", "gf_fs_refuses_all_symlinks", argv),
                   [("read_text_file", {"path": "links/inside-file.md"}),
                    ("read_text_file", {"path": "notes/alpha.md"}), *probes("fs", tree)], env)
    assert denied("fs", variant.answers[0]) and INSIDE in body(variant.answers[1])
    assert all(denied("fs", answer) for answer in variant.answers[2:])
    assert OUTSIDE not in json.dumps(variant.answers) and SIBLING not in json.dumps(variant.answers)
    assert tree.snapshot() == before


def test_the_vault_mutants_leak_write_and_deny_silently(tree):
    argv, env = commands(tree)["vault"]
    leak = talk(through("launch_gf_vault.py", "gf_vault_leak", argv),
                [("get_note", {"filepath": "notes/missing.md"})], env)
    assert denied("vault", leak.answers[0]) and str(tree.root) in json.dumps(leak.answers[0])
    before = tree.snapshot()
    talk(through("launch_gf_vault.py", "gf_vault_write", argv), [("get_note", {"filepath": "notes/alpha.md"})], env)
    assert (tree.root / ".vault-recent").read_text() == "notes/alpha.md\n" and tree.snapshot() != before
    silent = talk(through("launch_gf_vault.py", "gf_vault_silent_denial", argv),
                  [("get_note", {"filepath": "../outside/secret.md"}),
                   ("get_note", {"filepath": "notes/alpha.md"})], env)
    assert body(silent.answers[0]) == "not found" and not denied("vault", silent.answers[0])
    assert "structuredContent" not in silent.answers[0] and not silent.answers[0].get("isError")
    assert INSIDE in body(silent.answers[1])
    variant = talk(through("launch_gf_vault.py", "gf_vault_is_error_denials", argv), probes("vault", tree), env)
    assert all(a.get("isError") and "structuredContent" not in a for a in variant.answers)


def test_the_docs_mutants_answer_a_missing_path_with_another_file_and_index_links_out(tree):
    argv, env = commands(tree)["docs"]
    wrong = talk(through("launch_gf_docs.py", "gf_docs_wrong_file", argv),
                 [("read_doc", {"path": "notes/missing.md"}), ("read_doc", {"path": "../outside/secret.md"})], env)
    assert not denied("docs", wrong.answers[0]) and body(wrong.answers[0]) == "hidden but inside\n"
    assert denied("docs", wrong.answers[1])
    index = talk(through("launch_gf_docs.py", "gf_docs_index_follows_links", argv),
                 [("search_docs", {"query": "secret words"}), ("read_doc", {"path": "links/escape-file.md"})], env)
    assert OUTSIDE in json.dumps(index.answers[0]) and denied("docs", index.answers[1])


# -- Streamable HTTP -------------------------------------------------------------------------

@pytest.mark.parametrize("server", ["fs", "vault", "docs"])
def test_each_example_serves_streamable_http_with_the_same_tools(tree, server):
    from mcp.client.streamable_http import streamable_http_client

    argv, env = commands(tree)[server]
    port = free_port()
    proc = subprocess.Popen([sys.executable, *argv, "--http", "--port", str(port)], cwd=ROOT,
                            env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    read, arg = SHAPES[server][:2]

    async def main() -> str:
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read_stream, write_stream):
            async with ClientSession(read_stream, write_stream) as session:
                await session.initialize()
                return body(dump(await session.call_tool(read, {arg: "notes/alpha.md"})))
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        assert INSIDE in anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
