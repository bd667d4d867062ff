"""`vault-agent serve`: the HTTP API (Phase 1/2 routes the MCP bridge relies on) and, when
mcp.enabled, Streamable HTTP MCP at mcp.http.endpoint, in one Starlette app under uvicorn.

Every request passes one gate before any route: Host (loopback binds only answer loopback
Host names), Origin (absent, a loopback origin, or a configured CORS origin; else 403, as
the MCP transport requires), CORS (Starlette's middleware, only when cors.enabled), then the
API key when one is configured or the bind is not loopback (Authorization: Bearer, compared
in constant time; never from the query string).
"""

from __future__ import annotations

import hmac
import json
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import anyio
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.convertors import Convertor, register_url_convertor
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from . import validate
from .config import LOOPBACK_HOSTS, Settings
from .core import Core, Reply
from .errors import VaultError
from .mcp_server import build_server
from .safety import log_event, sanitize

MAX_BODY = 64 * 1024  # server-api.md#http-server-framework
JSON_TYPE = "application/json; charset=utf-8"
LOOPBACK_ORIGINS = ("http://127.0.0.1", "http://localhost", "http://[::1]")
ROUTES = ("/health", "/status", "/index", "/reindex", "/search", "/related", "/notes/{noteId}",
          "/chunks/{noteId}/{chunkIndex}", "/attachments/{vaultRelativePath}")


class AnyPath(Convertor[str]):
    """Like Starlette's `path`, but a decoded newline or other control character still matches
    (the attachment rules answer INVALID_PATH, not a missing route)."""

    regex = r"[\s\S]*"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("anypath", AnyPath())


def json_response(body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(body, ensure_ascii=False), status_code=status, media_type=JSON_TYPE, headers=headers)


def error_response(error: VaultError, request_id: str | None = None, *, mcp: bool = False,
                   headers: dict[str, str] | None = None) -> Response:
    if request_id:
        error.details["requestId"] = request_id
    if mcp:  # refusals on the MCP endpoint come as a JSON-RPC error without an id
        body = {"jsonrpc": "2.0", "id": None, "error": {"code": error.rpc_code, "message": error.message,
                                                          "data": {"errorCode": error.code, "details": error.details}}}
        return json_response(body, error.http_status, headers)
    return json_response(error.body(), error.http_status, headers)


def route_of(path: str, mcp_path: str) -> str:
    if path == mcp_path:
        return "mcp"
    for template in ROUTES:
        head = template.split("/{")[0]
        if path == head or (path.startswith(head + "/") and "{" in template):
            return template
    return "other"


class Gate:
    """Host, Origin, CORS and API key, in that order (see the module docstring)."""

    def __init__(self, app: ASGIApp, settings: Settings, mcp_path: str) -> None:
        self.settings = settings
        self.mcp_path = mcp_path
        self.key = settings.api_key.encode("utf-8")
        origins = list(settings["cors.allowed_origins"]) if settings["cors.enabled"] else []
        self.cors_origins = set(origins)
        inner: ASGIApp = self._auth(app)
        if origins:
            inner = CORSMiddleware(inner, allow_origins=origins, allow_credentials=False,
                                   allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
                                   allow_headers=["Authorization", "Content-Type", "Accept", "Mcp-Session-Id",
                                                  "MCP-Protocol-Version", "Last-Event-ID"],
                                   expose_headers=["Mcp-Session-Id"], max_age=600)
        self.inner = inner

    def _host_ok(self, host: str | None) -> bool:
        if not self.settings.loopback:
            return True  # a public bind cannot know its names; it requires an API key instead
        if not host:
            return False
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name.strip("[]") in LOOPBACK_HOSTS

    def _origin_ok(self, origin: str | None) -> bool:
        if origin is None:
            return True
        if origin in self.cors_origins:
            return True
        parts = urlsplit(origin)
        base = f"{parts.scheme}://{parts.hostname if parts.hostname != '::1' else '[::1]'}"
        return base in LOOPBACK_ORIGINS and not parts.path and parts.username is None

    def _auth(self, app: ASGIApp) -> ASGIApp:
        async def gate(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and (self.key or not self.settings.loopback):
                scheme, _, token = Request(scope).headers.get("authorization", "").partition(" ")
                supplied = token.strip().encode("utf-8")
                if scheme.lower() != "bearer" or not supplied:
                    error = VaultError("AUTH_REQUIRED")
                elif not self.key or not hmac.compare_digest(supplied, self.key):
                    error = VaultError("AUTH_FAILED")
                else:
                    error = None
                if error is not None:
                    response = error_response(error, mcp=scope["path"] == self.mcp_path,
                                              headers={"WWW-Authenticate": "Bearer"})
                    await response(scope, receive, send)
                    return
            await app(scope, receive, send)
        return gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        started = time.perf_counter()
        status: list[int] = []

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        request = Request(scope)
        mcp = scope["path"] == self.mcp_path
        if not self._host_ok(request.headers.get("host")):
            await error_response(VaultError("HOST_NOT_ALLOWED"), mcp=mcp)(scope, receive, watch)
        elif not self._origin_ok(request.headers.get("origin")):
            await error_response(VaultError("ORIGIN_NOT_ALLOWED"), mcp=mcp)(scope, receive, watch)
        else:
            await self.inner(scope, receive, watch)
        log_event(event="http.request", method=scope["method"] if scope["method"].isalpha() else "-",
                  route=route_of(scope["path"], self.mcp_path), status=status[0] if status else 0,
                  duration_ms=(time.perf_counter() - started) * 1000)


async def read_json(request: Request, *, optional: bool = False) -> dict[str, Any]:
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_BODY:
        raise VaultError("QUERY_TOO_LARGE", limit=MAX_BODY)
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > MAX_BODY:
            raise VaultError("QUERY_TOO_LARGE", limit=MAX_BODY)
        chunks.append(chunk)
    raw = b"".join(chunks)
    if optional and not raw:
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise VaultError("INVALID_PARAMETER", field="body") from None
    if not isinstance(body, dict):
        raise VaultError("INVALID_PARAMETER", field="body")
    return body


def build_app(core: Core, settings: Settings, port: int) -> ASGIApp:
    mcp_enabled = bool(settings["mcp.enabled"])
    mcp_path = settings["mcp.http.endpoint"]

    async def answer(request: Request, work: Callable[[], Reply]) -> Response:
        request_id = uuid.uuid4().hex
        try:
            reply = await anyio.to_thread.run_sync(work)
        except BaseException as exc:  # noqa: BLE001 - sanitised into the catalogue
            return error_response(sanitize(exc), request_id)
        return json_response(reply.envelope(), headers={"X-Request-Id": request_id})

    async def health(request: Request) -> Response:
        return await answer(request, core.health)

    async def status(request: Request) -> Response:
        return await answer(request, lambda: core.status(port=port))

    def indexer(full: bool):
        async def run(request: Request) -> Response:
            try:
                body = await read_json(request, optional=True)
                require = body.get("requireEmbeddings")
                if "requireEmbeddings" in body and not isinstance(require, bool):
                    raise VaultError("INVALID_PARAMETER", field="requireEmbeddings")
            except VaultError as error:
                return error_response(error, uuid.uuid4().hex)
            return await answer(request, lambda: core.index(full=full, require_embeddings=require))
        return run

    def posted(operation: Callable[[dict[str, Any]], Reply]):
        async def run(request: Request) -> Response:
            try:
                body = await read_json(request)
            except VaultError as error:
                return error_response(error, uuid.uuid4().hex)
            return await answer(request, lambda: operation(body))
        return run

    async def note(request: Request) -> Response:
        params = request.query_params

        def work() -> Reply:
            return core.get_note({"noteId": request.path_params["noteId"],
                                  "allowLarge": validate.http_flag(params.get("allowLarge"), "allowLarge")})
        return await answer(request, work)

    async def chunk(request: Request) -> Response:
        def work() -> Reply:
            nid = validate.note_id({"noteId": request.path_params["noteId"]})
            index = validate.http_chunk_index(request.path_params["chunkIndex"])
            return core.get_chunk({"noteId": nid, "chunkIndex": index})
        return await answer(request, work)

    async def attachment(request: Request) -> Response:
        request_id = uuid.uuid4().hex
        params = request.query_params
        try:
            args = {"vaultRelativePath": request.path_params.get("path", ""),
                    "download": validate.http_flag(params.get("download"), "download"),
                    "allowLarge": validate.http_flag(params.get("allowLarge"), "allowLarge")}
            meta, real, st, download, allow_large = await anyio.to_thread.run_sync(core.attachment, args)
            if download:
                core.check_download(st, allow_large, cap=None)
        except BaseException as exc:  # noqa: BLE001
            return error_response(sanitize(exc), request_id)
        if not download:
            return json_response(Reply(meta).envelope(), headers={"X-Request-Id": request_id})
        response = FileResponse(real, media_type=meta["contentType"], filename=meta["fileName"],
                                content_disposition_type="attachment", stat_result=st,
                                headers={"X-Request-Id": request_id})
        response.headers["content-type"] = meta["contentType"]  # as in the metadata, no added charset
        return response

    async def not_found(request: Request, exc: Exception) -> Response:
        code = "MCP_NOT_ENABLED" if request.url.path == mcp_path and not mcp_enabled else "ROUTE_NOT_FOUND"
        return error_response(VaultError(code), uuid.uuid4().hex)

    async def not_allowed(request: Request, exc: HTTPException) -> Response:
        return error_response(VaultError("METHOD_NOT_ALLOWED"), uuid.uuid4().hex, headers=exc.headers)

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/status", status, methods=["GET"]),
        Route("/index", indexer(False), methods=["POST"]),
        Route("/reindex", indexer(True), methods=["POST"]),
        Route("/search", posted(core.search), methods=["POST"]),
        Route("/related", posted(core.related), methods=["POST"]),
        Route("/notes/{noteId}", note, methods=["GET"]),
        Route("/chunks/{noteId}/{chunkIndex}", chunk, methods=["GET"]),
        Route("/attachments/{path:anypath}", attachment, methods=["GET"]),
    ]
    lifespan = None
    if mcp_enabled:
        manager = StreamableHTTPSessionManager(app=build_server(core, "http"), security_settings=None)
        routes.append(Route(mcp_path, StreamableHTTPASGIApp(manager)))

        def lifespan(app):  # noqa: ANN001 - Starlette's lifespan signature
            return manager.run()
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={404: not_found, 405: not_allowed})
    app.router.redirect_slashes = False
    return Gate(app, settings, mcp_path)
