"""Start the retrieval-tools reference with one deliberate defect:
`python launch_retrieval_tools.py MUTANT [server args]` (roots come from DOCS_ROOT/CODE_ROOT).

Each mutant patches the reference from the outside; tests/test_mutants.py expects the suite
to fail on the ids it lists for the mutant.
"""

from __future__ import annotations

import json
import os
import posixpath
import random
import sys
from pathlib import Path

try:
    from tests.mutants._dispatch import mutant, run, variant
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run, variant  # type: ignore[no-redef]

from reference.retrieval_tools import config, errors, paths, server, tools, walk


def _wrap_tool(name, transform):
    description, original = tools.TOOLS[name]

    def patched(roots, args):
        result, truncated = original(roots, args)
        return transform(roots, args, result, truncated)

    tools.TOOLS[name] = (description, patched)


@mutant("RT-SRCH-001", profile="retrieval-tools")
def rt_wrong_ordering():
    """Sorts search hits by path in "natural" order (a2 before a10): not lexicographic."""
    import re
    original = walk.walk_files

    def natural(item):
        return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", item[0])]
    walk.walk_files = lambda root: sorted(original(root), key=natural)


@mutant("RT-SRCH-005", "RT-SRCH-001", profile="retrieval-tools")
def rt_nondeterministic_order():
    """Shuffles search hits on every call."""
    def shuffle(roots, args, result, truncated):
        random.shuffle(result["matches"])
        return result, truncated
    _wrap_tool("search", shuffle)


@mutant("RT-DET-001", profile="retrieval-tools")
def rt_nondeterministic_listing():
    """Shuffles list_dir entries on every call (search stays ordered)."""
    def shuffle(roots, args, result, truncated):
        random.shuffle(result["entries"])
        return result, truncated
    _wrap_tool("list_dir", shuffle)


@mutant("RT-SRCH-003", profile="retrieval-tools")
def rt_limit_not_applied():
    """Returns every hit whatever the limit."""
    def unlimited(roots, args, result, truncated):
        if truncated:
            args = dict(args, limit=tools.MAX_LIMIT)
            result, _ = tools.search(roots, args)
        return result, False
    _wrap_tool("search", unlimited)


@mutant("RT-VIS-001", profile="retrieval-tools")
def rt_hidden_listed():
    """List_dir shows dotfiles and dot-directories."""
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
    """Ignores every .gitignore."""
    walk.IgnoreRules.ignored = lambda self, relative, is_dir: False


@mutant("RT-PATH-001", "RT-PATH-002", profile="retrieval-tools")
def rt_traversal_accepted():
    """Collapses `..` and skips the containment check."""
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


@mutant("RT-PATH-002", profile="retrieval-tools")
def rt_prefix_containment():
    """`..` is still refused; the real path is kept inside the root by `startswith(root)` with no
    separator (CVE-2025-53110), so a symlink into docs_evil/ or code_evil/ passes as inside,
    and the root-relative path is cut out of it by length."""
    paths.inside = lambda root_real, real: str(real).startswith(str(root_real))
    tools.relative_to_root = lambda root_real, real: str(real)[len(str(root_real)) + 1:]


@mutant("RT-SNIP-002", profile="retrieval-tools")
def rt_snippet_not_clamped():
    """Reports the requested end line past the end of the file."""
    def unclamped(roots, args, result, truncated):
        result["end_line"] = args["end_line"]
        return result, False
    _wrap_tool("get_snippet", unclamped)


@mutant("RT-LOG-001", profile="retrieval-tools")
def rt_content_in_logs():
    """Logs the first returned line or preview."""
    original = server.log_line

    def verbose(name, outcome):
        body = outcome.body.get("result", {}) if isinstance(outcome.body, dict) else {}
        first = (body.get("lines") or body.get("matches") or [{}])[0]
        return original(name, outcome) + f" first={first.get('text') or first.get('preview') or ''}"
    server.log_line = verbose


@mutant("RT-CFG-001", "RT-CFG-002", profile="retrieval-tools")
def rt_starts_with_missing_root():
    """Starts with a missing or invalid root."""
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
    """Puts the docs root's absolute path in error details."""
    from reference.retrieval_tools import errors
    original = errors.ToolError.body

    def body(self):
        out = original(self)
        out["error"]["details"]["reason"] = f"under {os.environ.get('DOCS_ROOT', '')}"
        return out
    errors.ToolError.body = body


@mutant("RT-RO-001", profile="retrieval-tools")
def rt_index_written():
    """Writes a search index file into the docs root."""
    def index(roots, args, result, truncated):
        (roots.docs / ".rt-search-index").write_text(args["query"])
        return result, truncated
    _wrap_tool("search", index)


@mutant("RT-RO-001", profile="retrieval-tools")
def rt_log_file_written():
    """Appends an operational log line (tool, repo: no contents) to a file under XDG_STATE_HOME:
    seed 003 makes all filesystem access read-only, so this fails too."""
    state = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state")) / "rc-retrieval-tools"
    state.mkdir(parents=True, exist_ok=True)

    def logged(roots, args, result, truncated):
        with open(state / "server.log", "a", encoding="utf-8") as log:
            log.write(f"tool=search repo={args.get('repo')}\n")
        return result, truncated
    _wrap_tool("search", logged)


@mutant("RT-CFG-004", profile="retrieval-tools")
def rt_startup_lists_root():
    """Lists the roots' contents in the start-up error."""
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
    holds the object; and an absolute path naming the root or a place inside it is served
    (FR-004 refuses only paths outside the root; a symlink out is still refused on resolving).
    The suite must pass this variant (tests/test_variants.py)."""
    from mcp.shared.exceptions import MCPError
    original = server.to_result

    def to_result(outcome):
        if outcome.is_error:
            raise MCPError(-32001, outcome.body["error"]["message"], {"error": outcome.body["error"]})
        return original(outcome)
    server.to_result = to_result
    original_normalize = tools.normalize

    def normalize(raw, repo, *, allow_root=False):
        root = os.environ.get(f"{repo.upper()}_ROOT", "").rstrip("/")
        if isinstance(raw, str) and root and ".." not in raw.split("/") and (raw == root or raw.startswith(root + "/")):
            raw, allow_root = raw[len(root):].lstrip("/") or ".", allow_root or raw.rstrip("/") == root
        return original_normalize(raw, repo, allow_root=allow_root)
    tools.normalize = normalize







@mutant("RT-PATH-001", profile="retrieval-tools")
def rt_back_in_through_root_name():
    """`..` is collapsed instead of refused; what still lands inside the same root is served
    (`../docs/README.md` on docs, `guide/../README.md`). Escapes are still refused."""
    original = tools.normalize

    def normalize(raw, repo, *, allow_root=False):
        if isinstance(raw, str) and ".." in raw.replace("\\", "/").split("/") and not raw.startswith("/"):
            root = os.environ["DOCS_ROOT" if repo == "docs" else "CODE_ROOT"]
            name = os.path.basename(os.path.normpath(root))
            collapsed = posixpath.normpath(posixpath.join(name, raw.replace("\\", "/")))
            if collapsed == name or collapsed.startswith(name + "/"):
                return collapsed[len(name) + 1:]
        return original(raw, repo, allow_root=allow_root)
    tools.normalize = normalize


@mutant("RT-CFG-005", profile="retrieval-tools")
def rt_root_spelling_breaks_paths():
    """Result paths are cut out of the real path by the length of DOCS_ROOT/CODE_ROOT as given:
    right for a plain absolute root, wrong for a relative one or one with a trailing slash."""
    def relative(root_real, real):
        repo = "DOCS_ROOT" if str(root_real).endswith("docs") else "CODE_ROOT"
        given = os.environ.get(repo, str(root_real))
        return "" if real == root_real else str(real)[len(given) + 1:]
    tools.relative_to_root = relative
    original_walk = walk.walk_files

    def walk_files(root):
        given = os.environ.get("DOCS_ROOT" if str(root).endswith("docs") else "CODE_ROOT", str(root))
        return [(str(Path(abs_path))[len(given) + 1:], abs_path) for _rel, abs_path in original_walk(root)]
    walk.walk_files = walk_files


@mutant("RT-CFG-005", profile="retrieval-tools")
def rt_trailing_slash_root_outside():
    """Containment is `startswith(root + "/")` on the root as given, real path or not: with
    DOCS_ROOT or CODE_ROOT ending in `/` the root itself is outside, so list_dir without a
    path is refused there; files and subdirectories are served as usual."""
    original = paths.inside

    def inside(root_real, real):
        for var in ("DOCS_ROOT", "CODE_ROOT"):
            given = os.environ.get(var, "")
            if given.endswith("/") and Path(os.path.realpath(given)) == root_real:
                return str(real).startswith(os.path.realpath(given) + "/")
        return original(root_real, real)
    paths.inside = inside


@mutant("RT-TOOL-004", profile="retrieval-tools")
def rt_output_schema_missing():
    """list_dir is listed without an outputSchema (its results and structuredContent are as
    before)."""
    original = server.tool_list

    def tool_list():
        return [tool.model_copy(update={"output_schema": None}) if tool.name == "list_dir" else tool
                for tool in original()]
    server.tool_list = tool_list


@mutant("MCP-TOOLS-004", profile="retrieval-tools")
def rt_snippet_structured_content_off_schema():
    """get_snippet's structuredContent, built apart from its text, gives start_line as a string:
    it does not conform to the declared outputSchema (the text content is right)."""
    original = server.to_result

    def to_result(outcome):
        out = original(outcome)
        result = (out.structured_content or {}).get("result")
        if isinstance(result, dict) and "start_line" in result:
            structured = json.loads(json.dumps(out.structured_content))
            structured["result"]["start_line"] = str(result["start_line"])
            out = out.model_copy(update={"structured_content": structured})
        return out
    server.to_result = to_result


@mutant("RT-OPEN-003", profile="retrieval-tools")
def rt_phantom_last_line():
    """Counts an empty line after a file's final newline (and one in an empty file), as a plain
    split on LF does: open_file ends with it, get_snippet clamps to it. The seed checks accept it;
    the advisory reports it."""
    original = walk.split_lines
    walk.split_lines = lambda text: original(text) + [""] if not text or text.endswith("\n") else original(text)


@mutant("RT-SRCH-008", "RT-OUT-002", profile="retrieval-tools")
def rt_unreadable_dir_fails_search():
    """A directory search cannot read fails the whole search, and the error names it by its
    absolute path."""
    def scan(path):
        try:
            return sorted(os.scandir(path), key=lambda e: e.name)
        except PermissionError:
            raise errors.ToolError("INTERNAL_ERROR", reason="unreadable") from None
    walk._scan = scan
    original_body = errors.ToolError.body

    def body(self):
        out = original_body(self)
        if self.code == "INTERNAL_ERROR":
            out["error"]["details"] = {"reason": f"cannot read {os.environ.get('DOCS_ROOT', '')}/locked-dir"}
        return out
    errors.ToolError.body = body


@mutant("RT-VIS-001", profile="retrieval-tools")
def rt_hidden_dir_listed():
    """Listing a hidden directory by name shows its contents (entries inside listings are still
    filtered)."""
    original = walk.is_visible

    def is_visible(root, relative, is_dir):
        if is_dir and relative and relative.split("/")[-1].startswith("."):
            return True
        return original(root, relative, is_dir)
    tools.walk = type("W", (), {"__getattr__": lambda self, name: getattr(walk, name),
                                "is_visible": staticmethod(is_visible)})()


@mutant("RT-SRCH-009", "RT-SRCH-003", "RT-VIS-005", "RT-PATH-004", profile="retrieval-tools")
def rt_search_masking():
    """Four defects at once: search fails outright on a root holding a directory symlink; and,
    hidden behind it on other fixtures, meta.truncated is always false, nested .gitignore files
    are ignored, and search follows file symlinks out of the root. Each must be reported."""
    def walk_files(root):
        out = []
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames:
                if os.path.islink(os.path.join(dirpath, name)):
                    raise errors.ToolError("INTERNAL_ERROR")
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            rel_dir = os.path.relpath(dirpath, root)
            rules = walk.IgnoreRules().descend(root, "")
            for name in filenames:
                rel = name if rel_dir == "." else f"{rel_dir}/{name}"
                if name.startswith(".") or rules.ignored(rel, False) or any(
                        rules.ignored(rel.rsplit("/", i)[0], True) for i in range(1, rel.count("/") + 1)):
                    continue
                out.append((rel, os.path.join(dirpath, name)))  # a file symlink is read through
        return sorted(out)
    walk.walk_files = walk_files
    walk.read_bytes = lambda path, limit=walk.MAX_FILE_BYTES: Path(path).read_bytes()[:limit]  # follows links

    def never_truncated(roots, args, result, truncated):
        return result, False
    _wrap_tool("search", never_truncated)
    original_descend = walk.IgnoreRules.descend

    def root_gitignore_only(self, dir_path, prefix, has_gitignore=True):
        return original_descend(self, dir_path, prefix, has_gitignore) if not prefix else self
    walk.IgnoreRules.descend = root_gitignore_only

@mutant("RT-ENV-002", profile="retrieval-tools")
def rt_plain_text_validation_error():
    """A missing or mistyped argument comes back as the plain-text validation message an SDK's
    typed tool parameters give by default (MCPServer), not the structured error."""
    original = server.to_result

    def to_result(outcome):
        details = outcome.body.get("error", {}).get("details", {}) if outcome.is_error else {}
        if outcome.code == "INVALID_ARGUMENT" and details.get("reason") != "unexpected_field":
            text = (f"Error executing tool: 1 validation error for arguments\n{details.get('field', 'arguments')}\n"
                    f"  Input should be valid [type={details.get('reason')}]")
            return server.types.CallToolResult(content=[server.types.TextContent(type="text", text=text)],
                                               is_error=True)
        return original(outcome)
    server.to_result = to_result


@mutant("RT-ENV-002", profile="retrieval-tools")
def rt_list_dir_crashes_on_a_non_string_path():
    """list_dir does not check that `path` is a string, so a number crashes it; the catch-all
    answers with a well-formed INTERNAL_ERROR ("Internal error"), as the public seed-003
    server answers with INTERNAL_ERROR "Unhandled error". A crash is not the structured error."""
    original = tools.parse_arguments

    def parse_arguments(tool, arguments):
        if tool == "list_dir" and isinstance(arguments, dict) and not isinstance(arguments.get("path", ""), str):
            parsed = original(tool, {k: v for k, v in arguments.items() if k != "path"})
            return dict(parsed, path=arguments["path"])
        return original(tool, arguments)
    tools.parse_arguments = parse_arguments


def _root_gitignore_only():
    original_descend = walk.IgnoreRules.descend

    def descend(self, dir_path, prefix, has_gitignore=True):
        return original_descend(self, dir_path, prefix, has_gitignore) if not prefix else self
    walk.IgnoreRules.descend = descend


@variant(profile="retrieval-tools")
def rt_variant_casefold_order_root_gitignore():
    """Not a defect: search orders paths case-insensitively (a-lower.md before B-upper.md), also
    a lexicographic order; and only the root's .gitignore is read (nested ones are the advisory
    RT-VIS-005). The suite must pass it by default (tests/test_variants.py)."""
    original = walk.walk_files
    walk.walk_files = lambda root: sorted(original(root), key=lambda item: (item[0].casefold(), item[0]))
    _root_gitignore_only()


@mutant("RT-VIS-005", profile="retrieval-tools")
def rt_nested_gitignore_ignored():
    """Reads only the root's .gitignore: nested ones, and their negation, are not applied."""
    _root_gitignore_only()


@variant(profile="retrieval-tools")
def rt_variant_echoes_normalised_input():
    """Not a defect: every error's details carry the caller's own path, normalised (empty and
    `.` segments and a trailing slash removed, `..` kept): still the caller's input, not a leak
    (RT-OUT-002). The suite must pass it, default and --strict (tests/test_variants.py)."""
    original = server.call_tool

    def call_tool(roots, name, arguments):
        outcome = original(roots, name, arguments)
        raw = arguments.get("path") if isinstance(arguments, dict) else None
        if outcome.is_error and isinstance(raw, str) and "/" in raw:
            kept = "/".join(seg for seg in raw.split("/") if seg not in ("", "."))
            outcome.body["error"]["details"]["path"] = ("/" if raw.startswith("/") else "") + kept
        return outcome
    server.call_tool = call_tool


@variant(profile="retrieval-tools")
def rt_variant_lines_and_reasons():
    """Not a defect: choices seed 003 leaves open in how lines, truncation and paths are read
    (tests/test_variants.py).

    - lines split on LF only: a CRLF line keeps its CR, and a final newline adds an empty line;
    - meta.truncated is set whenever `limit` matches came back (more may or may not follow);
    - an absolute path is read as root-relative (so `/x/outside` is missing, not refused; `/`
      alone is refused);
    - a symlink is treated as absent: a path through one is missing, wherever it points;
    - the error object is bare, {code, message, details}, not wrapped in {"error": ...}.
    """
    walk.split_lines = lambda text: text.split("\n")
    errors.ToolError.body = lambda self: {"code": self.code, "message": self.message, "details": dict(self.details)}

    def at_limit(roots, args, result, truncated):
        return result, truncated or len(result["matches"]) >= args["limit"]
    _wrap_tool("search", at_limit)
    original_normalize = tools.normalize

    def normalize(raw, repo, *, allow_root=False):
        if isinstance(raw, str) and raw.startswith("/") and raw.strip("/"):  # "/" alone is still refused
            raw = raw.lstrip("/")
        return original_normalize(raw, repo, allow_root=allow_root)
    tools.normalize = normalize
    import threading
    original_resolve = tools.resolve
    missing = threading.local()  # the code of "missing" for the tool running on this thread

    def resolve(root_real, relative, repo):
        probe = root_real
        for part in relative.split("/") if relative else []:
            probe = probe / part
            if probe.is_symlink():
                raise errors.ToolError(missing.code, field="path", repo=repo, reason="missing")
        return original_resolve(root_real, relative, repo)
    tools.resolve = resolve
    for name, (description, fn) in list(tools.TOOLS.items()):
        def run(roots, args, fn=fn, code="DIR_NOT_FOUND" if name == "list_dir" else "FILE_NOT_FOUND"):
            missing.code = code
            return fn(roots, args)
        tools.TOOLS[name] = (description, run)


# The names this variant uses for the parameters the seed leaves unnamed, and the reshaped
# results: what an independent implementation might well do.
_VARIANT_NAMES = {"search": {"q": "query", "max_results": "limit"}, "open_file": {"file": "path"},
                  "get_snippet": {"start": "start_line", "end": "end_line"}, "list_dir": {"dir": "path"}}
_VARIANT_CODES = {"FILE_NOT_FOUND": "ENOENT", "DIR_NOT_FOUND": "ENOENT", "FILE_UNREADABLE": "EACCES",
                  "DIR_UNREADABLE": "EACCES", "PATH_TRAVERSAL": "OUT_OF_ROOT", "PATH_INVALID": "OUT_OF_ROOT",
                  "PATH_OUTSIDE_ROOT": "OUT_OF_ROOT", "QUERY_EMPTY": "BAD_QUERY", "LIMIT_INVALID": "BAD_LIMIT",
                  "RANGE_INVALID": "BAD_RANGE", "INVALID_ARGUMENT": "BAD_ARGUMENT", "NOT_A_FILE": "NOT_FILE",
                  "NOT_A_DIRECTORY": "NOT_DIR"}


def _variant_schema(tool):
    schema = json.loads(json.dumps(tools.schema(f"{tool}.input")))
    props = schema.get("properties", {})
    for new, old in _VARIANT_NAMES.get(tool, {}).items():
        if old in props:
            props[new] = props.pop(old)
        schema["required"] = [new if r == old else r for r in schema.get("required", [])]
    schema.pop("additionalProperties", None)
    return schema


def _variant_reshape(tool, result):
    if tool == "search":
        return [{"path": m["path"], "line": m["line"], "preview": m["preview"]} for m in result["matches"]]
    if tool == "open_file":
        return {"content": [[entry["line"], entry["text"]] for entry in result["lines"]]}
    if tool == "get_snippet":
        return {"first": result["start_line"], "last": result["end_line"],
                "numbered": [{"n": entry["line"], "t": entry["text"]} for entry in result["lines"]]}
    return [e["path"] + ("/" if e["type"] == "dir" else "") for e in result["entries"]]


@variant(profile="retrieval-tools")
def rt_variant_open_choices():
    """Not a defect: every choice seed 003 leaves open, taken the other way (tests/test_variants.py).

    - other parameter names (q, max_results, file, start, end, dir), unknown arguments ignored;
    - other error codes (one per reason), as JSON-RPC errors whose data is the error document,
      with `details` a string;
    - an outputSchema of its own, loose about `result` (any shape), and structuredContent that
      conforms to it; no annotations;
    - results reshaped: search gives a list of {path, line, preview} (no repo), open_file
      [line, text] pairs, get_snippet {n, t} objects, list_dir path strings;
    - hidden and ignored files can be opened; a binary file opens as replaced text.
    """
    from mcp.shared.exceptions import MCPError

    original_call = tools.call_tool

    def call_tool(roots, name, arguments):
        if isinstance(arguments, dict) and name in _VARIANT_NAMES:
            known = set(_variant_schema(name).get("properties", {}))
            renamed = _VARIANT_NAMES[name]
            arguments = {renamed.get(k, k): v for k, v in arguments.items() if k in known}
        outcome = original_call(roots, name, arguments)
        if not outcome.is_error and name in _VARIANT_NAMES:
            outcome.body["result"] = _variant_reshape(name, outcome.body["result"])
        return outcome
    server.call_tool = call_tool

    def read_lines(roots, repo, relative):
        root = tools._check_root(roots, repo)
        real = tools.resolve(root, relative, repo)
        try:
            data = real.read_bytes()
        except IsADirectoryError:
            raise errors.ToolError("NOT_A_FILE", field="path") from None
        except OSError as exc:
            raise tools._not_found("FILE_NOT_FOUND", repo, exc) from None
        return walk.split_lines(data.decode("utf-8", "replace"))
    tools._read_lines = read_lines

    def to_result(outcome):
        if outcome.is_error:
            error = outcome.body["error"]
            code = _VARIANT_CODES.get(error["code"], error["code"])
            document = {"error": {"code": code, "message": error["message"], "details": "see docs/errors.md"}}
            raise MCPError(-32010, error["message"], document)
        text = json.dumps(outcome.body, ensure_ascii=False)
        return server.types.CallToolResult(content=[server.types.TextContent(type="text", text=text)],
                                           structured_content=outcome.body)
    server.to_result = to_result
    server.tool_list = lambda: [server.types.Tool(name=name, description=description,
                                                  input_schema=_variant_schema(name), output_schema=_VARIANT_OUTPUT)
                                for name, (description, _fn) in tools.TOOLS.items()]


# The variant's output schema: the envelope the seed fixes, and nothing about `result`'s shape.
_VARIANT_OUTPUT = {"type": "object", "required": ["result", "meta"],
                   "properties": {"result": {},
                                  "meta": {"type": "object", "required": ["repo", "duration_ms", "truncated"]}}}

if __name__ == "__main__":
    sys.exit(run("launch_retrieval_tools.py", server.main))
