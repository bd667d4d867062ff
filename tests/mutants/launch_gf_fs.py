"""Start the generic-files fs example (reference/generic_files/fs.py) with one deliberate defect:
`python launch_gf_fs.py MUTANT ROOT [ROOT...]`.

Each mutant patches the example from the outside; the suite runs it through the mapping
examples/generic-files/fs.yaml and must report the ids the mutant lists.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import time

try:
    from tests.mutants._dispatch import mutant, run, variant
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run, variant  # type: ignore[no-redef]

import mcp_types as types

from reference.generic_files import fs
from reference.generic_files.common import Denied, check_path, entries

MAPPING = ("--mapping", "examples/generic-files/fs.yaml")


@mutant("GF-ESC-001", profile="generic-files", options=MAPPING)
def gf_fs_symlink_escape():
    """Checks containment on the path as written (normalised, no symlink resolved), then opens it,
    so a symlink inside the root leads out of it (the CVE-2025-53109 shape)."""
    def lexical(roots, raw):
        check_path(raw)
        path = os.path.normpath(fs.written(roots, raw))
        if not any(fs.inside(root, path) for root in roots):
            raise Denied("outside_root", "Access denied - path outside allowed directories")
        return path
    fs.resolve = lexical


@mutant("GF-WRITE-001", profile="generic-files", options=MAPPING, control="MCP-INIT-001")
def gf_fs_writes_its_index_at_start():
    """Creates its index file in the root when it starts, if it is not there yet (a vault server's
    database): the first server the run starts on the fixture writes it, and every later one
    finds it there. The control, an MCP base test, starts it on the fixture before the sweep does."""
    original = fs.build_server

    def build_server(roots):
        index = os.path.join(roots[0], ".rc-index.db")
        if not os.path.exists(index):
            with open(index, "w") as out:
                out.write("index\n")
        return original(roots)
    fs.build_server = build_server


@mutant("GF-ESC-001", profile="generic-files", options=MAPPING)
def gf_fs_prefix_sibling():
    """Compares with a bare startswith(root), no separator, so `<root>_evil/` passes for `<root>`
    (the CVE-2025-53110 shape)."""
    fs.inside = lambda root, real: real.startswith(root)


@mutant("GF-ESC-001", "GF-DENY-001", profile="generic-files", options=(*MAPPING, "--request-timeout", "4"))
def gf_fs_prefix_sibling_then_hang():
    """The prefix bypass, and no answer at all for a path under `no-such-dir-rc` (which the sweep
    probes last): the escape found before the hang is still named, and the hang on a path that
    names nothing is no denial."""
    import threading
    gf_fs_prefix_sibling()
    original = fs.resolve

    def hang(roots, raw):
        if "no-such-dir-rc" in raw:
            threading.Event().wait()  # never answers (the call's worker waits for ever)
        return original(roots, raw)
    fs.resolve = hang


def _prefix_resolve(roots, raw):
    """The real path, compared with a bare startswith(root): `<root>_evil/` passes for `<root>`."""
    check_path(raw)
    real = os.path.realpath(fs.written(roots, raw))
    if not any(real.startswith(root) for root in roots):
        raise Denied("outside_root", "Access denied - path outside allowed directories")
    return real


@mutant("GF-ESC-001", profile="generic-files", options=MAPPING)
def gf_fs_stat_prefix_sibling():
    """get_file_info alone takes the prefix bypass: it answers with the size of `<root>_evil/secret.md`
    (a stat returns no content, but an answer about a file outside the root is an escape)."""
    def info(roots, args):
        real = _prefix_resolve(roots, args["path"])
        if not os.path.exists(real):
            raise Denied("not_found", "no such file or directory")
        return fs.ok(f"size: {os.stat(real).st_size}\ntype: {'directory' if os.path.isdir(real) else 'file'}")
    fs.get_file_info = info


@mutant("GF-ESC-001", profile="generic-files", options=MAPPING)
def gf_fs_lists_the_parent():
    """list_directory also lists the root's own parent (one level up is "still near the root"):
    `..` names the folders beside the root."""
    original = fs.list_directory

    def listing(roots, args):
        real = os.path.realpath(fs.written(roots, args["path"]))
        if any(real == os.path.dirname(root) for root in roots):
            return fs.ok("\n".join(f"[FILE] {e.name}" for e in entries(real)))
        return original(roots, args)
    fs.list_directory = listing


@mutant("GF-ESC-001", profile="generic-files", options=MAPPING)
def gf_fs_search_runs_anywhere():
    """search_files walks whatever folder its path names, inside the root or not, and reports
    every name that matches: a search that escapes without reading a byte of content."""
    def search(roots, args):
        base = os.path.realpath(fs.written(roots, args["path"]))
        entries(base)  # a missing path or a file is Denied
        found = [os.path.join(top, name) for top, dirs, files in os.walk(base) for name in sorted(dirs + files)
                 if fnmatch.fnmatch(name, args["pattern"])]
        return fs.ok("\n".join(found) if found else "No matches found")
    fs.search_files = search


@variant(profile="generic-files", options=("--mapping", "tests/mutants/gf-fs-marker.yaml"))
def gf_fs_needs_its_marker():
    """Not a defect: refuses to start on a folder without its own marker, `.rcmark/settings.json`
    (as note apps refuse a folder that is not a vault); the mapping's `prepare` makes it."""
    original = fs.main

    def main(argv=None):
        roots = [arg for arg in (argv or []) if not arg.startswith("-")]
        if not roots or not all(os.path.isfile(os.path.join(root, ".rcmark", "settings.json")) for root in roots):
            print("rc-gf-fs: not a prepared folder (no .rcmark/settings.json)", file=sys.stderr)
            return 2
        return original(argv)
    fs.main = main


@variant(profile="generic-files", options=("--mapping", "tests/mutants/gf-fs-ready.yaml"))
def gf_fs_indexes_first():
    """Not a defect: indexes before it serves: every call in its first 4 s is refused ("the index
    is not ready"); the mapping's `ready` waits for it, and the request timeout stays as it is."""
    started = time.monotonic()
    for name in ("read_text_file", "read_multiple_files", "list_directory", "get_file_info", "search_files"):
        def wrapped(roots, args, original=getattr(fs, name)):
            if time.monotonic() - started < 4:
                raise Denied("not_ready", "the index is not ready yet")
            return original(roots, args)
        setattr(fs, name, wrapped)


@mutant("MCP-TOOLS-004", profile="generic-files", options=MAPPING)
def gf_fs_structured_off_schema():
    """read_text_file's structuredContent gives the content's length, a number, where its
    outputSchema says a string."""
    def read(roots, args):
        body = fs.read_text(fs.resolve(roots, args["path"]))
        return fs.text(body, {"content": len(body)})
    fs.read_text_file = read


def _annotate(name: str, annotations) -> None:
    """Give `name` these annotations when the example builds its tools."""
    original = fs.tool

    def tool(tool_name, *args, **kwargs):
        return original(tool_name, *args, **{**kwargs, **({"annotations": annotations} if tool_name == name else {})})
    fs.tool = tool


@mutant("MCP-TOOLS-002", profile="generic-files", options=MAPPING)
def gf_fs_read_tool_not_read_only():
    """read_text_file is annotated readOnlyHint false (a read tool that says it may write)."""
    _annotate("read_text_file", types.ToolAnnotations(read_only_hint=False, destructive_hint=False))


@variant(profile="generic-files", options=MAPPING)
def gf_fs_read_only_hint_alone():
    """Not a defect: read_text_file carries readOnlyHint true and no destructiveHint (MCP: it is
    meaningful only when readOnlyHint is false)."""
    _annotate("read_text_file", types.ToolAnnotations(read_only_hint=True))


@variant(profile="generic-files", options=MAPPING)
def gf_fs_refuses_all_symlinks():
    """Not a defect: refuses every path that goes through a symlink, even one that stays inside
    the root (following it or not is the server's choice)."""
    original = fs.resolve

    def no_links(roots, raw):
        real = original(roots, raw)
        if os.path.normpath(fs.written(roots, raw)) != real:
            raise Denied("symlink", "Access denied - symlinks are not followed")
        return real
    fs.resolve = no_links


if __name__ == "__main__":
    sys.exit(run("launch_gf_fs.py", lambda argv: fs.main(argv)))
