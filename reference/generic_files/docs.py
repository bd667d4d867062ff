"""A docs example server with full-text search, in the shape of the local docs/RAG servers:
`DOCS_DIR=ROOT python -m reference.generic_files.docs [--http --port N]`.

At start-up every .md and .txt file under the root goes into an in-memory SQLite FTS5 index
(nothing is written to disk). Paths are relative to the root (an absolute path is refused).
A refused or missing path is a JSON-RPC error (invalid params, -32602) whose message names a
path only root-relative.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import sys
import threading
from typing import Any, NoReturn

import mcp_types as types
from mcp.shared.exceptions import MCPError

from reference._serve import log_to_stderr

from .common import (Denied, Handler, located, make_server, parser, read_text, real_root, resolve_relative,
                     serve, text, tool, walk_files)

PROG = "rc-gf-docs"
ENV_ROOT = "DOCS_DIR"
SUFFIXES = (".md", ".txt")
DEFAULT_LIMIT, MAX_LIMIT = 10, 50
log = logging.getLogger("rc.generic_files.docs")


class Library:
    """The docs root and its full-text index, built once at start-up."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.lock = threading.Lock()  # one connection, shared by the worker threads
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, body)")
        rows = []
        for relative, real in walk_files(root, SUFFIXES):
            try:
                rows.append((relative, read_text(real)))
            except Denied:  # unreadable: not indexed
                continue
        self.db.executemany("INSERT INTO docs(path, body) VALUES (?, ?)", rows)
        self.count = len(rows)

    def search(self, query: str, limit: int) -> list[dict[str, str]]:
        with self.lock:
            found = self.db.execute("SELECT path, snippet(docs, 1, '', '', '...', 12) FROM docs "
                                    "WHERE docs MATCH ? ORDER BY rank, path LIMIT ?", (match(query), limit))
            return [{"path": path, "snippet": snippet} for path, snippet in found]


def match(query: str) -> str:
    """An FTS5 query that matches documents holding every word of `query`: each word is quoted,
    so nothing the caller sends is read as FTS5 syntax."""
    words = re.findall(r"\w+", query)
    if not words:
        raise Denied("invalid_query", "the query has no word to search for")
    return " ".join(f'"{word}"' for word in words)


def refuse(exc: Denied) -> NoReturn:
    raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid params: {exc.message}")


def search_docs(library: Library, args: dict[str, Any]) -> types.CallToolResult:
    body = {"results": library.search(args["query"], args.get("limit", DEFAULT_LIMIT))}
    return text(json.dumps(body, ensure_ascii=False), body)


def read_doc(library: Library, args: dict[str, Any]) -> types.CallToolResult:
    return text(located(library.root, resolve_relative(library.root, args["path"]), read_text))


def build_server(library: Library) -> Any:
    def bind(fn) -> Handler:
        return lambda args: fn(library, args)

    tools = {
        "search_docs": (tool("search_docs", "Full-text search over the documentation (.md and .txt files): "
                             "relative paths, best match first, each with a snippet.",
                             {"query": {"type": "string", "description": "Words to search for (all must match)"},
                              "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                                        "description": f"At most this many results (default {DEFAULT_LIMIT})"}},
                             optional=("limit",)), bind(search_docs)),
        "read_doc": (tool("read_doc", "Return the full text of one document.",
                          {"path": {"type": "string", "description": "Path relative to the docs folder, "
                                                                     "as search_docs returns it"}}),
                     bind(read_doc)),
    }
    return make_server(PROG, tools, refuse, log)


def main(argv: list[str] | None = None) -> int:
    args = parser(PROG, f"A docs example server for the generic-files profile (root: ${ENV_ROOT}).").parse_args(argv)
    log_to_stderr(log)
    configured = os.environ.get(ENV_ROOT, "")
    root = real_root(configured) if configured else ""
    if not root or not os.path.isdir(root):
        print(f"{PROG}: set {ENV_ROOT} to the docs folder", file=sys.stderr)
        return 2
    library = Library(root)
    log.info("indexed %d documents", library.count)
    return serve(build_server(library), args)


if __name__ == "__main__":
    sys.exit(main())
