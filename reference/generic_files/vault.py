"""A note-vault example server, in the shape of the Obsidian-style vault servers:
`python -m reference.generic_files.vault --vault ROOT [--http --port N]`.

Paths are vault-relative only (an absolute path is refused). A refused or missing path is a
normal result (isError false) whose structuredContent, and the JSON of its one text block, is
`{"error": {"code": "...", "message": "..."}}`; a message names a path only vault-relative,
never the vault's absolute location. get_notes answers all or nothing: one bad item makes the
whole call that error object. append_note exists only so a mapping has a write tool to leave
out: nothing else ever writes.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from typing import Any

import mcp_types as types

from reference._serve import log_to_stderr

from .common import (WRITES, Denied, Handler, entries, located, make_server, parser, read_text, real_root,
                     resolve_relative, serve, shown, text, tool, walk_files)

PROG = "rc-gf-vault"
log = logging.getLogger("rc.generic_files.vault")
MAX_HITS = 100
MAX_LINE = 200
FILEPATH = {"type": "string", "description": "Path of the note relative to the vault root, e.g. notes/alpha.md"}


def as_json(body: dict[str, Any]) -> types.CallToolResult:
    return text(json.dumps(body, ensure_ascii=False), body)


def refuse(exc: Denied) -> types.CallToolResult:
    return as_json({"error": {"code": exc.code, "message": exc.message}})


def get_note(root: str, args: dict[str, Any]) -> types.CallToolResult:
    return text(located(root, resolve_relative(root, args["filepath"]), read_text))


def get_notes(root: str, args: dict[str, Any]) -> types.CallToolResult:
    blocks = []
    for index, filepath in enumerate(args["filepaths"]):
        try:
            real = resolve_relative(root, filepath)
            content = located(root, real, read_text)
        except Denied as exc:
            raise Denied(exc.code, f"filepaths[{index}]: {exc.message}") from None
        blocks.append(f"# {shown(root, real)}\n\n{content}\n")
    return text("\n---\n\n".join(blocks))


def list_notes(root: str, args: dict[str, Any]) -> types.CallToolResult:
    real = resolve_relative(root, args.get("dirpath", ""))
    found = located(root, real, entries)
    names = [e.name + "/" if e.is_dir(follow_symlinks=False) else e.name for e in found]
    return as_json({"dirpath": shown(root, real), "entries": names})


def search_notes(root: str, args: dict[str, Any]) -> types.CallToolResult:
    """Case-insensitive substring search over the text of every .md note; one line a note."""
    query = args["query"].strip().casefold()
    if not query:
        raise Denied("invalid_query", "the query is empty")
    hits = []
    for relative, real in walk_files(root, (".md",)):
        try:
            line = next((line for line in read_text(real).splitlines() if query in line.casefold()), None)
        except Denied:
            continue
        if line is not None:
            hits.append({"filepath": relative, "line": line.strip()[:MAX_LINE]})
            if len(hits) == MAX_HITS:
                break
    return as_json({"results": hits})


def append_note(root: str, args: dict[str, Any]) -> types.CallToolResult:
    real = resolve_relative(root, args["filepath"])
    if not real.endswith(".md") or not os.path.isdir(os.path.dirname(real)):
        raise Denied("invalid_path", f"{shown(root, real)}: not a .md path in an existing folder")
    try:
        with open(real, "a", encoding="utf-8") as handle:
            handle.write(args["content"])
    except OSError as exc:
        raise Denied("unwritable", f"{shown(root, real)}: cannot be written ({exc.strerror or 'error'})") from None
    return as_json({"appended": shown(root, real)})


def build_server(root: str) -> Any:
    def bind(fn) -> Handler:
        return lambda args: fn(root, args)

    tools = {
        "get_note": (tool("get_note", "Return the content of one note.", {"filepath": FILEPATH}), bind(get_note)),
        "get_notes": (tool("get_notes", "Return the content of several notes, each under a '# <filepath>' heading.",
                           {"filepaths": {"type": "array", "items": FILEPATH, "minItems": 1}}), bind(get_notes)),
        "list_notes": (tool("list_notes", "List a vault folder: note names, and folder names ending in '/'.",
                            {"dirpath": {"type": "string", "description": "Vault-relative folder; omit or '' for "
                                                                          "the vault root"}},
                            optional=("dirpath",)), bind(list_notes)),
        "search_notes": (tool("search_notes", "Find notes whose text contains the query (case-insensitive): "
                              "vault-relative paths and the first matching line.",
                              {"query": {"type": "string", "description": "Text to search for"}}),
                         bind(search_notes)),
        "append_note": (tool("append_note", "Append text to a note, creating it if it does not exist.",
                             {"filepath": FILEPATH, "content": {"type": "string"}}, annotations=WRITES),
                        bind(append_note)),
    }
    return make_server(PROG, tools, refuse, log)


def main(argv: list[str] | None = None) -> int:
    arguments = parser(PROG, "A note-vault example server for the generic-files profile.")
    arguments.add_argument("--vault", required=True, help="the vault's root folder")
    args = arguments.parse_args(argv)
    log_to_stderr(log)
    root = real_root(args.vault)
    if not os.path.isdir(root):
        print(f"{PROG}: --vault is not a directory", file=sys.stderr)
        return 2
    return serve(build_server(root), args)


if __name__ == "__main__":
    sys.exit(main())
