"""Start the generic-files fs example (reference/generic_files/fs.py) with one deliberate defect:
`python launch_gf_fs.py MUTANT ROOT [ROOT...]`.

Each mutant patches the example from the outside; the suite runs it through the mapping
examples/generic-files/fs.yaml and must report the ids the mutant lists.
"""

from __future__ import annotations

import os
import sys

try:
    from tests.mutants._dispatch import mutant, run, variant
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run, variant  # type: ignore[no-redef]

from reference.generic_files import fs
from reference.generic_files.common import Denied, check_path

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
    sys.exit(run("launch_gf_fs.py", fs.main))
