"""Start the generic-files docs example (reference/generic_files/docs.py) with one deliberate
defect: `python launch_gf_docs.py MUTANT` (the root comes from DOCS_DIR).

Each mutant patches the example from the outside; the suite runs it through the mapping
examples/generic-files/docs.yaml and must report the ids the mutant lists.
"""

from __future__ import annotations

import os
import sys

try:
    from tests.mutants._dispatch import mutant, run
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run  # type: ignore[no-redef]

from reference.generic_files import common, docs

MAPPING = ("--mapping", "examples/generic-files/docs.yaml")


@mutant("GF-WRONG-001", profile="generic-files", options=MAPPING)
def gf_docs_wrong_file():
    """read_doc of a path that does not exist answers the first document's content instead of an error."""
    original = docs.resolve_relative

    def fallback(root, raw):
        real = original(root, raw)
        return real if os.path.exists(real) else next(common.walk_files(root, docs.SUFFIXES))[1]
    docs.resolve_relative = fallback


@mutant("GF-TOOL-001", profile="generic-files", options=MAPPING, control="GF-WRITE-001")
def gf_docs_search_finds_nothing():
    """search_docs answers an empty list for every query: it cannot show an escape, so its probes
    of GF-ESC-001 prove nothing, and GF-TOOL-001 (a search for a word of a file finds it) fails."""
    docs.Library.search = lambda self, query, limit: []


@mutant("GF-ESC-001", profile="generic-files", options=MAPPING)
def gf_docs_index_follows_links():
    """Builds the search index following every symlink, so search_docs returns snippets of files
    outside the root (read_doc still refuses them)."""
    def everything(root, suffixes=()):
        for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
            dirnames.sort()
            for name in sorted(filenames):
                if name.lower().endswith(suffixes):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, root), path
    docs.walk_files = everything


if __name__ == "__main__":
    sys.exit(run("launch_gf_docs.py", docs.main))
