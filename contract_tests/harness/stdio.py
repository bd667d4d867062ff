"""A server process spoken to over stdio: raw JSON-RPC for protocol probes, and a bridge
that lets the official SDK's ClientSession drive the same process for ordinary calls.

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


class ServerGone(RuntimeError):
    """The server exited or closed stdout while a response was awaited."""


class NoResponse(TimeoutError):
    """The server did not answer a request in time."""


class StdioServer:
    def __init__(self, argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
                 transcript: Transcript | None = None) -> None:
        self.argv = argv
        self.transcript = transcript or Transcript()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.bad_lines: list[str] = []
        self.unsolicited: list[Any] = []
        self._ids = itertools.count(1)
        self._pending: dict[str, queue.Queue] = {}
        self._lock = threading.Lock()
        self._sdk_sink: Callable[[Any], None] | None = None
        self._stdout_done = threading.Event()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # -- reading ---------------------------------------------------------------------
    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.transcript.add("stdout", line)
            self._route(line)
        self._stdout_done.set()
        with self._lock:
            for waiter in self._pending.values():
                waiter.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.transcript.add("stderr", raw.decode("utf-8", "replace").rstrip("\r\n"))

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
        assert self.proc.stdin is not None
        self.transcript.add("sent", data.decode("utf-8", "replace"))
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ServerGone("server closed its stdin") from exc

    def send(self, message: Any) -> None:
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

    def initialize(self, version: str = LATEST_HANDSHAKE) -> dict[str, Any]:
        response = self.request("initialize", {
            "protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO,
        })
        if "result" in response:
            self.notify("notifications/initialized")
        return response

    def call_tool(self, name: str, arguments: Any, *, timeout: float = 30.0) -> dict[str, Any]:
        """tools/call over raw JSON-RPC; returns the whole response (result or error)."""
        return self.request("tools/call", {"name": name, "arguments": arguments}, timeout=timeout)

    # -- lifecycle -------------------------------------------------------------------
    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, timeout: float = 5.0) -> int | None:
        """Close stdin and wait; return the exit code, or None if it had to be killed."""
        try:
            if self.proc.stdin and not self.proc.stdin.closed:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
            code = None
        self._stdout_done.wait(timeout=2)
        return code

    def rss_kib(self) -> int | None:
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return None
