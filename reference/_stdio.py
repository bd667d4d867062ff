"""Serving a low-level SDK Server over stdio, shared by every reference server."""

from __future__ import annotations

from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


async def serve_stdio(server: Server) -> None:
    """Serve until stdin closes; the SDK answers both protocol eras on the same streams."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
