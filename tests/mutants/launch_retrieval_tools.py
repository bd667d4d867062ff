"""Start the retrieval-tools reference with one deliberate defect:
`python launch_retrieval_tools.py MUTANT [server args]` (roots come from DOCS_ROOT/CODE_ROOT).

Each mutant patches the reference from the outside; tests/test_mutants.py expects the suite
to fail on the ids it lists for the mutant.
"""

from __future__ import annotations

import os
import posixpath
import random
import sys
from pathlib import Path

try:
    from tests.mutants._dispatch import mutant, run, variant
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run, variant  # type: ignore[no-redef]

from reference.retrieval_tools import config, paths, server, tools, walk


def _wrap_tool(name, transform):
    description, original = tools.TOOLS[name]

    def patched(roots, args):
        result, truncated = original(roots, args)
        return transform(roots, args, result, truncated)

    tools.TOOLS[name] = (description, patched)


@mutant("RT-SRCH-001", profile="retrieval-tools")
def rt_wrong_ordering():
    original = walk.walk_files
    walk.walk_files = lambda root: sorted(original(root), key=lambda item: item[0].lower())  # case-folded


@mutant("RT-SRCH-005", "RT-SRCH-001", profile="retrieval-tools")
def rt_nondeterministic_order():
    def shuffle(roots, args, result, truncated):
        random.shuffle(result["matches"])
        return result, truncated
    _wrap_tool("search", shuffle)


@mutant("RT-SRCH-003", profile="retrieval-tools")
def rt_limit_not_applied():
    def unlimited(roots, args, result, truncated):
        if truncated:
            args = dict(args, limit=tools.MAX_LIMIT)
            result, _ = tools.search(roots, args)
        return result, False
    _wrap_tool("search", unlimited)


@mutant("RT-VIS-001", profile="retrieval-tools")
def rt_hidden_listed():
    original = walk.list_entries

    def with_hidden(root, relative_dir, dir_real):
        entries = original(root, relative_dir, dir_real)
        prefix = relative_dir + "/" if relative_dir else ""
        for name in sorted(os.listdir(dir_real)):
            if name.startswith("."):
                kind = "dir" if (Path(dir_real) / name).is_dir() else "file"
                entries.append({"name": name, "path": prefix + name, "type": kind})
        return sorted(entries, key=lambda e: e["name"])
    walk.list_entries = with_hidden


@mutant("RT-VIS-002", profile="retrieval-tools")
def rt_gitignore_ignored():
    walk.IgnoreRules.ignored = lambda self, relative, is_dir: False


@mutant("RT-PATH-001", "RT-PATH-002", "RT-PATH-004", profile="retrieval-tools")
def rt_traversal_accepted():
    def normalize(raw, repo, *, allow_root=False):
        text = raw.strip().replace("\\", "/").lstrip("/")
        return posixpath.normpath(text) if text else ""

    def resolve(root_real, relative, repo):
        return Path(os.path.normpath(root_real / relative))  # no containment check at all
    tools.normalize = normalize
    tools.resolve = resolve
    tools.relative_to_root = lambda root_real, real: ""
    walk.is_visible = lambda root, relative, is_dir: True


@mutant("RT-PATH-003", profile="retrieval-tools")
def rt_cross_root_escape():
    """Containment against any configured root instead of the requested one."""
    original = paths.inside
    state = {}

    def load(args, environ=None):
        roots = original_load(args, environ)
        state["roots"] = (roots.docs, roots.code)
        return roots

    def inside_any(root_real, real):
        return any(original(r, real) for r in state.get("roots", (root_real,)))
    original_load = config.load_roots
    server.load_roots = load
    paths.inside = inside_any
    tools.relative_to_root = lambda root_real, real: ""  # and no second look at where it landed


@mutant("RT-SNIP-002", profile="retrieval-tools")
def rt_snippet_not_clamped():
    def unclamped(roots, args, result, truncated):
        result["end_line"] = args["end_line"]
        return result, False
    _wrap_tool("get_snippet", unclamped)


@mutant("RT-LOG-001", profile="retrieval-tools")
def rt_content_in_logs():
    original = server.log_line

    def verbose(name, outcome):
        body = outcome.body.get("result", {}) if isinstance(outcome.body, dict) else {}
        first = (body.get("lines") or body.get("matches") or [{}])[0]
        return original(name, outcome) + f" first={first.get('text') or first.get('preview') or ''}"
    server.log_line = verbose


@mutant("RT-CFG-001", "RT-CFG-002", profile="retrieval-tools")
def rt_starts_with_missing_root():
    config.root_problem = lambda path: None
    original = config.load_roots

    def lenient(args, environ=None):
        env = dict(os.environ if environ is None else environ)
        env.setdefault("DOCS_ROOT", ".")
        env.setdefault("CODE_ROOT", ".")
        return original(args, env)
    server.load_roots = lenient


@mutant("RT-OUT-002", profile="retrieval-tools")
def rt_absolute_path_in_error():
    from reference.retrieval_tools import errors
    original = errors.ToolError.body

    def body(self):
        out = original(self)
        out["error"]["details"]["reason"] = f"under {os.environ.get('DOCS_ROOT', '')}"
        return out
    errors.ToolError.body = body


@mutant("RT-RO-001", profile="retrieval-tools")
def rt_index_written():
    def index(roots, args, result, truncated):
        (roots.docs / ".rt-search-index").write_text(args["query"])
        return result, truncated
    _wrap_tool("search", index)


@mutant("RT-CFG-004", profile="retrieval-tools")
def rt_startup_lists_root():
    original = config.load_roots

    def listing(args, environ=None):
        try:
            return original(args, environ)
        except config.ConfigError as exc:
            seen = {v: sorted(os.listdir(os.environ[v])) for v in ("DOCS_ROOT", "CODE_ROOT")
                    if os.path.isdir(os.environ.get(v, ""))}
            raise config.ConfigError(f"{exc}; roots hold {seen}") from None
    server.load_roots = listing


@variant(profile="retrieval-tools")
def rt_variant_jsonrpc_errors():
    """Not a defect: errors on the other accepted channel, a JSON-RPC error whose data.error
    holds the object. The suite must pass this variant (tests/test_variants.py)."""
    from mcp.shared.exceptions import MCPError
    original = server.to_result

    def to_result(outcome):
        if outcome.is_error:
            raise MCPError(-32001, outcome.body["error"]["message"], {"error": outcome.body["error"]})
        return original(outcome)
    server.to_result = to_result





if __name__ == "__main__":
    sys.exit(run("launch_retrieval_tools.py", server.main))
