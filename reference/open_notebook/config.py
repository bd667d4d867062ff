"""Command line: the notebooks root, the seed's ServerConfig constraints, and the transport.

ServerConfig's storage backends (filesystem/s3/supabase notebooks, pgvector/pinecone/weaviate
vectors) reduce to one local root and an in-memory index: nothing external is contacted.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

from . import world

PROG = "rc-open-notebook"


class ConfigError(Exception):
    """A flag is out of range or the root is unusable; str() is one line for stderr."""


@dataclass(frozen=True)
class Config:
    root: Path
    max_passage_context: int = world.MAX_PASSAGE_CONTEXT
    max_search_results: int = world.MAX_K
    stream_timeout_s: float = world.DEFAULT_STREAM_TIMEOUT_S
    stream_chunk_size: int = world.DEFAULT_STREAM_CHUNK_SIZE

    @property
    def default_k(self) -> int:
        return min(world.DEFAULT_K, self.max_search_results)

    def limits(self) -> dict[str, float | int]:
        """What list_constraints reports under `limits`."""
        return {
            "max_passage_context": self.max_passage_context,
            "max_search_results": self.max_search_results,
            "default_search_results": self.default_k,
            "preview_snippet_max_chars": world.PREVIEW_MAX_CHARS,
            "stream_timeout_s": self.stream_timeout_s,
            "stream_chunk_size": self.stream_chunk_size,
        }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description="Reference Open Notebook MCP server (read-only).")
    parser.add_argument("--notebooks", required=True, metavar="ROOT",
                        help="root of the collections (layout: schemas/open-notebook/)")
    parser.add_argument("--passage-context", type=int, default=world.MAX_PASSAGE_CONTEXT, metavar="CHARS",
                        help="characters of context on each side of a passage, 0..500 (default 500)")
    parser.add_argument("--max-search-results", type=int, default=world.MAX_K, metavar="N",
                        help="cap on semantic_search k, 1..50 (default 50); larger k is clamped")
    parser.add_argument("--stream-timeout", type=float, default=world.DEFAULT_STREAM_TIMEOUT_S, metavar="SECONDS",
                        help="lifetime of a stream token from begin_result_stream (default 300)")
    parser.add_argument("--stream-chunk-size", type=int, default=world.DEFAULT_STREAM_CHUNK_SIZE, metavar="N",
                        help="items per stream chunk, 1..50 (default 10)")
    parser.add_argument("--http", action="store_true",
                        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default: loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    return parser.parse_args(argv)


def load_config(args: argparse.Namespace) -> Config:
    if not 0 <= args.passage_context <= world.MAX_PASSAGE_CONTEXT:
        raise ConfigError("--passage-context must be 0..500")
    if not 1 <= args.max_search_results <= world.MAX_K:
        raise ConfigError("--max-search-results must be 1..50")
    if not 0 < args.stream_timeout <= 86_400:
        raise ConfigError("--stream-timeout must be above 0 and at most 86400 seconds")
    if not 1 <= args.stream_chunk_size <= 50:
        raise ConfigError("--stream-chunk-size must be 1..50")
    root = Path(os.path.realpath(Path(args.notebooks).expanduser()))
    if not root.is_dir():
        raise ConfigError("the notebooks root is not a directory")
    if not os.access(root, os.R_OK | os.X_OK):
        raise ConfigError("the notebooks root is not readable")
    timeout = int(args.stream_timeout) if float(args.stream_timeout).is_integer() else args.stream_timeout
    return Config(root, args.passage_context, args.max_search_results, timeout, args.stream_chunk_size)
