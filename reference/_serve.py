"""What the reference servers share: serving a low-level SDK Server over stdio or Streamable
HTTP, the read-only tool annotations, and logging to stderr only."""

from __future__ import annotations

import logging
import sys

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

# Every reference tool reads and never changes anything.
READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                  open_world_hint=False)
# Libraries that log request URLs (a note path) or protocol traffic at INFO.
CHATTY = ("mcp", "httpx", "httpcore", "uvicorn", "uvicorn.access", "uvicorn.error")


def log_to_stderr(log: logging.Logger) -> None:
    """The server's own log (`log`) at INFO, one bare message a line; everything else at
    WARNING; stderr only (stdout is the stdio transport)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s %(levelname)s %(message)s")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.handlers[:] = [handler]
    log.propagate = False
    log.setLevel(logging.INFO)
    for name in CHATTY:
        logging.getLogger(name).setLevel(logging.WARNING)


async def serve_stdio(server: Server) -> None:
    """Serve until stdin closes; the SDK answers both protocol eras on the same streams."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(server: Server, host: str, port: int) -> None:
    """Serve Streamable HTTP at http://HOST:PORT/mcp with the SDK's app under uvicorn.

    On a loopback host the SDK turns on Host and Origin validation (DNS-rebinding protection).
    """
    serve_app(server.streamable_http_app(host=host), host, port)


def serve_app(app, host: str, port: int) -> None:
    """Run an ASGI app under uvicorn with warnings only and no access log (it would print URLs)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
