"""End to end with clients nobody here wrote: the MCP Inspector CLI (over stdio, over HTTP, and
over HTTP with the hosted server's bearer token) and the official TypeScript SDK client, on all
five reference servers and the suite's own fixtures, checked for body-free, leak-free answers.

Inspector 2.x needs Node >= 22.19 and the machines have Node 20, so the test installs a Node 22
from the npm registry (the `node` package) next to the clients, from a committed lockfile, into
a git-ignored cache. It skips, saying why, only when node or npm is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contract_tests.contracts import specs as contracts
from contract_tests.synthetic import canaries
from contract_tests.synthetic.canister import build_canister
from contract_tests.synthetic.vault import build_fixture

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "tests" / "real_clients"
CACHE = ROOT / ".cache" / "real-clients"


@pytest.fixture(scope="module")
def node_env() -> dict[str, str]:
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm are needed to install the real clients (MCP Inspector, TypeScript SDK)")
    lock = (SPEC / "package-lock.json").read_text()
    if not (CACHE / "node_modules").is_dir() or (CACHE / "package-lock.json").read_text() != lock:
        CACHE.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json", "client.mjs"):
            shutil.copy(SPEC / name, CACHE / name)
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=CACHE, check=True, timeout=900,
                       capture_output=True)
    shutil.copy(SPEC / "client.mjs", CACHE / "client.mjs")
    node_bin = CACHE / "node_modules" / "node" / "bin"
    env = dict(os.environ, PATH=f"{node_bin}{os.pathsep}{CACHE / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}")
    version = subprocess.run(["node", "--version"], env=env, capture_output=True, text=True, check=True).stdout
    assert version.startswith("v22."), version
    return env


def _inspector(env, *args: str, timeout: float = 90) -> dict:
    out = subprocess.run(["mcp-inspector", "--cli", *args], env=env, capture_output=True, text=True, timeout=timeout,
                         cwd=CACHE)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return json.loads(out.stdout[out.stdout.index("{"):])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(port: int, proc: subprocess.Popen) -> None:
    for _ in range(200):
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError("server did not listen")


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    profile = contracts.load_profile("section-source-local")
    return build_fixture(tmp_path_factory.mktemp("vault"), profile.vectors(), profile.limits)


def _body_free(output: dict, fixture) -> None:
    text = json.dumps(output)
    assert not canaries.scan_text(text, fixture.canaries, "results", ("body", "code", "frontmatter", "path"))


def _section_source(result: dict) -> dict:
    assert result.get("isError") in (False, None), result
    return json.loads(result["content"][0]["text"])


def test_the_inspector_lists_and_calls_the_tool_over_stdio(node_env, vault):
    server = [sys.executable, "-m", "reference.section_source.server", "--vault", str(vault.vault)]
    listed = _inspector(node_env, *server, "--method", "tools/list")
    assert "get_section_source" in {t["name"] for t in listed["tools"]}
    called = _inspector(node_env, *server, "--method", "tools/call", "--tool-name", "get_section_source",
                        "--tool-arg", "path=notes/alpha.md")
    out = _section_source(called)
    assert out["schema"] == "knowtation.section_source/v0" and len(out["sections"]) >= 3
    _body_free(called, vault)


def test_the_inspector_calls_the_tool_over_streamable_http(node_env, vault):
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "reference.section_source.server", "--vault", str(vault.vault),
                             "--http", "--port", str(port)], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        _wait(port, proc)
        called = _inspector(node_env, "--transport", "http", "--server-url", f"http://127.0.0.1:{port}/mcp",
                            "--method", "tools/call", "--tool-name", "get_section_source",
                            "--tool-arg", "path=inbox/example.md")
    finally:
        proc.terminate()
        proc.wait(10)
    assert _section_source(called)["path"] == "inbox/example.md"
    _body_free(called, vault)


def test_the_inspector_sends_the_hosted_servers_bearer_token(node_env, tmp_path):
    profile = contracts.load_profile("section-source-hosted")
    fx = build_canister(tmp_path, profile.vectors(), profile.limits)
    port = _free_port()
    env = dict(os.environ, **profile.environment({**fx.placeholders(), "phase": "1L", "port": str(port)}))
    proc = subprocess.Popen([sys.executable, "-m", "reference.section_source_hosted.server", "--port", str(port),
                             "--phase", "1L"], env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        _wait(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        refused = subprocess.run(["mcp-inspector", "--cli", "--transport", "http", "--server-url", url,
                                  "--method", "tools/list"], env=node_env, capture_output=True, text=True,
                                 timeout=90, cwd=CACHE)
        assert refused.returncode != 0  # no token, no session
        called = _inspector(node_env, "--transport", "http", "--server-url", url,
                            "--header", f"Authorization: Bearer {fx.token('viewer')}",
                            "--method", "tools/call", "--tool-name", "get_section_source",
                            "--tool-arg", "path=notes/alpha.md")
    finally:
        proc.terminate()
        proc.wait(10)
        fx.close()
    assert _section_source(called)["path"] == "notes/alpha.md"
    _body_free(called, fx)


def test_the_typescript_sdk_client_talks_to_the_retrieval_tools_reference(node_env, tmp_path):
    from contract_tests.synthetic.roots import build_roots
    fx = build_roots(tmp_path)
    env = dict(node_env, DOCS_ROOT=str(fx.repo_root("docs")), CODE_ROOT=str(fx.repo_root("code")))
    out = subprocess.run(["node", "client.mjs", "stdio", "search", json.dumps({"query": "needle-common", "repo": "docs"}),
                          "--", sys.executable, "-m", "reference.retrieval_tools.server"],
                         env=env, capture_output=True, text=True, timeout=120, cwd=CACHE)
    assert out.returncode == 0, out.stderr[-2000:]
    answer = json.loads(out.stdout)
    assert set(answer["tools"]) >= {"search", "open_file", "get_snippet", "list_dir"}
    envelope = answer["result"]["structuredContent"]
    assert [m["path"] for m in envelope["result"]["matches"]][:1] == ["B-upper.md"]
    assert not canaries.scan_text(out.stdout, fx.canaries, "results", ("path", "outside"))


def test_the_inspector_reads_the_vault_agent_reference_over_stdio(node_env, tmp_path):
    vault, index = tmp_path / "vault", tmp_path / "index"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "kelp.md").write_text("# Kelp\n\nKelp forests grow in cold water.\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "reference.vault_agent", "index", "--vault-root", str(vault),
                    "--index-dir", str(index)], check=True, capture_output=True, timeout=120)
    server = [sys.executable, "-m", "reference.vault_agent", "mcp", "--vault-root", str(vault), "--index-dir", str(index)]
    listed = _inspector(node_env, *server, "--method", "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}
    assert set(tools) == {"search", "get_note", "get_chunk", "get_attachment", "related"}
    assert all(t["annotations"]["readOnlyHint"] is True for t in tools.values())
    called = _inspector(node_env, *server, "--method", "tools/call", "--tool-name", "search", "--tool-arg", "query=kelp")
    assert called.get("isError") in (False, None), called
    assert str(vault) not in json.dumps(called)


def test_the_inspector_reads_the_open_notebook_reference_over_stdio(node_env, tmp_path):
    from contract_tests.synthetic import notebook_generator
    generated = notebook_generator.build(tmp_path / "notebooks", seed=7, collections=2, notebooks=3)
    server = [sys.executable, "-m", "reference.open_notebook", "--notebooks", str(generated.root)]
    listed = _inspector(node_env, *server, "--method", "tools/list")
    assert len(listed["tools"]) == 11 and "describe_world" in {t["name"] for t in listed["tools"]}
    called = _inspector(node_env, *server, "--method", "tools/call", "--tool-name", "describe_world")
    assert called.get("isError") in (False, None), called
    text = json.dumps(called)
    assert not [token for token in generated.canaries() if token in text] and str(generated.root) not in text
