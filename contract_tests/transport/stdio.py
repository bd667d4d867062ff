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
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contract_tests.transport.limits import COUNTED, HEALTH, LIMITS
from contract_tests.transport.reader import Oversize, read_lines
from contract_tests.transport.transcript import Transcript

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


def initialize_params(version: str | None = None) -> dict[str, Any]:
    """The suite's initialize params: the run's protocol version (or `version`), no capabilities."""
    return {"protocolVersion": version or protocol_version(), "capabilities": {}, "clientInfo": CLIENT_INFO}


def initialize_message(version: str | None = None, request_id: Any = "rc-init") -> dict[str, Any]:
    """The suite's one raw initialize request."""
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": initialize_params(version)}


class ServerGone(RuntimeError):
    """The server exited or closed stdout while a response was awaited. `earlier`: it had
    already gone before this request was sent (another test saw it go)."""

    def __init__(self, message: str, *, earlier: bool = False) -> None:
        super().__init__(message)
        self.earlier = earlier


class NoResponse(TimeoutError):
    """The server did not answer a request in time.

    `answered_before`: requests of this connection it had answered (initialize included);
    `full_wait`: whether the request waited its whole deadline (not one the breaker shortened
    after earlier silence); `request`: the call, described. A request a healthy server leaves
    unanswered is evidence (verdicts.unanswered); a test names the requirement and case it
    tests in `rc_req` and `rc_case` when it knows them better than its cited ids do."""

    def __init__(self, message: str, *, answered_before: int = 0, full_wait: bool = False,
                 request: str | None = None) -> None:
        super().__init__(message)
        self.answered_before = answered_before
        self.full_wait = full_wait
        self.request = request


class ServerStopped(RuntimeError):
    """The run has stopped talking to the server (it stopped answering, or the run budget is
    spent): no request is sent, and the check that needed one is blocked for that reason."""


class BadAnswer(RuntimeError):
    """Over HTTP, the POST that carried a request was answered (2xx) with a body that is not a
    JSON-RPC message answering it: the request has no answer, and MCP-RPC-003 is broken."""

    MARK = "rc_bad_answer"  # the harness-made error's data, for an SDK session to recognise


class MessageTooLarge(RuntimeError):
    """The server answered with one message over LIMITS.max_message_bytes; the suite kept its
    first bytes (`record.prefix`) and never held the rest."""

    def __init__(self, method: str, record: Oversize) -> None:
        super().__init__(f"the answer to {method} was one message of {record.size:,} bytes, over the "
                         f"{record.limit:,}-byte limit (--max-message-bytes)")
        self.record = record


def describe_request(method: str, params: Any) -> str:
    """A request as a finding names it: `tools/call NAME {...}` for a tool call."""
    if method == "tools/call" and isinstance(params, dict) and isinstance(params.get("name"), str):
        return f"tools/call {params['name']} {json.dumps(params.get('arguments', {}), ensure_ascii=True, sort_keys=True)}"
    return method if params is None else f"{method} {json.dumps(params, ensure_ascii=True, sort_keys=True)[:300]}"


STALL_CHARS = 300  # of the request a stall names (its arguments can be long)


def shortened(request: str) -> str:
    """A described request (`describe_request`) cut to STALL_CHARS, for why a run stopped."""
    return request if len(request) <= STALL_CHARS else request[:STALL_CHARS] + f"... ({len(request)} chars)"


class Connection:
    """One MCP connection: raw requests matched by id, and a hand-off to an attached SDK session.

    Subclasses deliver outgoing messages (send_bytes) and feed every incoming line to _route.
    """

    proc: subprocess.Popen | None = None

    def __init__(self, transcript: Transcript | None = None) -> None:
        self.transcript = transcript or Transcript()
        self.bad_lines: list[str] = []
        self.unsolicited: list[Any] = []   # the first LIMITS.max_unsolicited of them
        self.unsolicited_count = 0
        self.oversize: list[Oversize] = []
        self._answered: set[Any] = set()  # request ids whose (first) response the transcript kept
        self.stalled: str | None = None   # why this connection is taken to have stopped answering
        self.answered_requests = 0         # requests of the suite's (raw or SDK) answered in a row (a request
        #                                    left unanswered starts the count again)
        self.waits: dict[str, float] = {}  # request id -> seconds its caller waits
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
        """A log stream, line by line; a line over LIMITS.log_line_chars is kept cut."""
        read_lines(pipe.fileno(), lambda: LIMITS.log_line_chars,
                   lambda raw: self.transcript.add(channel, raw.decode("utf-8", "replace")),
                   lambda big: self.transcript.add(channel, big.text()), self.transcript.tokens)

    def _closed(self) -> None:
        self._stdout_done.set()
        with self._lock:
            for waiter in self._pending.values():
                waiter.put(None)

    def _receive(self, line: str) -> None:
        """One protocol message: into the transcript (a response to the suite's own request is
        always kept; a flood of anything else is capped there), then to whoever awaits it. Past
        LIMITS.max_unsolicited, a line without an id (a notification, garbage) is not even parsed:
        a flood of a million costs counting, not a million parses."""
        if '"id"' not in line:
            HEALTH.flooded(len(line))
        if self.unsolicited_count + len(self.bad_lines) >= LIMITS.max_unsolicited and '"id"' not in line:
            self.unsolicited_count += 1
            self.transcript.add("stdout", line)
            return
        try:
            message = json.loads(line) if line.strip() else None
        except ValueError:
            message = None
        msg_id = message.get("id") if isinstance(message, dict) else None
        own = isinstance(msg_id, (str, int)) and msg_id in self.sent_params and msg_id not in self._answered
        if own:
            self._answered.add(msg_id)
        self.transcript.add("stdout", line, force=own)
        if line.strip():
            self._route(line, message)

    def _oversize(self, record: Oversize) -> None:
        """A message over the limit: its evidence into the transcript, and the request it answers
        (if its id could be read) fails with MessageTooLarge instead of waiting."""
        self.transcript.add("stdout", record.text(), force=True)
        if len(self.oversize) < 100:
            self.oversize.append(record)
        msg_id = record.request_id()
        with self._lock:
            waiter = self._pending.get(msg_id) if isinstance(msg_id, str) else None
            sink = self._sdk_sink
        if waiter is not None:
            waiter.put(record)
        elif sink is not None and msg_id is not None:
            sink({"jsonrpc": "2.0", "id": msg_id, "error": {
                "code": -32603, "message": f"[harness] the answer was one message of {record.size:,} bytes, over "
                                           f"the {record.limit:,}-byte limit"}})

    def _route(self, line: str, message: Any = None) -> None:
        if not line.strip():
            return
        if message is None:
            try:
                message = json.loads(line)
            except ValueError:
                if len(self.bad_lines) < LIMITS.max_unsolicited:
                    self.bad_lines.append(line[:LIMITS.evidence_bytes])
                else:
                    self.unsolicited_count += 1
                return
        msg_id = message.get("id") if isinstance(message, dict) else None
        with self._lock:
            waiter = self._pending.get(msg_id) if isinstance(msg_id, str) else None
            sink = self._sdk_sink
        if waiter is not None:
            waiter.put(message)
        elif sink is not None and (msg_id is not None or self.unsolicited_count < LIMITS.max_unsolicited):
            if msg_id is None:
                self.unsolicited_count += 1
            sink(message)
        else:
            self.unsolicited_count += 1
            if len(self.unsolicited) < LIMITS.max_unsolicited:
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
                timeout: float | None = None) -> dict[str, Any]:
        """Send one request with a fresh id and return the whole response message. It waits
        `timeout` seconds (default LIMITS.request_timeout, --request-timeout); after
        LIMITS.unanswered_limit requests in a row got no answer, none is sent any more."""
        stopped = HEALTH.check()
        if stopped:
            raise ServerStopped(stopped)
        self.refuse_if_stalled()
        ordinary = timeout is None  # a check that asks for a longer wait expects a slow answer
        asked = LIMITS.request_timeout if timeout is None else timeout
        timeout = HEALTH.deadline(method, asked)
        msg_id = f"rc-{next(self._ids)}"
        self.waits[msg_id] = timeout  # how long its answer may take (HTTP reads its stream as long)
        sent_at = time.monotonic()
        waiter: queue.Queue = queue.Queue()
        with self._lock:
            self._pending[msg_id] = waiter
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            if self._stdout_done.is_set():
                raise ServerGone(f"the server had already exited or closed its output{self._exit_note()}",
                                 earlier=True)
            self.send(message)
            try:
                response = waiter.get(timeout=timeout)
            except queue.Empty as exc:
                described = describe_request(method, params)
                HEALTH.not_answered(method, timeout, shortened(described))
                self.stall(method, described, timeout)
                answered, self.answered_requests = self.answered_requests, 0
                raise NoResponse(f"no response to {method} within {timeout:g} s", answered_before=answered,
                                 full_wait=timeout >= asked, request=described) from exc
        finally:
            with self._lock:
                self._pending.pop(msg_id, None)
        if response is None:
            raise ServerGone(f"the server exited or closed its output before answering {method}{self._exit_note()}")
        if isinstance(response, dict) and BadAnswer.MARK in response:
            raise BadAnswer(f"the answer to {method} was {response[BadAnswer.MARK]}")
        if isinstance(response, Oversize):
            HEALTH.oversized(method, response.size)
            raise MessageTooLarge(method, response)
        HEALTH.answered(method, time.monotonic() - sent_at if ordinary else 0.0)
        self.answered_requests += 1
        return response

    def stall(self, method: str, request: str, timeout: float) -> None:
        """`request` (described) got no answer in `timeout` s: a connection whose counted request
        went unanswered is taken to have stopped answering, and `stalled` names that call."""
        if method in COUNTED:
            self.stalled = f"no answer to {shortened(request)} within {timeout:g} s"
            HEALTH.stalled(self.stalled)

    def refuse_if_stalled(self) -> None:
        """Nothing more is sent on a connection that stopped answering: the request is refused
        (ServerStopped), and HEALTH learns that a check was lost to the stall (`refused`)."""
        if self.stalled:
            HEALTH.refused(self.stalled)
            raise ServerStopped(f"this server stopped answering earlier ({self.stalled}); nothing more is sent to it")

    def _exit_note(self) -> str:
        code = self.proc.poll() if self.proc is not None else None
        return f" (exit status {code})" if code is not None else ""

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def initialize(self, version: str | None = None, *, timeout: float | None = None) -> dict[str, Any]:
        version = version or protocol_version()
        response = self.request("initialize", initialize_params(version), timeout=timeout)
        if "result" in response:
            self.notify("notifications/initialized")
        return response

    def call_tool(self, name: str, arguments: Any, *, timeout: float | None = None) -> dict[str, Any]:
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
        """Line by line, in chunks: a line over LIMITS.max_message_bytes is never assembled."""
        assert self.proc is not None and self.proc.stdout is not None
        read_lines(self.proc.stdout.fileno(), lambda: LIMITS.max_message_bytes,
                   lambda raw: self._receive(raw.decode("utf-8", "replace")), self._oversize, self.transcript.tokens)
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
