"""The five MCP tools on the SDK's low-level Server (tools only: no resources, no prompts),
and stdio serving that lets calls in flight finish when stdin closes.

A tool result carries the payload ({**data, warnings}) as structuredContent and as the JSON
text of its one text block. A failure is a JSON-RPC error: code from the catalogue
(-32001..-32099, -32000 for validation, -32602 for a missing argument or a wrong JSON type),
data {"errorCode": PHASE_1_CODE, "details": {...}}.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from reference._serve import READ_ONLY

from .core import MCP_PAYLOAD_CAP, VERSION, Core, Reply
from .errors import VaultError
from .safety import log_event, sanitize

TOOL_TIMEOUT_S = 60.0  # mcp-tools.md#tool-invocation-timeouts
TIMEOUT_ENV = "VAULT_AGENT_DEBUG_TOOL_TIMEOUT_MS"
DELAY_ENV = "VAULT_AGENT_DEBUG_CALL_DELAY_MS"
OLDEST_VERSION = "2025-03-26"  # mcp-transports.md: older versions are not accepted
_MODE = {"type": "string", "enum": ["lexical", "embedding", "hybrid"],
         "description": "lexical, embedding or hybrid; omit for the server's default"}
_LIMIT = {"type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "Maximum number of results"}
_NOTE_ID = {"type": "string", "minLength": 1, "description": "Note ID from search or related results"}

# Descriptions are mcp-tools.md's, word for word.
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "search": (
        "Search the vault for notes matching a query. Returns compact ranked results with titles, paths, "
        "snippets, and scores. Use this first to find relevant candidates before retrieving full note content.",
        {"type": "object", "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "Search query text"},
            "mode": _MODE, "limit": _LIMIT}, "required": ["query"]}),
    "get_note": (
        "Retrieve the full content of a note by its ID. Returns Markdown content including frontmatter. "
        "Use search first to find relevant notes, then use this to retrieve only the notes you need.",
        {"type": "object", "properties": {
            "noteId": _NOTE_ID,
            "allowLarge": {"type": "boolean", "default": False, "description": "Allow retrieval of oversized notes"}},
         "required": ["noteId"]}),
    "get_chunk": (
        "Retrieve a specific chunk from a note. Chunks are sections of a note split by headings. Use this "
        "when you need only a portion of a note rather than the full content.",
        {"type": "object", "properties": {
            "noteId": _NOTE_ID,
            "chunkIndex": {"type": "integer", "minimum": 0, "description": "Chunk index within the note"}},
         "required": ["noteId", "chunkIndex"]}),
    "get_attachment": (
        "Retrieve metadata about an attachment file, or download its contents. By default returns only "
        "metadata (name, size, MIME type). Set download=true to get the file content as base64-encoded data.",
        {"type": "object", "properties": {
            "vaultRelativePath": {"type": "string", "minLength": 1, "description": "Vault-relative path to the attachment"},
            "download": {"type": "boolean", "default": False, "description": "Download file bytes instead of metadata"},
            "allowLarge": {"type": "boolean", "default": False, "description": "Allow download of oversized files"}},
         "required": ["vaultRelativePath"]}),
    "related": (
        "Find notes and chunks that are related to a given note or chunk. Returns compact candidates with "
        "titles, paths, snippets, and scores. Use this to discover nearby content after reading a note.",
        {"type": "object", "properties": {
            "type": {"type": "string", "enum": ["note", "chunk"], "description": "Type of input: note or chunk"},
            "id": {"type": "string", "minLength": 1, "description": "Note ID, or chunk ID noteId:chunkIndex"},
            "limit": _LIMIT, "mode": _MODE}, "required": ["type", "id"]}),
}


def _runner(core: Core | None, name: str) -> Callable[[dict[str, Any]], Reply]:
    def run(args: dict[str, Any]) -> Reply:
        delay = os.environ.get(DELAY_ENV)
        if delay and delay.isdigit():
            time.sleep(int(delay) / 1000)
        if core is None:
            # Arguments are still checked first, so a bad call gets the same code with or without a vault.
            _validate_only(name, args)
            raise VaultError("VAULT_NOT_CONFIGURED")
        if name == "search":
            return core.search(args)
        if name == "related":
            return core.related(args)
        if name == "get_note":
            return core.get_note(args, cap=MCP_PAYLOAD_CAP)
        if name == "get_chunk":
            return core.get_chunk(args)
        return core.get_attachment(args, cap=MCP_PAYLOAD_CAP)
    return run


def _validate_only(name: str, args: dict[str, Any]) -> None:
    from . import validate
    from .safety import check_relative

    if name == "search":
        validate.query(args), validate.mode(args), validate.limit(args)
    elif name == "related":
        validate.related_input(args), validate.mode(args), validate.limit(args)
    elif name == "get_note":
        validate.note_id(args), validate.flag(args, "allowLarge")
    elif name == "get_chunk":
        validate.note_id(args), validate.chunk_index(args)
    else:
        raw = args.get("vaultRelativePath")
        validate.flag(args, "download"), validate.flag(args, "allowLarge")
        check_relative(raw)


def rpc_error(error: VaultError) -> MCPError:
    return MCPError(code=error.rpc_code, message=error.message,
                    data={"errorCode": error.code, "details": dict(error.details)})


def tool_timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV, "")
    return int(raw) / 1000 if raw.isdigit() and int(raw) > 0 else TOOL_TIMEOUT_S


async def _version_floor(ctx, call_next):
    """Answer an initialize that asks for a version older than 2025-03-26 with the latest
    version the SDK supports (the MCP counter-offer), never with the old version; one without a
    protocolVersion is an invalid request (-32600, mcp-transports.md), not the SDK's -32602."""
    params = ctx.params
    if ctx.method == "initialize" and not (isinstance(params, dict) and isinstance(params.get("protocolVersion"), str)):
        raise MCPError(code=types.INVALID_REQUEST, message="Invalid Request: initialize needs a protocolVersion.")
    if ctx.method == "initialize" and isinstance(params, dict):
        asked = params.get("protocolVersion")
        if isinstance(asked, str) and asked < OLDEST_VERSION:
            result = await call_next(ctx)
            if isinstance(result, dict) and result.get("protocolVersion") == asked:
                from mcp_types.version import LATEST_HANDSHAKE_VERSION

                result = {**result, "protocolVersion": LATEST_HANDSHAKE_VERSION}
            return result
    return await call_next(ctx)


def _unparsable(exc: Exception) -> types.JSONRPCError:
    """-32700 for text that is not JSON, -32600 for JSON that is not one JSON-RPC message
    (batches included: MCP removed them in 2025-06-18); never echoing the input."""
    kinds = {e.get("type") for e in getattr(exc, "errors", lambda: [])()} if hasattr(exc, "errors") else set()
    code, text = (-32700, "Parse error") if "json_invalid" in kinds else (-32600, "Invalid Request")
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=text))


def build_server(core: Core | None, transport: str) -> Server:
    tools = [types.Tool(name=name, description=description, input_schema=schema, annotations=READ_ONLY)
             for name, (description, schema) in TOOLS.items()]
    runners = {name: _runner(core, name) for name in TOOLS}

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        started = time.perf_counter()
        if params.name not in TOOLS:
            log_event(event="tool.call", transport=transport, tool="unknown", outcome="error", code="METHOD_NOT_FOUND")
            raise MCPError(code=types.METHOD_NOT_FOUND, message="Unknown tool: see tools/list for the five tools.")
        args = params.arguments or {}
        try:
            with anyio.fail_after(tool_timeout()):
                reply = await anyio.to_thread.run_sync(runners[params.name], args, abandon_on_cancel=True)
            payload = reply.payload()
            text = json.dumps(payload, ensure_ascii=False)
            if 2 * len(text.encode("utf-8")) > MCP_PAYLOAD_CAP:
                raise VaultError("QUERY_TOO_LARGE", limit=MCP_PAYLOAD_CAP)
        except TimeoutError:
            error = VaultError("TIMEOUT")
        except BaseException as exc:  # noqa: BLE001 - every failure leaves as a catalogued JSON-RPC error
            error = sanitize(exc)
        else:
            log_event(event="tool.call", transport=transport, tool=params.name, outcome="ok",
                      requested_mode=payload.get("requestedMode"), used_mode=payload.get("usedMode"),
                      results=len(payload["results"]) if "results" in payload else None,
                      freshness=payload.get("freshness"), warnings=len(payload["warnings"]),
                      duration_ms=(time.perf_counter() - started) * 1000)
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                        structured_content=payload)
        log_event(event="tool.call", transport=transport, tool=params.name, outcome="error", code=error.code,
                  duration_ms=(time.perf_counter() - started) * 1000)
        raise rpc_error(error)

    server = Server("vault-agent", version=VERSION, on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.append(_version_floor)
    return server


def _write(wire, data: bytes) -> None:
    wire.write(data)
    wire.flush()


async def serve_stdio(server: Server) -> None:
    """Serve one session on stdin/stdout. When stdin closes (or SIGTERM/SIGINT arrives), nothing
    new is read, every request already read gets its answer, then the process exits 0.

    Answers are written here rather than by the SDK's stdout task, so that a request counts as
    answered only once its whole line is on stdout: a signal never cuts the last answer off."""
    outstanding: set[Any] = set()
    signalled = False
    wire = os.fdopen(os.dup(1), "wb")  # the protocol stream, taken before the SDK diverts fd 1
    lock = anyio.Lock()

    async def emit(message: Any) -> None:
        data = (message.model_dump_json(by_alias=True, exclude_unset=True) + "\n").encode("utf-8")
        async with lock:
            await anyio.to_thread.run_sync(_write, wire, data)

    async with stdio_server() as (sdk_read, sdk_write):
        await sdk_write.aclose()  # every message leaves through emit()
        to_server, server_read = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        server_write, from_server = anyio.create_memory_object_stream[SessionMessage](16)

        async def inbound(scope: anyio.CancelScope) -> None:
            with scope:
                async for item in sdk_read:
                    if isinstance(item, Exception):
                        # A line that is not a JSON-RPC message: answer it (the SDK would drop it).
                        await emit(_unparsable(item))
                        continue
                    message = getattr(item, "message", None)
                    if isinstance(message, types.JSONRPCRequest):
                        outstanding.add(message.id)
                    # Shielded: a request counted as outstanding is always delivered, so a
                    # signal arriving mid-send cannot leave the shutdown waiting for it.
                    with anyio.CancelScope(shield=True):
                        await to_server.send(item)
            with anyio.move_on_after(TOOL_TIMEOUT_S + 10):
                while outstanding:
                    await anyio.sleep(0.005)
            await to_server.aclose()

        async def outbound() -> None:
            async for item in from_server:
                message = item.message
                await emit(message)
                if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
                    outstanding.discard(message.id)

        async def on_signal(scope: anyio.CancelScope) -> None:
            nonlocal signalled
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _signum in signals:
                    signalled = True
                    scope.cancel()
                    return

        async with anyio.create_task_group() as tg:
            reading = anyio.CancelScope()
            tg.start_soon(inbound, reading)
            tg.start_soon(outbound)
            tg.start_soon(on_signal, reading)
            await server.run(server_read, server_write, server.create_initialization_options())
            tg.cancel_scope.cancel()
        if signalled:
            # stdin is still open and its reader thread is blocked in read(): leave now (every
            # answer is already written, see emit()).
            sys.stderr.flush()
            os._exit(0)
