"""A hostile MCP server for the suite's self-tests: it speaks just enough MCP over stdio or
Streamable HTTP (raw JSON-RPC, no SDK, so it can misbehave freely) to get past the preflight,
lists the profile's tools, and then does what its mode says. Every mode is something a broken
server in the wild does; the suite must survive each with a bounded run, a report and a clear
message.

    python tests/hostile/server.py MODE --profile PROFILE [--after N] [--http --port PORT] [SIZES]
    python tests/hostile/server.py MODE --role command      (as an index or load command)

SIZES (the defaults are the production figures of the full matrix; the cover, which runs with
short thresholds, passes smaller ones): --delay SECONDS (slowloris, 10), --flood N (notify,
1,000,000), --sustained N (floods, 200,000 per answer), --stderr-mib N (stderr-gig, 1,024),
--cmd-mib N (cmd-flood, 512 per stream).

Modes, over stdio and HTTP alike:
  hang        answers initialize and tools/list, never tools/call
  huge        answers every tools/call with one 100 MB text result
  notify      sends 1,000,000 notifications (--flood) (stdio: after initialize; HTTP: on the first
              tools/call's SSE stream, before its answer), and answers calls with errors
  slowloris   answers every request, but only after 10 seconds (--delay)
  exit-half   answers calls with errors, and exits after --after tool calls (default 20)
  mid-message answers --after calls, then writes half a message and never ends it (HTTP: a body
              shorter than its Content-Length, the connection held open)
  garbage     stdio: writes binary garbage on stdout after every answer; HTTP: answers every
              tools/call with a body of binary garbage
  stderr-gig  writes 1 GB to stderr (--stderr-mib) (64 KiB lines) while answering calls with errors
  floods      writes 200,000 notifications of about 0.5 KB (--sustained) before every answer (HTTP: on
              each tools/call's SSE stream), and answers calls with errors: a flood that never ends
HTTP only, for tools/call:
  sse-open    answers on an SSE stream it then holds open forever
  sse-endless answers on an SSE stream of notifications that never ends (no answer in it)
The implementation's other commands (an index or load command, `--role command`) exit 0 at
once in the modes above; in these two the server answers calls with errors and the command:
  cmd-hang    never exits (nor does the child it starts)
  cmd-flood   writes 512 MB to stdout and 512 MB to stderr in 1 MiB lines, then exits 0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]


def tools_of(profile: str) -> list[dict]:
    sys.path.insert(0, str(ROOT))
    from contract_tests.contracts import specs as contracts
    spec = contracts.load_profile(profile)
    names = spec.required_tools
    if spec.data.get("mapped"):  # the tools of the mapping the hostile run is given (the first example's)
        from contract_tests.contracts.mapping import load
        names = [t["name"] for t in load(spec.data["reference"]["mappings"][0])["tools"]]
    return [{"name": name, "description": f"hostile {name}", "inputSchema": {"type": "object"}} for name in names]


def write(data: bytes) -> None:
    out = sys.stdout.buffer
    out.write(data)
    out.flush()


def send(message: dict) -> None:
    write((json.dumps(message) + "\n").encode())


def error_result(msg_id) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "result": {
        "isError": True, "content": [{"type": "text", "text": "hostile: refused"}]}}


def answer(message: dict, tools: list[dict]) -> dict | None:
    """The ordinary answer to anything but tools/call (None for a notification)."""
    if not isinstance(message, dict) or "id" not in message:
        return None
    msg_id, method = message["id"], message.get("method")
    if method == "initialize":
        asked = (message.get("params") or {}).get("protocolVersion")
        return {"jsonrpc": "2.0", "id": msg_id, "result": {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "0"}}}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": msg_id, "result": {"tools": tools}}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": msg_id, "result": {}}
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": "hostile: no such method"}}


NOTE = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hostile flood"}}
SIZES = {"delay": 10.0, "flood": 1_000_000, "sustained": 200_000, "stderr_mib": 1024, "cmd_mib": 512}
# A notification of about half a kilobyte, for the sustained flood.
BIG_NOTE = {"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "hostile sustained flood " + "z" * 420}}


def huge_answer(msg_id) -> tuple[bytes, bytes]:
    """The head and tail of a tools/call answer whose text (between them) is 100 MB of `x`."""
    head = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": ""}]}})
    cut = head.index('"text": "') + len('"text": "')
    return head[:cut].encode(), head[cut:].encode()


def stderr_gig() -> None:
    line = b"e" * (64 * 1024 - 1) + b"\n"
    err = sys.stderr.buffer
    for _ in range(SIZES["stderr_mib"] * 16):  # 64 KiB lines
        err.write(line)
    err.flush()


def half_message(msg_id) -> bytes:
    return b'{"jsonrpc": "2.0", "id": ' + json.dumps(msg_id).encode() + b', "result": {"content": [{"ty'


def serve_http(mode: str, port: int, tools: list[dict], after: int) -> int:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    calls = {"n": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body leave in separate writes: without this, Nagle's algorithm and the
        # client's delayed ACK hold every answer on a kept-alive connection for 40 ms.
        disable_nagle_algorithm = True

        def log_message(self, *args) -> None:
            pass

        def _head(self, status: int, content_type: str, length: int | None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            if length is not None:
                self.send_header("Content-Length", str(length))
            self.end_headers()

        def _json(self, status: int, body: bytes) -> None:
            self._head(status, "application/json", len(body))
            self.wfile.write(body)

        def do_DELETE(self) -> None:
            self._json(200, b"{}")

        def do_POST(self) -> None:
            message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
            if mode == "slowloris":
                time.sleep(SIZES["delay"])
            if not isinstance(message, dict) or message.get("method") != "tools/call":
                reply = answer(message, tools)
                if reply is None:
                    self.send_response(202)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self._json(200, json.dumps(reply).encode())
                return
            with lock:
                calls["n"] += 1
                n = calls["n"]
            msg_id = message.get("id")
            if mode == "hang":
                time.sleep(3600)
            if mode == "huge":
                head, tail = huge_answer(msg_id)
                block = b"x" * (1024 * 1024)
                self._head(200, "application/json", len(head) + 100 * len(block) + len(tail))
                self.wfile.write(head)
                for _ in range(100):
                    self.wfile.write(block)
                self.wfile.write(tail)
                return
            if mode == "exit-half" and n > after:
                os._exit(3)
            if mode == "mid-message" and n > after:
                body = json.dumps(error_result(msg_id)).encode()
                self._head(200, "application/json", len(body))
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                time.sleep(3600)
            if mode == "garbage":
                self._json(200, os.urandom(4096) + b"\n\x00\xff\xfe garbage \x1b[31m\n")
                return
            if mode == "stderr-gig" and n == 1:
                stderr_gig()
            if mode == "floods":
                self._head(200, "text/event-stream", None)
                event = b"data: " + json.dumps(BIG_NOTE).encode() + b"\n\n"
                for _ in range(SIZES["sustained"] // 1000):
                    self.wfile.write(event * 1000)
                self.wfile.write(b"data: " + json.dumps(error_result(msg_id)).encode() + b"\n\n")
                self.wfile.flush()
                self.close_connection = True
                return
            if mode in ("sse-open", "sse-endless") or (mode == "notify" and n == 1):
                self._head(200, "text/event-stream", None)
                event = b"data: " + json.dumps(NOTE).encode() + b"\n\n"
                if mode == "sse-endless":
                    while True:
                        self.wfile.write(event * 100)
                        self.wfile.flush()
                if mode == "notify":
                    for _ in range(SIZES["flood"] // 1000):
                        self.wfile.write(event * 1000)
                self.wfile.write(b"data: " + json.dumps(error_result(msg_id)).encode() + b"\n\n")
                self.wfile.flush()
                if mode == "sse-open":
                    time.sleep(3600)
                self.close_connection = True
                return
            self._json(200, json.dumps(error_result(msg_id)).encode())

    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
    return 0


def run_command(mode: str) -> int:
    """As the implementation's index or load command."""
    if mode == "cmd-hang":
        import subprocess
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        time.sleep(3600)
    if mode == "cmd-flood":
        line = b"f" * (1024 * 1024 - 1) + b"\n"
        for stream in (sys.stdout.buffer, sys.stderr.buffer):
            for _ in range(SIZES["cmd_mib"]):
                stream.write(line)
            stream.flush()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--profile", default="retrieval-tools")
    parser.add_argument("--role", choices=["server", "command"], default="server")
    parser.add_argument("--after", type=int, default=20)
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=SIZES["delay"])
    parser.add_argument("--flood", type=int, default=SIZES["flood"])
    parser.add_argument("--sustained", type=int, default=SIZES["sustained"])
    parser.add_argument("--stderr-mib", type=int, default=SIZES["stderr_mib"])
    parser.add_argument("--cmd-mib", type=int, default=SIZES["cmd_mib"])
    parser.add_argument("ignored", nargs="*")
    args, _unknown = parser.parse_known_args()
    SIZES.update(delay=args.delay, flood=args.flood, sustained=args.sustained, stderr_mib=args.stderr_mib,
                 cmd_mib=args.cmd_mib)
    if args.role == "command":
        return run_command(args.mode)
    tools = tools_of(args.profile)
    if args.http:
        return serve_http(args.mode, args.port, tools, args.after)
    calls = 0
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue  # notifications
        msg_id, method = message["id"], message.get("method")
        if args.mode == "slowloris":
            time.sleep(SIZES["delay"])
        if method != "tools/call":
            send(answer(message, tools))
            if method == "initialize" and args.mode == "notify":
                line = (json.dumps(NOTE) + "\n").encode()
                for _ in range(SIZES["flood"] // 1000):
                    write(line * 1000)
            continue
        calls += 1
        if args.mode == "hang":
            continue
        if args.mode == "floods":
            line = (json.dumps(BIG_NOTE) + "\n").encode()
            for _ in range(SIZES["sustained"] // 1000):
                write(line * 1000)
        if args.mode == "huge":
            head, tail = huge_answer(msg_id)
            write(head)
            block = b"x" * (1024 * 1024)
            for _ in range(100):
                write(block)
            write(tail + b"\n")
            continue
        if args.mode == "exit-half" and calls > args.after:
            os._exit(3)
        if args.mode == "mid-message" and calls > args.after:
            write(half_message(msg_id))
            while True:
                time.sleep(60)
        send(error_result(msg_id))
        if args.mode == "garbage":
            write(os.urandom(4096) + b"\n\x00\xff\xfe garbage \x1b[31m\n")
        if args.mode == "stderr-gig" and calls == 1:
            stderr_gig()
    return 0


if __name__ == "__main__":
    sys.exit(main())
