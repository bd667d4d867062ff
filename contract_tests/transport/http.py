"""A server spoken to over Streamable HTTP, with the same interface as StdioServer.

Messages are POSTed in order by one sender thread; every JSON-RPC message that comes back (a
JSON body or SSE `data:` lines) is recorded in the transcript's stdout channel, one per line,
and routed like a stdio line. Raw bodies and response headers are kept in the `raw` channel.
"""

from __future__ import annotations

import base64
import contextlib
import json
import queue
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from contract_tests.transport.limits import HEALTH, LIMITS
from contract_tests.transport.reader import Oversize, _Watch, read_lines
from contract_tests.transport.stdio import BadAnswer, Connection, ServerGone
from contract_tests.transport.transcript import Transcript

PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"
# Stateless-era (2026-07-28) routing headers mirror the body: the method, and for these
# methods the named target.
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

# What every MCP POST over Streamable HTTP carries.
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def header_value(value: str) -> str:
    """Visible ASCII as is; anything else in the `=?base64?...?=` form the transport defines."""
    if all(0x20 <= ord(ch) <= 0x7E for ch in value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def _id_of(text: str) -> Any:
    try:
        message = json.loads(text)
    except ValueError:
        return None
    return message.get("id") if isinstance(message, dict) else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def messages_of(response: httpx.Response) -> list[str]:
    """The JSON-RPC messages in a response: its JSON body, or the data of each SSE event."""
    kind = response.headers.get("content-type", "")
    if "text/event-stream" in kind:
        out, data = [], []
        for line in re.split(r"\r\n|\r|\n", response.text) + [""]:  # SSE line ends only
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif not line.strip() and data:
                out.append("\n".join(data))
                data = []
        return out
    text = response.text.strip()
    return [text] if text.startswith(("{", "[")) else []


STREAM_GRACE_S = 1.0


def _close_quietly(response: httpx.Response | None = None) -> None:
    """Leave a stream another thread is reading: shut its socket down (a plain close would not
    wake a read blocked on it), then close the response."""
    if response is None or response.is_closed:
        return
    try:
        sock = response.extensions["network_stream"].get_extra_info("socket")
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except (KeyError, AttributeError, OSError):
        pass
    try:
        response.close()
    except Exception:  # noqa: BLE001 - a stream being read in another thread may object; it is left either way
        pass


def _until(chunks: Any, seconds: float) -> Any:
    """The chunks of a body until `seconds` after its first (checked between chunks): however
    long the server took to start answering, a body that keeps coming is left."""
    deadline = None
    for chunk in chunks:
        deadline = deadline or time.monotonic() + seconds
        yield chunk
        if time.monotonic() > deadline:
            return


def _read_body(chunks: Any, tokens: Any) -> tuple[str, Oversize | None]:
    """A whole body up to LIMITS.max_message_bytes, else an Oversize record of it."""
    buf, big, watch, size = bytearray(), None, None, 0
    for chunk in chunks:
        size += len(chunk)
        if big is None and size > LIMITS.max_message_bytes:
            watch = _Watch(tokens())
            watch.feed(bytes(buf))
            big = bytearray(buf[:LIMITS.evidence_bytes])
            buf = bytearray()
        if big is None:
            buf += chunk
        else:
            if len(big) < LIMITS.evidence_bytes:
                big += chunk[:LIMITS.evidence_bytes - len(big)]
            watch.feed(chunk)
    if big is not None:
        return "", Oversize(size, LIMITS.max_message_bytes, bytes(big), list(watch.found.values()))
    return buf.decode("utf-8", "replace"), None


def _read_sse(chunks: Any, message: Any, oversize: Any, tokens: Any) -> None:
    """SSE events as they complete: each event's data lines joined make one message."""
    data: list[str] = []

    def line(raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if text.startswith("data:"):
            data.append(text[5:].lstrip(" "))
        elif not text.strip() and data:
            joined = "\n".join(data)
            data.clear()
            message(joined)

    read_lines(chunks, lambda: LIMITS.max_message_bytes, line, oversize, tokens, blank_lines=True)
    if data:
        message("\n".join(data))


class HttpServer(Connection):
    def __init__(self, url: str, argv: list[str] | None = None, env: dict[str, str] | None = None,
                 cwd: Path | None = None, transcript: Transcript | None = None,
                 startup_timeout: float = 20.0, headers: dict[str, str] | None = None) -> None:
        super().__init__(transcript)
        self.url = url
        self.extra_headers = dict(headers or {})  # sent on every request (e.g. Authorization)
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        # Longer than any per-request wait; a slow answer fails its own request, not the connection.
        self.http = httpx.Client(timeout=httpx.Timeout(150.0, connect=10.0),
                                 limits=httpx.Limits(max_connections=200, max_keepalive_connections=20))
        self._outbox: queue.Queue = queue.Queue()
        if argv:
            self._start_process(argv, env, cwd, stdio=False)
            self._reader(self.proc.stdout, "stderr")
            self._wait_until_listening(startup_timeout)
        threading.Thread(target=self._sender, daemon=True).start()

    def _wait_until_listening(self, timeout: float) -> None:
        url = httpx.URL(self.url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise ServerGone(f"server exited with status {self.proc.returncode} before listening")
            try:
                with socket.create_connection((url.host, url.port or 80), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise ServerGone(f"server did not listen on {url.host}:{url.port} within {timeout:.0f} s")

    # -- HTTP ------------------------------------------------------------------------
    def headers(self, message: Any = None) -> dict[str, str]:
        out = {**MCP_HEADERS, **self.extra_headers}
        if self.session_id:
            out["Mcp-Session-Id"] = self.session_id
        version = self.protocol_version
        meta = (message or {}).get("params", {}).get("_meta", {}) if isinstance(message, dict) else {}
        if isinstance(meta, dict) and isinstance(meta.get(PROTOCOL_VERSION_META), str):
            version = meta[PROTOCOL_VERSION_META]
            method = message.get("method")
            if isinstance(method, str):
                out["Mcp-Method"] = method
                target = message.get("params", {}).get(NAME_BEARING.get(method, ""), None)
                if isinstance(target, str):
                    out["Mcp-Name"] = header_value(target)
        if version:
            out["MCP-Protocol-Version"] = version
        return out

    def post(self, body: bytes, headers: dict[str, str], on_message: Any = None,
             on_headers: Any = None, wait: float | None = None, fresh: bool = False) -> httpx.Response:
        """One POST, read under the limits and recorded. The body is streamed, never held past
        LIMITS.max_message_bytes: a JSON body or SSE event over it becomes an Oversize record
        (its start kept, the rest counted and searched for canaries). Each message is recorded
        (and handed to `on_message`) as soon as it is complete, so a caller learns of its
        answer while a stream goes on; a stream is read to its end, or until a request timeout
        after its first byte (a stream held open, or one without end). Returns the response
        with the kept body, so protocol probes read it as usual. `fresh`: on a new connection,
        not one the pool kept alive (which a server may close at any time, e.g. with the
        session it belonged to)."""
        kept: list[str] = []
        other = ""  # a body that is not JSON-RPC (an HTTP error page), kept cut

        def message(text: str) -> None:
            msg_id = _id_of(text) if '"id"' in text else None
            if msg_id is None:
                HEALTH.flooded(len(text))
            self.transcript.add("stdout", text, force=msg_id is not None)
            if msg_id is not None or len(kept) < LIMITS.max_unsolicited:  # a stream of notifications: capped
                kept.append(text)
            if on_message is not None:
                on_message(text, msg_id)

        # No read of the stream waits longer than its caller does (a stream held open is left).
        read = (wait if wait is not None else LIMITS.request_timeout) + 5
        with (httpx.Client() if fresh else contextlib.nullcontext(self.http)) as client, \
                client.stream("POST", self.url, content=body, headers=headers,
                              timeout=httpx.Timeout(read, connect=10.0)) as response:
            self.transcript.add("raw", f"HTTP {response.status_code} {dict(response.headers)}")
            if on_headers is not None:
                on_headers(response)
            chunks = _until(response.iter_bytes(), LIMITS.request_timeout + 10)
            sse = "text/event-stream" in response.headers.get("content-type", "")
            if sse:
                _read_sse(chunks, message, self._oversize, self.transcript.tokens)
            else:
                text, big = _read_body(chunks, self.transcript.tokens)
                if big is not None:
                    self._oversize(big)
                elif text.strip().startswith(("{", "[")):
                    message(text.strip())
                elif text:
                    other = text[:LIMITS.evidence_bytes]
                    self.transcript.add("raw", other)
            status, headers_out = response.status_code, response.headers
        content = ("".join(f"data: {t}\n\n" for t in kept) if sse else "\n".join(kept) or other).encode()
        if kept:
            self.transcript.add("raw", content.decode("utf-8", "replace")[:LIMITS.evidence_bytes])
        return httpx.Response(status, headers=headers_out, content=content,
                              request=httpx.Request("POST", self.url))

    def _sender(self) -> None:
        """Messages are POSTed in order: each waits until the one before has its answer (or its
        exchange ended), while the rest of that POST's stream is read on in its own thread."""
        while True:
            item = self._outbox.get()
            if item is None:
                return
            body, message = item
            done = threading.Event()
            threading.Thread(target=self._exchange, args=(body, message, done), daemon=True).start()
            done.wait()
            if self._stdout_done.is_set():
                return

    def _exchange(self, body: bytes, message: Any, done: threading.Event) -> None:
        request_id = message.get("id") if isinstance(message, dict) and "method" in message else None
        initializing = isinstance(message, dict) and message.get("method") == "initialize"
        answered = threading.Event()
        opened: list[httpx.Response] = []

        def headers_in(response: httpx.Response) -> None:
            opened.append(response)
            if initializing:
                self.session_id = response.headers.get("mcp-session-id", self.session_id)

        def deliver(text: str, msg_id: Any) -> None:
            if initializing and msg_id == request_id:
                try:
                    self.protocol_version = json.loads(text)["result"]["protocolVersion"]
                except (ValueError, KeyError, TypeError):
                    pass
            self._route(text)
            if request_id is not None and msg_id == request_id:
                answered.set()
                done.set()  # the next message may go; this stream is read on to its end
                # ... for a while: a stream still open STREAM_GRACE_S after its answer is left
                # (MCP: the server SHOULD close it once the response is sent).
                timer = threading.Timer(STREAM_GRACE_S, _close_quietly, args=(opened[-1],) if opened else ())
                timer.daemon = True
                timer.start()
        try:
            response = self.post(body, self.headers(message), on_message=deliver, on_headers=headers_in,
                                 wait=self.waits.pop(request_id, None) if isinstance(request_id, str) else None)
        except httpx.TimeoutException:
            if not answered.is_set():  # a stream that timed out after its answer lost nothing
                self._no_answer(request_id, None, "no HTTP response in time")
        except (httpx.HTTPError, RuntimeError):  # RuntimeError: the client was closed meanwhile
            if not answered.is_set():
                self._closed()
        else:
            texts = messages_of(response)
            answers = any(_id_of(t) == request_id for t in texts)
            if response.status_code >= 400 and not answers:
                self._no_answer(request_id, response.status_code, f"HTTP {response.status_code} without a JSON-RPC response")
            elif request_id is not None and not answers and not answered.is_set() \
                    and "text/event-stream" not in response.headers.get("content-type", ""):
                self._bad_answer(request_id, response)
        finally:
            done.set()

    def _no_answer(self, request_id: Any, status: int | None, why: str) -> None:
        """Fail a request the server answered at the HTTP level only (e.g. 400, 401) at once.

        The error is made here, not by the server: it never enters the transcript, and it
        carries `rc_http_status` so tests can tell it from a JSON-RPC error the server sent.
        """
        if request_id is None:
            return
        self._route(json.dumps({"jsonrpc": "2.0", "id": request_id, "rc_http_status": status,
                                "error": {"code": -32000, "message": f"[harness] {why}"}}))

    def _bad_answer(self, request_id: Any, response: httpx.Response) -> None:
        """A 2xx body that does not answer the request it was posted with (not JSON, or JSON
        without the request's id): kept as what the server sent, and the request fails at once
        with BadAnswer (an SSE stream that ends without the answer is left to the deadline: MCP
        lets a client resume a broken stream)."""
        body = response.content.decode("utf-8", "replace")
        if not body.strip().startswith(("{", "[")):  # JSON was recorded as it came
            self.transcript.add("stdout", body[:LIMITS.evidence_bytes], force=True)
        why = (f"HTTP {response.status_code} {response.headers.get('content-type', 'without a content type')} "
               f"whose body is not a JSON-RPC response to it: {body[:120]!r}")
        self._route(json.dumps({"jsonrpc": "2.0", "id": request_id, BadAnswer.MARK: why,
                                "error": {"code": -32603, "message": f"[harness] {why}", "data": {BadAnswer.MARK: why}}}))

    def send_bytes(self, data: bytes) -> None:
        self.transcript.add("sent", data.decode("utf-8", "replace"))
        try:
            message = json.loads(data)
        except ValueError:
            message = None
        self._outbox.put((data, message))

    def bodiless_headers(self) -> dict[str, str]:
        """The headers of a request without a body (DELETE): no Content-Type, which describes a
        body (RFC 9110, 8.3); some HTTP stacks refuse `Content-Type: application/json` with an
        empty body (Fastify: FST_ERR_CTP_EMPTY_JSON_BODY), which would be the suite's fault."""
        return {k: v for k, v in self.headers().items() if k.lower() != "content-type"}

    def delete(self) -> int:
        """DELETE the session on a new connection; the status, the body left unread."""
        self.transcript.add("raw", "DELETE (end the session)")
        with httpx.Client(timeout=httpx.Timeout(LIMITS.request_timeout, connect=10.0)) as client, \
                client.stream("DELETE", self.url, headers=self.bodiless_headers()) as response:
            self.transcript.add("raw", f"HTTP {response.status_code} {dict(response.headers)}")
            return response.status_code

    def close(self, timeout: float = 5.0) -> int | None:
        """End the session (DELETE), then stop the process if the suite started it (idempotent)."""
        if self.http.is_closed:
            return self.proc.returncode if self.proc is not None else 0
        if self.session_id:
            try:
                self.http.delete(self.url, headers=self.bodiless_headers())
            except httpx.HTTPError:
                pass
        self._outbox.put(None)
        self.http.close()
        if self.proc is None:
            return 0
        self.proc.terminate()
        code = self._wait(timeout)
        self._drain()
        return code
