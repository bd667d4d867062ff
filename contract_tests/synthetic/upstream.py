"""A loopback HTTP server that stands in for the hosted profile's upstream note store ("canister").

The server under test reaches the canister over HTTP. Seed 001 ("Canister Auth And Header
Behavior", "One-Note Read Behavior") fixes the only request the hosted get_section_source
tool may make:

    GET {canisterUrl}/api/v1/notes/{encodeURIComponent(normalizedPath)}
    Authorization: Bearer <ctx.token>
    X-Vault-Id: <ctx.vaultId>
    X-User-Id: <effective canister user id>
    X-Gateway-Auth: <ctx.canisterAuthSecret>   (when configured)
    Accept: application/json
    Content-Type: application/json

`UpstreamDouble` serves exactly that route and records every request it receives (method,
raw percent-encoded path, query, lower-cased headers, body, monotonic arrival time), so tests
can check the headers and that no list, search, write or other endpoint was hit. Anything
else (another method, `GET /api/v1/notes` list scans, a path with more than one segment after
`/api/v1/notes/`, ...) gets a 404 and is still recorded.

ASSUMPTION (not fixed by the seed): the seed says the tool reads "one note" and derives
metadata "from that note body", and it names "full frontmatter" and "raw canister payloads"
as things never to return, but it does not give the canister's JSON field names. The double
therefore returns whatever dict the caller stored with `put_note` verbatim, and
`note_payload()` builds the assumed default shape ``{"path": ..., "content": ...}`` (plus
``"frontmatter"`` only if given). A profile whose real canister uses other names only needs
different `put_note` payloads.

Notes are scoped by vault: `put_note(vault_id, path, payload)` is served only to requests
whose `X-Vault-Id` equals `vault_id` (and, if `user_id=` was given, whose `X-User-Id` equals
it); anything else is a 404, like a missing note.

Failure modes (`respond_with(mode, for_path=None)`): "normal", "404", "401", "403", "500",
"timeout" (hold the response `delay_s` seconds, default 30, then close the connection without
answering), "malformed-json" (200, truncated JSON), "foreign-path" (200 whose JSON `path`
names another vault's note), "absolute-path" (200 whose JSON `path` is an absolute
filesystem path), "raw-body-echo" (500 whose body holds the marker and the request's
headers), "html-200" (a 200 text/html page), "no-content-200" (200 JSON without a
`content` string). Every failure-mode body (the 200 bodies of "malformed-json", "foreign-path" and
"absolute-path" included; "timeout" sends none) and the normal-mode "note not found" 404
carry `payload_marker()`, a per-instance random token, so leak checks can look for it in the
server's output, errors and logs.

The server binds 127.0.0.1, port 0 (the OS picks), and never any other address.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, unquote, urlsplit

NOTES_PREFIX = "/api/v1/notes/"
MODES = (
    "normal", "404", "401", "403", "500", "timeout",
    "malformed-json", "foreign-path", "absolute-path", "raw-body-echo", "html-200", "no-content-200",
)
DEFAULT_TIMEOUT_DELAY_S = 30.0
LOOPBACK = "127.0.0.1"


def encode_component(path: str) -> str:
    """JavaScript's encodeURIComponent: UTF-8 percent-encoding of all but A-Z a-z 0-9 -_.!~*'()."""
    return quote(path, safe="-_.!~*'()")


def note_url_path(path: str) -> str:
    """The request path the seed prescribes for reading `path`: /api/v1/notes/{encoded}."""
    return NOTES_PREFIX + encode_component(path)


def note_payload(path: str, content: str, frontmatter: dict[str, Any] | None = None) -> dict[str, Any]:
    """A note in the assumed canister shape (see the module docstring)."""
    payload: dict[str, Any] = {"path": path, "content": content}
    if frontmatter is not None:
        payload["frontmatter"] = frontmatter
    return payload


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str                      # raw, still percent-encoded, without the query
    query: str                     # raw query string ("" if none)
    headers: dict[str, str]        # lower-cased names; repeated headers joined with ", "
    body: bytes
    at: float                      # time.monotonic() on arrival

    @property
    def note_path(self) -> str | None:
        """The decoded note path if this is a well-formed note read's path, else None."""
        return _note_path(self.path)


def read_path(request: RecordedRequest) -> str | None:
    """The note path a request reads (decoded), or None if it is not a one-note GET."""
    return request.note_path if request.method == "GET" else None


def _note_path(raw_path: str) -> str | None:
    if not raw_path.startswith(NOTES_PREFIX):
        return None
    segment = raw_path[len(NOTES_PREFIX):]
    if not segment or "/" in segment:
        return None
    return unquote(segment)


@dataclass
class _Mode:
    mode: str
    delay_s: float = DEFAULT_TIMEOUT_DELAY_S


@dataclass
class _Note:
    payload: dict[str, Any]
    user_id: str | None = None


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    notes: dict[tuple[str, str], _Note] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)
    mode: _Mode = field(default_factory=lambda: _Mode("normal"))
    path_modes: dict[str, _Mode] = field(default_factory=dict)
    stopping: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Condition | None = None


class UpstreamDouble:
    """A recording stand-in for the canister. Use as a context manager or start()/stop()."""

    def __init__(self, *, timeout_delay_s: float = DEFAULT_TIMEOUT_DELAY_S, port: int = 0) -> None:
        self.port = port  # 0: the OS picks a free one
        self._state = _State()
        self._state.arrived = threading.Condition(self._state.lock)
        self._marker = "UPSTREAM-CANARY-" + secrets.token_hex(12)
        self.timeout_delay_s = timeout_delay_s
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> UpstreamDouble:
        if self._server is not None:
            return self
        self._state.stopping.clear()
        server = _Server((LOOPBACK, self.port), _make_handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05},
            name="upstream-double", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._state.stopping.set()  # releases handlers held by the "timeout" mode
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> UpstreamDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def address(self) -> tuple[str, int]:
        if self._server is None:
            raise RuntimeError("UpstreamDouble is not started")
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}"

    # -- data ------------------------------------------------------------------------------

    def put_note(self, vault_id: str, path: str, payload: dict[str, Any], *,
                 user_id: str | None = None) -> None:
        """Store `payload` (served verbatim as JSON) for `path` in `vault_id`.

        With `user_id`, only requests whose X-User-Id equals it are served; others get 404.
        """
        with self._state.lock:
            self._state.notes[(vault_id, path)] = _Note(dict(payload), user_id)

    def delete_note(self, vault_id: str, path: str) -> None:
        with self._state.lock:
            self._state.notes.pop((vault_id, path), None)

    def payload_marker(self) -> str:
        """This instance's random token, present in every failure-mode body."""
        return self._marker

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    def note_reads(self) -> list[RecordedRequest]:
        """Recorded requests that are well-formed GET note reads."""
        return [r for r in self.requests if r.method == "GET" and r.note_path is not None]

    def clear(self) -> None:
        """Forget recorded requests (notes and modes stay)."""
        with self._state.lock:
            self._state.requests.clear()

    def wait_for_requests(self, count: int, timeout_s: float = 2.0) -> list[RecordedRequest]:
        """Block until at least `count` requests were recorded (or timeout); return them."""
        deadline = time.monotonic() + timeout_s
        cond = self._state.arrived
        assert cond is not None
        with cond:
            while len(self._state.requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                cond.wait(left)
            return list(self._state.requests)

    def respond_with(self, mode: str, *, for_path: str | None = None,
                     delay_s: float | None = None) -> None:
        """Set the answer mode globally, or for one (decoded) note path only.

        A per-path mode overrides the global one; `respond_with("normal", for_path=p)` makes
        `p` normal again whatever the global mode. `delay_s` is the "timeout" hold time
        (default: the instance's `timeout_delay_s`).
        """
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")
        chosen = _Mode(mode, float(self.timeout_delay_s if delay_s is None else delay_s))
        with self._state.lock:
            if for_path is None:
                self._state.mode = chosen
            else:
                self._state.path_modes[for_path] = chosen

    def reset_modes(self) -> None:
        with self._state.lock:
            self._state.mode = _Mode("normal", float(self.timeout_delay_s))
            self._state.path_modes.clear()

    # -- request handling (called from handler threads) --------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        cond = self._state.arrived
        assert cond is not None
        with cond:
            self._state.requests.append(request)
            cond.notify_all()

    def _answer(self, request: RecordedRequest) -> tuple[int, dict[str, str], bytes] | float:
        """(status, headers, body) for a request, or the hold time for the "timeout" mode."""
        note_path = request.note_path
        if request.method != "GET" or note_path is None:
            return _json(404, {"error": "Not found"})
        with self._state.lock:
            mode = self._state.path_modes.get(note_path, self._state.mode)
            vault = request.headers.get("x-vault-id")
            note = self._state.notes.get((vault, note_path)) if vault is not None else None
            if note is not None and note.user_id is not None \
                    and request.headers.get("x-user-id") != note.user_id:
                note = None
        marker = self._marker
        match mode.mode:
            case "normal":
                if note is None:
                    return _json(404, {"error": "Note not found", "marker": marker})
                return _json(200, note.payload)
            case "404":
                return _json(404, {"error": f"Note not found: {marker}", "path": note_path})
            case "401":
                return _json(401, {"error": f"Unauthorized: {marker}"})
            case "403":
                return _json(403, {"error": f"Forbidden: {marker}", "path": note_path})
            case "500":
                return _json(500, {"error": f"Internal error: {marker}",
                                   "stack": f"at canister.readNote ({marker})"})
            case "timeout":
                return mode.delay_s
            case "malformed-json":
                body = ('{"path": ' + json.dumps(note_path) + ', "content": "# ' + marker
                        + '\\n\\nprivate body ' + marker + '", "frontmatter": {"secret": "')
                return 200, {"Content-Type": "application/json"}, body.encode("utf-8")
            case "foreign-path":
                payload = dict(note.payload) if note else note_payload(
                    note_path, f"# Foreign {marker}\n\nbody {marker}\n")
                payload["path"] = f"other-vault-{marker}/private/{marker}.md"
                return _json(200, payload)
            case "absolute-path":
                payload = dict(note.payload) if note else note_payload(
                    note_path, f"# Absolute {marker}\n\nbody {marker}\n")
                payload["path"] = f"/Users/{marker}/vaults/private/{note_path}"
                return _json(200, payload)
            case "html-200":
                page = f"<html><body><h1>Gateway {marker}</h1><p>{note_path}</p></body></html>"
                return 200, {"Content-Type": "text/html; charset=utf-8"}, page.encode("utf-8")
            case "no-content-200":
                return _json(200, {"path": note_path, "note": {"text": f"# {marker}\n\nbody {marker}"},
                                   "marker": marker})
            case "raw-body-echo":
                text = (f"upstream exploded {marker}\nrequest: {request.method} {request.path}\n"
                        + "".join(f"{k}: {v}\n" for k, v in request.headers.items()))
                return 500, {"Content-Type": "text/plain; charset=utf-8"}, text.encode("utf-8")
        raise AssertionError(mode.mode)  # pragma: no cover


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # 24 sessions connecting at once must not wait for SYN retries
    daemon_threads = True


def _json(status: int, value: Any) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(value).encode("utf-8")


def _make_handler(double: UpstreamDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "UpstreamDouble/1"
        sys_version = ""
        timeout = 10  # idle keep-alive connections are dropped after this
        disable_nagle_algorithm = True  # headers and body go out in two writes

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
            return

        def _read_body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        break
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                return b"".join(chunks)
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length > 0 else b""

        def _handle(self) -> None:
            arrived = time.monotonic()
            parts = urlsplit(self.path)
            headers: dict[str, str] = {}
            for name, value in self.headers.items():
                key = name.lower()
                headers[key] = f"{headers[key]}, {value}" if key in headers else value
            body = self._read_body()
            request = RecordedRequest(self.command, parts.path, parts.query, headers, body, arrived)
            double._record(request)
            answer = double._answer(request)
            if isinstance(answer, float):
                double._state.stopping.wait(answer)
                self.close_connection = True
                return
            status, extra, payload = answer
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

    return Handler
