"""A server spoken to over stdio (here) or Streamable HTTP (http.py): raw JSON-RPC for protocol
probes, and a hand-off that lets the official SDK's ClientSession drive the same connection.

Every line the server writes (stdout and stderr) lands in a Transcript before anything
parses it, so canary scans see the raw bytes.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .transcript import Transcript

LATEST_HANDSHAKE = "2025-11-25"
CLIENT_INFO = {"name": "retrieval-contract", "version": "0.1.0"}
_SPOKEN = {"version": LATEST_HANDSHAKE}


def use_protocol_version(version: str) -> None:
    """The handshake version this run speaks: the one the preflight negotiated from the
    profile's allowed versions, or --protocol-version. Every initialize (raw, or the SDK
    client's) offers it."""
    _SPOKEN["version"] = version


def protocol_version() -> str:
    return _SPOKEN["version"]


class ServerGone(RuntimeError):
    """The server exited or closed stdout while a response was awaited."""


class NoResponse(TimeoutError):
    """The server did not answer a request in time."""


class Connection:
    """One MCP connection: raw requests matched by id, and a hand-off to an attached SDK session.

    Subclasses deliver outgoing messages (send_bytes) and feed every incoming line to _route.
    """

    proc: subprocess.Popen | None = None

    def __init__(self, transcript: Transcript | None = None) -> None:
        self.transcript = transcript or Transcript()
        self.bad_lines: list[str] = []
        self.unsolicited: list[Any] = []
        self._ids = itertools.count(1)
        self._pending: dict[str, queue.Queue] = {}
        self._lock = threading.Lock()
        self._sdk_sink: Callable[[Any], None] | None = None
        self._stdout_done = threading.Event()
        self._readers: list[threading.Thread] = []
        self.sent_params: dict[str, Any] = {}  # request id -> params, to tell a caller's echo from a leak

    def _start_process(self, argv: list[str], env: dict[str, str] | None, cwd: Path | None, *, stdio: bool) -> None:
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
        self._reader(self.proc.stderr, "stderr")

    def _reader(self, pipe, channel: str) -> None:
        thread = threading.Thread(target=self._read_pipe, args=(pipe, channel), daemon=True)
        thread.start()
        self._readers.append(thread)

    def _drain(self, timeout: float = 2.0) -> None:
        """After the process ended: wait until its last output lines are in the transcript."""
        for thread in self._readers:
            thread.join(timeout)

    def _read_pipe(self, pipe, channel: str) -> None:
        for raw in pipe:
            self.transcript.add(channel, raw.decode("utf-8", "replace").rstrip("\r\n"))

    def _closed(self) -> None:
        self._stdout_done.set()
        with self._lock:
            for waiter in self._pending.values():
                waiter.put(None)

    def _route(self, line: str) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError:
            self.bad_lines.append(line)
            return
        msg_id = message.get("id") if isinstance(message, dict) else None
        with self._lock:
            waiter = self._pending.get(msg_id) if isinstance(msg_id, str) else None
            sink = self._sdk_sink
        if waiter is not None:
            waiter.put(message)
        elif sink is not None:
            sink(message)
        else:
            self.unsolicited.append(message)

    def attach_sdk(self, sink: Callable[[Any], None] | None) -> None:
        with self._lock:
            self._sdk_sink = sink

    # -- writing ---------------------------------------------------------------------
    def send_bytes(self, data: bytes) -> None:
        raise NotImplementedError

    def send(self, message: Any) -> None:
        if isinstance(message, dict) and "id" in message and "method" in message:
            self.sent_params[message["id"]] = message.get("params")
        self.send_bytes((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))

    def request(self, method: str, params: dict[str, Any] | None = None, *,
                timeout: float = 15.0) -> dict[str, Any]:
        """Send one request with a fresh id and return the whole response message."""
        msg_id = f"rc-{next(self._ids)}"
        waiter: queue.Queue = queue.Queue()
        with self._lock:
            self._pending[msg_id] = waiter
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            if self._stdout_done.is_set():
                raise ServerGone("server stdout is closed")
            self.send(message)
            try:
                response = waiter.get(timeout=timeout)
            except queue.Empty as exc:
                raise NoResponse(f"no response to {method} within {timeout:.0f} s") from exc
        finally:
            with self._lock:
                self._pending.pop(msg_id, None)
        if response is None:
            raise ServerGone(f"server closed stdout before answering {method}")
        return response

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def initialize(self, version: str | None = None, *, timeout: float = 15.0) -> dict[str, Any]:
        version = version or protocol_version()
        response = self.request("initialize", {
            "protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO,
        }, timeout=timeout)
        if "result" in response:
            self.notify("notifications/initialized")
        return response

    def call_tool(self, name: str, arguments: Any, *, timeout: float = 30.0) -> dict[str, Any]:
        """tools/call over raw JSON-RPC; returns the whole response (result or error)."""
        return self.request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)

    # -- lifecycle -------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is None or self.proc.poll() is None

    def _wait(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
            return None

    def rss_kib(self) -> int | None:
        if self.proc is None:
            return None
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return None


class StdioServer(Connection):
    """A server process spoken to over its stdin and stdout."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
                 transcript: Transcript | None = None) -> None:
        super().__init__(transcript)
        self._start_process(argv, env, cwd, stdio=True)
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.transcript.add("stdout", line)
            self._route(line)
        self._closed()

    def send_bytes(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.transcript.add("sent", data.decode("utf-8", "replace"))
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ServerGone("server closed its stdin") from exc

    def close(self, timeout: float = 5.0) -> int | None:
        """Close stdin and wait; return the exit code, or None if it had to be killed."""
        try:
            if self.proc.stdin and not self.proc.stdin.closed:
                self.proc.stdin.close()
        except OSError:
            pass
        code = self._wait(timeout)
        self._stdout_done.wait(timeout=2)
        self._drain()
        return code
