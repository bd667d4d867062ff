"""A filesystem-style example server, in the shape of the official filesystem server:
`python -m reference.generic_files.fs ROOT [ROOT...] [--http --port N]`.

Paths may be absolute or relative to the first root. A refused or missing path is a result
with isError: true whose text starts "Access denied - " (outside every root) or "Error - "
(missing, a directory, unreadable); read_multiple_files answers a bad item inside its normal
result as `<path>: Error - <message>`, as the official server does. The denial text names the
allowed directories and search_files returns absolute paths, as the official server does;
list_allowed_directories returns the roots by design. write_file exists only so a mapping has
a write tool to leave out: nothing else ever writes.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import sys
from datetime import datetime, timezone
from typing import Any

import mcp_types as types

from reference._serve import log_to_stderr

from .common import (WRITES, Denied, Handler, check_path, entries, inside, make_server, parser, read_text,
                     real_root, serve, text, tool)

PROG = "rc-gf-fs"
log = logging.getLogger("rc.generic_files.fs")
# Every result but list_allowed_directories's also carries its text as structuredContent.content.
CONTENT = {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]}
PATH = {"type": "string", "description": "An absolute path, or one relative to the first allowed directory"}


def written(roots: list[str], raw: str) -> str:
    """The path as the caller wrote it, made absolute against the first root (nothing resolved)."""
    return raw if os.path.isabs(raw) else os.path.join(roots[0], raw)


def resolve(roots: list[str], raw: str) -> str:
    """The real path of `raw` (every symlink followed), which must lie inside one of `roots`."""
    check_path(raw)
    real = os.path.realpath(written(roots, raw))
    if not any(inside(root, real) for root in roots):
        raise Denied("outside_root", f"Access denied - path outside allowed directories: {', '.join(roots)}")
    return real


def ok(body: str) -> types.CallToolResult:
    return text(body, {"content": body})


def refuse(exc: Denied) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message(exc))], is_error=True)


def message(exc: Denied) -> str:
    return exc.message if exc.message.startswith("Access denied") else f"Error - {exc.message}"


def read_text_file(roots: list[str], args: dict[str, Any]) -> types.CallToolResult:
    return ok(read_text(resolve(roots, args["path"])))


def read_multiple_files(roots: list[str], args: dict[str, Any]) -> types.CallToolResult:
    blocks = []
    for path in args["paths"]:
        try:
            blocks.append(f"{path}:\n{read_text(resolve(roots, path))}\n")
        except Denied as exc:  # one bad item does not stop the others
            blocks.append(f"{path}: Error - {exc.message}")
    return ok("\n---\n".join(blocks))


def list_directory(roots: list[str], args: dict[str, Any]) -> types.CallToolResult:
    found = entries(resolve(roots, args["path"]))
    # A symlink is listed as a file, whatever it points to (it is not descended into).
    return ok("\n".join(f"[DIR] {e.name}" if e.is_dir(follow_symlinks=False) else f"[FILE] {e.name}"
                        for e in found))


def get_file_info(roots: list[str], args: dict[str, Any]) -> types.CallToolResult:
    real = resolve(roots, args["path"])
    try:
        info = os.stat(real)
    except FileNotFoundError:
        raise Denied("not_found", "no such file or directory") from None
    except OSError as exc:
        raise Denied("unreadable", f"cannot be read ({exc.strerror or 'error'})") from None
    kind = "directory" if os.path.isdir(real) else "file" if os.path.isfile(real) else "other"
    modified = datetime.fromtimestamp(info.st_mtime, timezone.utc).isoformat()
    return ok(f"size: {info.st_size}\nmodified: {modified}\ntype: {kind}")


def search_files(roots: list[str], args: dict[str, Any]) -> types.CallToolResult:
    """Names under `path` matching the glob `pattern` (by name, or by path relative to `path`):
    absolute paths, one a line. Directory symlinks are not walked; an entry whose real path
    leaves the roots is never reported."""
    base = resolve(roots, args["path"])
    entries(base)  # a missing path or a file is Denied
    pattern, matches = args["pattern"], []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            relative = os.path.relpath(path, base).replace(os.sep, "/")
            if not (fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern)):
                continue
            if any(inside(root, os.path.realpath(path)) for root in roots):
                matches.append(path)
    return ok("\n".join(matches) if matches else "No matches found")


def list_allowed_directories(roots: list[str], args: dict[str, Any]) -> types.CallToolResult:
    return text("Allowed directories:\n" + "\n".join(roots))


def write_file(roots: list[str], args: dict[str, Any]) -> types.CallToolResult:
    real = resolve(roots, args["path"])  # a dangling link out of the roots resolves outside: refused
    if os.path.isdir(real):
        raise Denied("is_directory", "is a directory")
    if not os.path.isdir(os.path.dirname(real)):
        raise Denied("not_found", "the parent directory does not exist")
    try:
        with open(real, "w", encoding="utf-8") as handle:
            handle.write(args["content"])
    except OSError as exc:
        raise Denied("unwritable", f"cannot be written ({exc.strerror or 'error'})") from None
    return ok(f"Successfully wrote to {args['path']}")


def build_server(roots: list[str]) -> Any:
    def bind(fn) -> Handler:
        return lambda args: fn(roots, args)

    one = {"path": PATH}
    tools = {
        "read_text_file": (tool("read_text_file", "Read the complete contents of a file as text. "
                                "Only works within allowed directories.", one, output_schema=CONTENT),
                           bind(read_text_file)),
        "read_multiple_files": (tool("read_multiple_files", "Read several files at once; a file that cannot be "
                                     "read is reported in place and does not stop the others.",
                                     {"paths": {"type": "array", "items": PATH, "minItems": 1}},
                                     output_schema=CONTENT), bind(read_multiple_files)),
        "list_directory": (tool("list_directory", "List a directory's entries, each prefixed [DIR] or [FILE].",
                                one, output_schema=CONTENT), bind(list_directory)),
        "get_file_info": (tool("get_file_info", "A file's or directory's size, last modification time and type.",
                               one, output_schema=CONTENT), bind(get_file_info)),
        "search_files": (tool("search_files", "Recursively find files and directories under path whose name "
                              "matches a glob pattern. Returns full paths.",
                              {"path": PATH, "pattern": {"type": "string", "description": "A glob, e.g. *.md"}},
                              output_schema=CONTENT), bind(search_files)),
        "list_allowed_directories": (tool("list_allowed_directories", "The directories this server may read.",
                                          {}), bind(list_allowed_directories)),
        "write_file": (tool("write_file", "Create a file or overwrite it completely with new content.",
                            {"path": PATH, "content": {"type": "string"}}, annotations=WRITES,
                            output_schema=CONTENT), bind(write_file)),
    }
    return make_server(PROG, tools, refuse, log)


def main(argv: list[str] | None = None) -> int:
    arguments = parser(PROG, "A filesystem-style example server for the generic-files profile.")
    arguments.add_argument("roots", nargs="+", metavar="ROOT", help="a directory the server may read")
    args = arguments.parse_args(argv)
    log_to_stderr(log)
    roots = [real_root(root) for root in args.roots]
    usable = [root for root in roots if os.path.isdir(root)]
    if len(usable) < len(roots):
        log.warning("skipped %d allowed directories that are not directories", len(roots) - len(usable))
    if not usable:
        print(f"{PROG}: no allowed directory is a directory", file=sys.stderr)
        return 2
    log.info("serving %d allowed directories", len(usable))
    return serve(build_server(usable), args)


if __name__ == "__main__":
    sys.exit(main())
