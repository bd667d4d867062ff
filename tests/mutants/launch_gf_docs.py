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



def _with_file_links(root, suffixes=()):
    """Every file under `root` as a glob of `**/*.md` finds it: file symlinks included wherever
    they lead (directory links are not descended)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.lower().endswith(suffixes):
                path = os.path.join(dirpath, name)
                if os.path.isfile(path):
                    yield os.path.relpath(path, root).replace(os.sep, "/"), path


@mutant("GF-ESC-001", profile="generic-files", options=MAPPING)
def gf_docs_snippet_cuts_the_canary():
    """Indexes file symlinks wherever they lead, and answers a search with the line that holds
    the word, from 30 characters before it (the shape of a vault server's snippet): the outside
    file's canary comes back cut, never whole."""
    docs.walk_files = _with_file_links
    original = docs.Library.search

    def cut(self, query, limit):
        words = [w.lower() for w in docs.re.findall(r"\w+", query)]
        out = []
        for hit in original(self, query, limit):
            body = self.db.execute("SELECT body FROM docs WHERE path = ?", (hit["path"],)).fetchone()[0]
            line = next((ln for ln in body.splitlines() if any(w in ln.lower() for w in words)), "")
            at = min((ln for ln in (line.lower().find(w) for w in words) if ln >= 0), default=0)
            out.append({"path": hit["path"], "snippet": "..." + line[max(0, at - 30):at + 40]})
        return out
    docs.Library.search = cut


@mutant("GF-ESC-001", profile="generic-files", options=MAPPING)
def gf_docs_search_names_the_links_it_read_through():
    """Indexes file symlinks wherever they lead, and answers a search with the names of the
    matching files only: a search for the outside files' word names the root's links out (an
    oracle on the text of the files they lead to), never their content."""
    docs.walk_files = _with_file_links
    original = docs.Library.search
    docs.Library.search = lambda self, query, limit: [{"path": h["path"], "snippet": ""}
                                                      for h in original(self, query, limit)]


if __name__ == "__main__":
    sys.exit(run("launch_gf_docs.py", docs.main))
