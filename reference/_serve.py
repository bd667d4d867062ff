"""Serving a low-level SDK Server over stdio or Streamable HTTP, shared by the reference servers."""

from __future__ import annotations

from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


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
