"""What the generic-files examples share: containment done right, a walk that never leaves the
root, reading a file with every failure turned into a denial, the --http flags, and one call
loop that logs a line per call (the tool, the outcome and the time; never a path, a query or
a file's content).

Containment: a requested path is resolved with every symlink followed (os.path.realpath) and
must then be the root or lie below it, the root itself real-pathed at start-up, compared by
whole path components (os.path.commonpath), so `vault_evil/` never passes for `vault/` and a
link inside the root that points out of it is refused.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import mcp_types as types
from jsonschema import Draft202012Validator
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from reference._serve import READ_ONLY, serve_http, serve_stdio

# The one tool in each example that writes (never called by the suite; a mapping leaves it out).
WRITES = types.ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                               open_world_hint=False)

Handler = Callable[[dict[str, Any]], types.CallToolResult]


class Denied(Exception):
    """A path or argument the server refuses, or a file it cannot find or read: a short `code`
    for logs and error objects, and a message that names no absolute path unless the server's
    style discloses its roots."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def real_root(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def inside(root: str, real: str) -> bool:
    """True when the real path `real` is `root` or below it (both absolute and real)."""
    return os.path.commonpath([root, real]) == root


def check_path(raw: str) -> None:
    if "\x00" in raw:
        raise Denied("invalid_path", "the path contains a NUL byte")


def resolve_relative(root: str, raw: str) -> str:
    """The real path of a root-relative path (every symlink followed), which must stay in the root."""
    check_path(raw)
    if os.path.isabs(raw):
        raise Denied("absolute_path", "paths are relative to the root; an absolute path is not accepted")
    real = os.path.realpath(os.path.join(root, raw))
    if not inside(root, real):
        raise Denied("outside_root", "the path leads outside the root")
    return real


def shown(root: str, real: str) -> str:
    """How a message names a path inside the root: root-relative ('' for the root itself)."""
    relative = os.path.relpath(real, root).replace(os.sep, "/")
    return "" if relative == "." else relative


def located(root: str, real: str, action: Callable[[str], Any]) -> Any:
    """`action(real)`, with a Denied message saying which root-relative path it was about."""
    try:
        return action(real)
    except Denied as exc:
        raise Denied(exc.code, f"{shown(root, real) or '(root)'}: {exc.message}") from None


def read_text(real: str) -> str:
    """A regular file's text (UTF-8, undecodable bytes replaced); anything else is Denied."""
    try:
        if os.path.isdir(real):
            raise Denied("is_directory", "is a directory")
        if not os.path.exists(real):
            raise Denied("not_found", "no such file or directory")
        if not os.path.isfile(real):  # a FIFO or a device would block or never end
            raise Denied("not_a_file", "not a regular file")
        with open(real, "rb") as handle:
            return handle.read().decode("utf-8", errors="replace")
    except OSError as exc:
        raise Denied("unreadable", f"cannot be read ({exc.strerror or 'error'})") from None


def entries(real: str) -> list[os.DirEntry]:
    """A directory's entries in name order; a missing path or a file is Denied."""
    if not os.path.exists(real):
        raise Denied("not_found", "no such file or directory")
    if not os.path.isdir(real):
        raise Denied("not_a_directory", "not a directory")
    try:
        with os.scandir(real) as found:
            return sorted(found, key=lambda entry: entry.name)
    except OSError as exc:
        raise Denied("unreadable", f"cannot be listed ({exc.strerror or 'error'})") from None


def walk_files(root: str, suffixes: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    """(root-relative POSIX path, real path) of each regular file under `root`, in name order.
    Directory symlinks are not descended; a file symlink whose target leaves the root is left out."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if suffixes and not name.lower().endswith(suffixes):
                continue
            path = os.path.join(dirpath, name)
            real = os.path.realpath(path)
            if inside(root, real) and os.path.isfile(real):
                yield os.path.relpath(path, root).replace(os.sep, "/"), real


def tool(name: str, description: str, properties: dict[str, Any], *, optional: tuple[str, ...] = (),
         annotations: types.ToolAnnotations = READ_ONLY, output_schema: dict[str, Any] | None = None) -> types.Tool:
    schema = {"type": "object", "properties": properties,
              "required": [key for key in properties if key not in optional], "additionalProperties": False}
    return types.Tool(name=name, description=description, input_schema=schema, output_schema=output_schema,
                      annotations=annotations)


def text(body: str, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=body)], structured_content=structured)


def make_server(name: str, tools: dict[str, tuple[types.Tool, Handler]],
                refuse: Callable[[Denied], types.CallToolResult], log: logging.Logger) -> Server:
    """A low-level SDK Server: arguments are checked against the tool's input schema, the
    handler runs in a worker thread, and a Denied becomes whatever `refuse` makes of it (a
    result, or a raised MCPError)."""
    listed = [entry for entry, _handler in tools.values()]
    validators = {key: Draft202012Validator(entry.input_schema) for key, (entry, _handler) in tools.items()}

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in tools:
            log.info("tool=unknown outcome=unknown_tool")
            raise MCPError(code=types.INVALID_PARAMS, message="Unknown tool: see tools/list")
        started = time.perf_counter()
        outcome = "ok"
        try:
            arguments = params.arguments if params.arguments is not None else {}
            if not validators[params.name].is_valid(arguments):
                raise Denied("invalid_arguments", "the arguments do not match the tool's input schema")
            return await anyio.to_thread.run_sync(tools[params.name][1], arguments)
        except Denied as exc:
            outcome = f"denied code={exc.code}"
            return refuse(exc)
        except Exception:  # noqa: BLE001 - no traceback, path or content reaches the client
            outcome = "error"
            return refuse(Denied("internal", "internal error"))
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            log.info("tool=%s outcome=%s elapsed_ms=%.1f", params.name, outcome, elapsed)

    return Server(name, version="0.1.0", on_list_tools=list_tools, on_call_tool=call_tool)


def parser(prog: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--http", action="store_true",
                        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default: loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    return parser


def serve(server: Server, args: argparse.Namespace) -> int:
    if args.http:
        serve_http(server, args.host, args.port)
    else:
        anyio.run(serve_stdio, server)
    return 0
