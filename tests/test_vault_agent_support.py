"""Shared helpers for the vault-agent reference tests (no tests here): a synthetic vault with
every case the tests need, a small honest embedding model made from that vault's own words,
and running the reference as the suite will (subprocesses, raw JSON-RPC)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from reference.vault_agent.config import load_settings
from reference.vault_agent.embedding import write_model

CANARY_BODY = "CANARYBODY7319"
CANARY_FRONT = "CANARYFRONT5521"
CANARY_QUERY = "CANARYQUERY8842"
CANARY_ATTACH = "CANARYATTACH3307"
PYTHON = sys.executable
CLI = [PYTHON, "-m", "reference.vault_agent"]
# Two topics whose words share a direction in the model, so embedding search can find a note
# by a word it does not contain.
TOPICS = {"animals": ["cat", "kitten", "feline", "dog", "puppy"], "weather": ["rain", "storm", "cloud", "drizzle"]}

NOTES = {
    "notes/cats.md": f"---\ntitle: Cat care\ntags: [pets, '#animals']\naliases: Feline guide\ndate: 2024-05-01\n"
                     f"secret: {CANARY_FRONT}\n---\n# Cat care\nA cat needs a warm place and fresh water every day.\n\n"
                     f"## Feeding\nFeed the cat twice a day; keep {CANARY_BODY} out of reach.\n\n"
                     "```\n# not a heading\n```\n\n## Play\nCats play with string and small balls for hours.\n",
    "notes/weather.md": "# Weather log\nRain fell all morning and a storm arrived at noon with heavy cloud cover.\n",
    "notes/dogs.md": "# Dogs\nA puppy learns quickly when walks happen at the same time each day.\n",
    "notes/nested/deep.md": "Headingless note about gardening and tomatoes growing in the sun.\n",
    "notes/empty.md": "",
    "notes/badfront.md": "---\ntitle: [unclosed\n---\n# Broken frontmatter\nThe body is still indexed for search.\n",
    "notes/links.md": "# Links\nSee ![](../attachments/pic.png) and [doc](../attachments/readme.txt) and ![[pic.png]].\n",
    ".hidden/secret.md": "# Hidden\nhidden note\n",
    "node_modules/pkg/readme.md": "# Dependency\nnot indexed\n",
    "drafts/skip.md": "# Draft\nuser-excluded draft\n",
}


def build_vault(base: Path) -> Path:
    """The vault under base/vault, with siblings base/outside (a symlink target) and files of
    every kind the path rules tell apart."""
    vault, outside = base / "vault", base / "outside"
    for rel, text in NOTES.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (vault / "notes" / "large.md").write_text("# Large\n" + ("lorem ipsum dolor sit amet\n" * 9000), encoding="utf-8")
    (vault / "notes" / "latin1.md").write_bytes(b"# Caf\xe9\n")
    (vault / "notes" / "binary.md").write_bytes(b"# x\x00\x01")
    att = vault / "attachments"
    att.mkdir()
    (att / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + CANARY_ATTACH.encode())
    (att / "readme.txt").write_text(f"attachment text {CANARY_ATTACH}\n", encoding="utf-8")
    (att / "blob.unknownext").write_bytes(b"\x00\x01\x02")
    with open(att / "eleven.bin", "wb") as fh:  # sparse: 11 MiB on disk costs nothing
        fh.truncate(11 * 1024 * 1024)
    with open(att / "huge.bin", "wb") as fh:
        fh.truncate(60 * 1024 * 1024)
    (att / "sub").mkdir()
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "app.json").write_text("{}", encoding="utf-8")
    (vault / ".env").write_text("TOKEN=x\n", encoding="utf-8")
    outside.mkdir()
    (outside / "secret.txt").write_text("outside secret\n", encoding="utf-8")
    (outside / "secret.md").write_text("# Outside\nout of vault\n", encoding="utf-8")
    os.symlink(outside / "secret.txt", att / "escape.txt")
    os.symlink(outside, att / "escape-dir", target_is_directory=True)
    os.symlink(outside / "secret.md", vault / "notes" / "escape.md")
    os.symlink(att / "readme.txt", att / "inside-link.txt")
    os.symlink(vault / ".env", att / "to-hidden.txt")
    return vault


def build_model(path: Path, vault: Path, *, dimension: int = 8, seed: int = 0) -> Path:
    """A model from the vault's own words: topic words share one axis each, every other word
    gets a small deterministic vector of its own; `seed` changes every vector (a new model)."""
    import hashlib
    import re

    words: set[str] = set()
    for note in vault.rglob("*.md"):
        if note.is_file() and not note.is_symlink():
            words |= set(re.findall(r"\w+", note.read_bytes().decode("utf-8", "ignore").casefold()))
    rows: dict[str, list[float]] = {}
    for word in sorted(words | {w for group in TOPICS.values() for w in group}):
        digest = hashlib.sha256(f"{seed}:{word}".encode()).digest()
        rows[word] = [(b - 128) / 1024 for b in digest[:dimension]]
    for axis, group in enumerate(TOPICS.values()):
        for word in group:
            rows[word][axis] += 1.0
    return write_model(path, rows)


def settings(vault: Path | None, index_dir: Path, **flags: Any):
    raw = {"vault.root": str(vault) if vault else "", "index.dir": str(index_dir),
           **{k.replace("__", "."): v for k, v in flags.items()}}
    return load_settings({k: str(v) for k, v in raw.items()}, config=None, env={})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without VAULT_AGENT_* (and with HOME/XDG pointed at a scratch dir when given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VAULT_AGENT_")}
    env.update(extra)
    return env


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout,
                          env=env or clean_env(), cwd=Path(__file__).resolve().parent.parent)


class Stdio:
    """`vault-agent mcp` spoken to with raw JSON-RPC lines; every stdout line must be JSON."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen([*CLI, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env or clean_env(),
                                     cwd=Path(__file__).resolve().parent.parent)
        self.responses: dict[Any, dict] = {}
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        self._cond = threading.Condition()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self) -> None:
        for raw in self.proc.stdout:  # type: ignore[union-attr]
            line = raw.decode("utf-8")
            with self._cond:
                self.stdout_lines.append(line)
                message = json.loads(line)
                self.responses[message.get("id")] = message
                self._cond.notify_all()

    def _read_err(self) -> None:
        for raw in self.proc.stderr:  # type: ignore[union-attr]
            self.stderr_lines.append(raw.decode("utf-8", "replace"))

    def send(self, message: dict) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]

    def request(self, method: str, params: dict | None = None, *, wait: bool = True, timeout: float = 20) -> Any:
        self._next += 1
        msg_id = self._next
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, **({"params": params} if params is not None else {})})
        return self.wait(msg_id, timeout) if wait else msg_id

    def wait(self, msg_id: Any, timeout: float = 20) -> dict:
        deadline = time.monotonic() + timeout
        with self._cond:
            while msg_id not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no response to {msg_id}")
                self._cond.wait(left)
            return self.responses[msg_id]

    def initialize(self, version: str = "2025-03-26") -> dict:
        response = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                               "clientInfo": {"name": "tests", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def call(self, name: str, arguments: Any, **kw: Any) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments}, **kw)

    def close(self, timeout: float = 10) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def payload(response: dict) -> dict:
    """The tool payload of a successful tools/call response."""
    assert "result" in response, response
    result = response["result"]
    assert result["structuredContent"] == json.loads(result["content"][0]["text"])
    return result["structuredContent"]


class Serve:
    """`vault-agent serve` on a free loopback port (or `host`), stopped by its own pid."""

    def __init__(self, *args: str, host: str = "127.0.0.1", env: dict[str, str] | None = None,
                 wait: bool = True) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen([*CLI, "serve", "--host", host, "--port", str(self.port), *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env or clean_env(),
                                     cwd=Path(__file__).resolve().parent.parent)
        self.url = f"http://127.0.0.1:{self.port}"
        if wait:
            self.wait_listening()

    def wait_listening(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited {self.proc.returncode}: {self.proc.stderr.read().decode()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise TimeoutError("serve did not listen")

    def client(self, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def stop(self) -> str:
        self.proc.terminate()
        try:
            _out, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _out, err = self.proc.communicate()
        return err.decode("utf-8", "replace")


class HttpMcp:
    """A minimal Streamable HTTP MCP client: POST JSON-RPC, read a JSON or SSE answer."""

    def __init__(self, url: str, **headers: str) -> None:
        self.http = httpx.Client(timeout=30)
        self.url = url
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", **headers}
        self._next = 0

    def post(self, message: dict) -> httpx.Response:
        return self.http.post(self.url, json=message, headers=self.headers)

    def request(self, method: str, params: dict | None = None) -> dict:
        self._next += 1
        response = self.post({"jsonrpc": "2.0", "id": self._next, "method": method,
                              **({"params": params} if params is not None else {})})
        if method == "initialize" and "mcp-session-id" in response.headers:
            self.headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
        return decode(response)

    def initialize(self, version: str = "2025-03-26") -> dict:
        answer = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                             "clientInfo": {"name": "tests", "version": "0"}})
        self.headers["MCP-Protocol-Version"] = answer["result"]["protocolVersion"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call(self, name: str, arguments: Any) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments})


def decode(response: httpx.Response) -> dict:
    if "text/event-stream" in response.headers.get("content-type", ""):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return response.json()
