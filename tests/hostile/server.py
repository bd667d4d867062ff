"""A hostile MCP server for the suite's self-tests: it speaks just enough MCP over stdio (raw
JSON-RPC, no SDK, so it can misbehave freely) to get past the preflight, lists the profile's
tools, and then does what its mode says. Every mode is something a broken server in the wild
does; the suite must survive each with a bounded run, a report and a clear message.

    python tests/hostile/server.py MODE --profile PROFILE [--after N] [--http --port PORT]

Modes:
  hang        answers initialize and tools/list, never tools/call
  huge        answers every tools/call with one 100 MB text result
  notify      after initialize, sends 1,000,000 notifications, then answers calls with errors
  slowloris   answers every request, but only after 10 seconds
  exit-half   answers calls with errors, and exits after --after tool calls (default 20)
  mid-message answers --after calls, then writes half a message and never ends it
  garbage     writes binary garbage on stdout after every answer
  stderr-gig  writes 1 GB to stderr (64 KiB lines) while answering calls with errors

Over Streamable HTTP (--http), for tools/call: `hang` never answers the POST, `huge` answers
with a 100 MB JSON body, and
  sse-open    answers on an SSE stream it then holds open forever
  sse-endless answers on an SSE stream of notifications that never ends (no answer in it)
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
    from contract_tests import contracts
    names = contracts.load_profile(profile).required_tools
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


def serve_http(mode: str, port: int, tools: list[dict]) -> int:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def _json(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_DELETE(self) -> None:
            self._json(200, b"{}")

        def do_POST(self) -> None:
            message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
            if not isinstance(message, dict) or message.get("method") != "tools/call":
                reply = answer(message, tools)
                if reply is None:
                    self.send_response(202)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self._json(200, json.dumps(reply).encode())
                return
            if mode == "hang":
                time.sleep(3600)
            if mode == "huge":
                head = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
                    "content": [{"type": "text", "text": "x" * (100 * 1024 * 1024)}]}}).encode()
                self._json(200, head)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            if mode == "sse-open":
                self.wfile.write(b"data: " + json.dumps(error_result(message["id"])).encode() + b"\n\n")
                self.wfile.flush()
                time.sleep(3600)
            note = b"data: " + json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                           "params": {"level": "info", "data": "hostile"}}).encode() + b"\n\n"
            while True:  # sse-endless
                self.wfile.write(note * 100)
                self.wfile.flush()

    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--profile", default="retrieval-tools")
    parser.add_argument("--after", type=int, default=20)
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("ignored", nargs="*")
    args, _unknown = parser.parse_known_args()
    tools = tools_of(args.profile)
    if args.http:
        return serve_http(args.mode, args.port, tools)
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
            time.sleep(10)
        if method == "initialize":
            asked = (message.get("params") or {}).get("protocolVersion")
            send({"jsonrpc": "2.0", "id": msg_id, "result": {
                "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "0"}}})
            if args.mode == "notify":
                line = (json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                    "params": {"level": "info", "data": "hostile flood"}}) + "\n").encode()
                for _ in range(1000):
                    write(line * 1000)
            continue
        if method == "tools/list":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": tools}})
            continue
        if method == "ping":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {}})
            continue
        if method != "tools/call":
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": "hostile: no such method"}})
            continue
        calls += 1
        if args.mode == "hang":
            continue
        if args.mode == "huge":
            head = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": ""}]}})
            cut = head.index('"text": "') + len('"text": "')
            write(head[:cut].encode())
            block = b"x" * (1024 * 1024)
            for _ in range(100):
                write(block)
            write(head[cut:].encode() + b"\n")
            continue
        if args.mode == "exit-half" and calls > args.after:
            os._exit(3)
        if args.mode == "mid-message" and calls > args.after:
            write(b'{"jsonrpc": "2.0", "id": ' + json.dumps(msg_id).encode() + b', "result": {"content": [{"ty')
            while True:
                time.sleep(60)
        send(error_result(msg_id))
        if args.mode == "garbage":
            write(os.urandom(4096) + b"\n\x00\xff\xfe garbage \x1b[31m\n")
        if args.mode == "stderr-gig" and calls == 1:
            line = b"e" * (64 * 1024 - 1) + b"\n"
            err = sys.stderr.buffer
            for _ in range(16 * 1024):  # 1 GiB
                err.write(line)
            err.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
