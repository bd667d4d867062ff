"""`--mapping auto`: a draft mapping (schemas/mapping.schema.json, without `server`) from a
server's tools/list alone. Pure: no I/O, no SDK. Every decision becomes a note for the user to
review; `confident` is False wherever auto had to guess.

Write verbs are matched before read verbs (edit_file and *_patch_content carry read-ish words),
and annotations (untrusted hints) only break ties between candidates of one role."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

WRITE_VERBS = {"write", "create", "put", "append", "patch", "edit", "replace", "update", "save", "delete",
               "remove", "move", "rename", "copy", "mkdir", "insert", "manage", "add", "set", "upsert", "touch"}
SIDE_EFFECT_VERBS = {"ingest", "reindex", "sync", "import", "upload", "embed"}
WRITE_ARGS = {"content", "body", "edits", "oldtext", "newtext", "dryrun", "text"}
EXECUTE_WORDS = {"execute", "exec", "command", "run", "shell", "eval", "ui"}
MEDIA_WORDS = {"media", "image", "images", "audio", "video", "picture", "photo", "binary"}
READ_VERBS = {"read", "get", "cat", "view", "open", "fetch", "load", "show"}
READ_NOUNS = {"file", "files", "note", "notes", "content", "contents", "document", "documents", "doc", "docs",
              "text", "page", "pages"}
LIST_VERBS = {"list", "ls", "tree", "browse", "readdir", "listing"}
DIR_NOUNS = {"dir", "directory", "directories", "folder", "folders"}
SEARCH_VERBS = {"search", "find", "grep", "query", "match", "lookup"}
STAT_WORDS = {"info", "stat", "stats", "metadata", "exists", "frontmatter", "attributes"}
ROOTS_TEXT = re.compile(r"allowed (director|path|root)|\broots\b|\bvaults\b|base ?dir|base director|workspace folders")
# argument names, compared lower-cased without _ or -: filePath, file_path and filepath are one name
PATH_NAMES = ["path", "filepath", "notepath", "docpath", "relativepath", "file", "filename", "note", "notename",
              "dirpath", "directory", "dir", "folder", "target"]
PATHS_NAMES = ["paths", "filepaths", "files", "filenames", "notes", "notepaths"]
SCOPE_NAMES = PATH_NAMES + ["scope", "pathprefix", "prefix", "subfolder", "subdir", "under", "within"]
QUERY_NAMES = ["query", "q", "pattern", "term", "search", "searchquery", "searchterm", "regex", "keyword",
               "keywords", "glob", "text"]
NAME_ONLY = {"filename", "file", "note", "notename"}  # may refuse separators: the folder part may sit beside
FOLDER_NAMES = {"folder", "dir", "directory", "dirpath", "subfolder"}
PER_ITEM = re.compile(r"individual|per[- ](item|file)|won'?t stop|will not stop|inline|each (file|note)", re.I)
ITEM_DENIAL = r"(?i)\berror\b|access denied|forbidden|not allowed"
SLOT_WORDS = {"read": READ_VERBS | READ_NOUNS, "read-many": READ_VERBS | READ_NOUNS,
              "list": LIST_VERBS | DIR_NOUNS | READ_VERBS, "search": SEARCH_VERBS, "stat": STAT_WORDS}
SLOTS = tuple(SLOT_WORDS)


@dataclass
class Proposal:
    mapping: dict
    notes: list[str] = field(default_factory=list)
    confident: bool = True


@dataclass
class _Candidate:
    tool: dict
    entry: dict
    notes: list[str]
    doubt: bool  # a guess in the entry itself (path from a description, a value auto could not choose)
    rank: tuple


def _words(name: str) -> list[str]:
    parts = re.split(r"[^A-Za-z0-9]+", name)
    return [w.lower() for p in parts for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", p)]


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _schema(tool: dict) -> dict:
    return tool.get("inputSchema") or tool.get("input_schema") or {}


def _variants(schema: dict) -> list[dict]:
    return [schema] + [v for k in ("oneOf", "anyOf") for v in schema.get(k, []) if isinstance(v, dict)]


def _accepts(schema: dict, kind: str) -> bool:
    for v in _variants(schema):
        types = v.get("type") if isinstance(v.get("type"), list) else [v.get("type")]
        if kind == "string" and "string" in types:
            return True
        if kind == "strings" and "array" in types and _accepts(v.get("items") or {}, "string"):
            return True
    return False


def _find(props: dict, names: list[str], kind: str, skip: set[str] = frozenset()) -> str | None:
    found = {_norm(k): k for k, s in props.items() if k not in skip and _accepts(s, kind)}
    return next((found[n] for n in names if n in found), None)


def _nested_path(props: dict) -> tuple[str, dict, str] | None:
    """A path inside an object argument behind a const/enum discriminator: (pointer, fixed, outer)."""
    for outer, schema in props.items():
        for v in _variants(schema):
            inner = v.get("properties") or {}
            name = _find(inner, PATH_NAMES, "string")
            fixed = {k: s["const"] if "const" in s else s["enum"][0] for k, s in inner.items()
                     if k != name and ("const" in s or len(s.get("enum", [])) == 1)}
            if name and fixed:
                return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in (outer, name)), \
                    {outer: fixed}, outer
    return None


def _listed_path(props: dict) -> tuple[str, dict] | None:
    """A path inside a list of objects (`files: [{path, ...}]`): (pointer to the first item's path,
    the fixed item fields its schema pins with a const, a one-value enum or a default)."""
    for outer, schema in props.items():
        for v in _variants(schema):
            types = v.get("type") if isinstance(v.get("type"), list) else [v.get("type")]
            item = v.get("items") if isinstance(v.get("items"), dict) else {}
            inner = item.get("properties") or {}
            name = _find(inner, PATH_NAMES, "string") if "array" in types else None
            if not name:
                continue
            fixed = {k: s["const"] if "const" in s else s["enum"][0] if len(s.get("enum", [])) == 1 else s["default"]
                     for k, s in inner.items()
                     if k != name and ("const" in s or len(s.get("enum", [])) == 1 or "default" in s)}
            pointer = "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in (outer, "0", name))
            return pointer, {outer: [fixed]} if fixed else {}
    return None


def _path_argument(tool: dict, notes: list[str]) -> tuple[str, str, dict, bool] | None:
    """(kind, argument, fixed arguments, guessed) for the argument carrying a path, or None."""
    props = _schema(tool).get("properties") or {}
    name = _find(props, PATH_NAMES, "string")
    if name:
        folder = next((k for k in props if _norm(k) in FOLDER_NAMES and k != name), None)
        if _norm(name) in NAME_ONLY and folder:
            notes.append(f"path: '{name}' names the file, so it is the path argument (the mapping takes one); "
                         f"'{folder}' carries the directory part and is not probed: a traversal through "
                         f"'{folder}' goes untested")
            return "path", name, {}, True
        return "path", name, {}, False
    many = _find(props, PATHS_NAMES, "strings")
    if many:
        return "paths", many, {}, False
    listed = _listed_path(props)
    if listed:
        pointer, fixed = listed
        notes.append(f"path: inside a list of objects, at {pointer} (each probe is sent as a one-item list)"
                     + (f", with fixed item fields {fixed}" if fixed else ""))
        return "path", pointer, fixed, False
    nested = _nested_path(props)
    if nested:
        pointer, fixed, _ = nested
        notes.append(f"path: nested at {pointer}, sent with fixed {fixed}")
        return "path", pointer, fixed, False
    desc = re.compile(r"\b(path|file|directory|folder)\b", re.I)
    for kind in ("string", "strings"):
        for k, s in props.items():
            if _norm(k) not in QUERY_NAMES and _accepts(s, kind) and desc.search(s.get("description", "")):
                notes.append(f"path: '{k}' guessed from its description alone")
                return ("path" if kind == "string" else "paths"), k, {}, True
    return None


def _fill_required(tool: dict, used: set[str], fixed: dict, notes: list[str]) -> bool:
    """Fixed values for required arguments with no path meaning; False when one has none auto can choose."""
    schema, ok = _schema(tool), True
    for k in schema.get("required", []):
        s = (schema.get("properties") or {}).get(k, {})
        if k in used or k in fixed:
            continue
        if "const" in s or "default" in s:
            fixed[k] = s["const"] if "const" in s else s["default"]
        elif s.get("enum"):
            fixed[k] = s["enum"][0]
            notes.append(f"arguments.{k} = {fixed[k]!r}, the first value of its enum: check it")
        else:
            ok = False
            notes.append(f"required argument '{k}' has no value auto can choose: add it under arguments")
    return ok


def _deprecated(tool: dict) -> bool:
    return "deprecated" in (tool.get("description") or "").lower()


def _skip_reason(tool: dict, words: set[str], props: dict) -> str | None:
    args = {_norm(k) for k in props}
    if words & WRITE_VERBS:
        return f"never mapped: writes (verb '{sorted(words & WRITE_VERBS)[0]}')"
    if words & SIDE_EFFECT_VERBS:
        return "left out: a read with a side effect (it writes an index or state); not a plain read"
    hits = args & WRITE_ARGS - ({"text"} if words & SEARCH_VERBS else set())
    if hits or {"source", "destination"} <= args:
        return f"never mapped: writes (argument '{sorted(hits)[0] if hits else 'source+destination'}')"
    if words & EXECUTE_WORDS:
        return "left out: executes a command or drives a UI; never called"
    if words & MEDIA_WORDS:
        return "left out: a media reader (base64 output; any file:// URI in it names the absolute path)"
    return None


def _slot(tool: dict, words: set[str], props: dict, notes: list[str]) -> str | None:
    text = " ".join(_words(tool["name"])) + " " + (tool.get("description") or "").lower()
    path_like = {_norm(k) for k in props} & set(PATH_NAMES + PATHS_NAMES)
    if not _schema(tool).get("required") and not path_like and ROOTS_TEXT.search(text):
        return "roots"
    if words & STAT_WORDS:
        return "stat"
    if words & LIST_VERBS or (words & DIR_NOUNS and words & READ_VERBS):
        return "list"
    if words & SEARCH_VERBS:
        if _find(props, QUERY_NAMES, "string"):
            return "search"
        named = [k for k in props if _norm(k) in QUERY_NAMES]
        notes.append(f"search-like, but its query argument '{named[0]}' is not a string" if named
                     else "search-like, but no argument named like a query (query, pattern, q, term...)")
        return None
    if words & READ_VERBS and (words & READ_NOUNS or words <= READ_VERBS):
        return "read"
    return None


def _candidate(tool: dict, slot: str, notes: list[str]) -> tuple[str, _Candidate] | None:
    props = _schema(tool).get("properties") or {}
    entry: dict = {"name": tool["name"], "role": "read" if slot == "read-many" else slot}
    fixed, used, doubt = {}, set(), False
    if slot == "search":
        entry["query"] = _find(props, QUERY_NAMES, "string")
        scope = _find(props, SCOPE_NAMES, "string", skip={entry["query"]})
        if scope:
            entry["path"] = scope
            notes.append(f"search query '{entry['query']}'; '{scope}' beside it is probed as a path too")
        used = {entry["query"], scope}
    else:
        found = _path_argument(tool, notes)
        if found is None:
            notes.append(f"looks like a {slot} tool but has no path argument: left out")
            return None
        kind, arg, fixed, doubt = found
        if slot == "read" and kind == "paths":
            slot = "read-many"
        elif kind == "paths" and slot != "read":
            notes.append(f"a {slot} tool taking a list of paths: left out")
            return None
        entry[kind] = arg
        used = {arg.split("/")[1] if arg.startswith("/") else arg}
    doubt |= not _fill_required(tool, used, fixed, notes)
    if fixed:
        entry["arguments"] = fixed
    if slot == "read-many" and PER_ITEM.search(tool.get("description") or ""):
        entry["denial"] = ["is_error", "jsonrpc", {"text": ITEM_DENIAL}]
        notes.append(f"per-item failures come back inside a normal result: denial text /{ITEM_DENIAL}/ "
                     "is a guess; check it against a real refusal")
    recursive = bool({"tree", "recursive"} & set(_words(tool["name"])))
    rank = (-_deprecated(tool), -recursive, -doubt, -(len(props) - len(used - {None})), -len(_words(tool["name"])))
    return slot, _Candidate(tool, entry, notes, doubt, rank)


def _described(tool: dict, arg: str | None) -> list[str]:
    """The descriptions of the argument a name or pointer reaches (through oneOf/anyOf variants)."""
    found = [{"properties": _schema(tool).get("properties") or {}}]
    for part in (arg.split("/")[1:] if arg and arg.startswith("/") else [arg] if arg else []):
        found = [v["properties"][part] for f in found for v in _variants(f) if part in (v.get("properties") or {})]
    return [str(f.get("description", "")) for f in found] if arg else []


def _style(chosen: list[_Candidate], notes: list[str]) -> tuple[str, bool]:
    votes = {}
    for c in chosen:
        text = " ".join([c.tool.get("description") or "", *_described(c.tool, c.entry.get("path")),
                         *_described(c.tool, c.entry.get("paths"))]).lower()
        rel, ab = bool(re.search(r"\brelative\b", text)), bool(re.search(r"\babsolute\b", text))
        if rel and ab:
            rel, ab = bool(re.search(r"\b(not|never|no)\s+(an?\s+)?absolute", text)), \
                      bool(re.search(r"\b(not|never|no)\s+(an?\s+)?relative", text))
        if rel != ab:
            votes[c.entry["name"]] = "relative" if rel else "absolute"
    styles = set(votes.values())
    if len(styles) == 1:
        style = styles.pop()
        notes.append(f"paths: {style} (descriptions of {', '.join(sorted(votes))} say so)")
        return style, True
    if styles:
        notes.append(f"paths: both: the descriptions disagree ({votes}); check which forms the server takes")
        return "both", False
    notes.append("paths: both: no description says relative or absolute, so probe both forms")
    return "both", True


def propose(tools: list[dict], root: str | None = None) -> Proposal:
    """A draft mapping for a server with these tools (the `tools` array of its tools/list result)."""
    notes: list[str] = []
    confident = True
    slots: dict[str, list[_Candidate]] = {s: [] for s in SLOTS}
    roots: list[str] = []
    for tool in tools:
        name, own = tool["name"], []
        props = _schema(tool).get("properties") or {}
        words = set(_words(name))
        if root and root in (tool.get("description") or ""):
            notes.append(f"{name}: its description in tools/list already names the root")
        reason = _skip_reason(tool, words, props)
        slot = None if reason else _slot(tool, words, props, own)
        if slot == "roots":
            roots.append(name)
            own.append("discloses the root by design (no path argument; names the allowed roots): "
                       "listed under discloses_root, not probed")
        elif slot:
            found = _candidate(tool, slot, own)
            if found:
                slots[found[0]].append(found[1])
                continue
        if reason or not own:
            own.append(reason or "left out: no read, list, search or stat role recognised")
        notes.extend(f"{name}: {n}" for n in own)
    # Every candidate of every role is mapped: an escaping directory_tree beside a safe
    # list_directory is an escape all the same, so each tool that reads, lists, searches or stats
    # is probed (the trial before the sweep leaves out any that serves no plain call).
    chosen: list[_Candidate] = []
    for slot in SLOTS:
        by_name = sorted(slots[slot], key=lambda c: c.tool["name"])
        ranked = sorted(by_name, key=lambda c: (c.rank, (c.tool.get("annotations") or {}).get("readOnlyHint") is True),
                        reverse=True)  # stable: on equal rank and hint, name order
        for candidate in ranked:
            chosen.append(candidate)
            argument = ", ".join(f"{k}: {candidate.entry[k]}" for k in ("path", "paths", "query")
                                 if k in candidate.entry)
            why = "+".join(w for w in _words(candidate.tool["name"]) if w in SLOT_WORDS[slot])
            notes.append(f"{candidate.entry['name']}: mapped as a {slot} tool (name says {why}; {argument})")
            notes.extend(f"{candidate.entry['name']}: {n}" for n in candidate.notes)
            alone = all(_deprecated(other.tool) for other in ranked)
            if _deprecated(candidate.tool):
                notes.append(f"{candidate.entry['name']}: DEPRECATED: probed all the same (an old tool that "
                             "still answers is still reachable); the trial leaves it out if it serves nothing"
                             + (f"; no other {slot} tool: check it still works" if alone else ""))
            confident &= not candidate.doubt and not (alone and _deprecated(candidate.tool))
    missing = [s for s in ("read", "list") if not slots[s]]
    if missing and chosen:
        notes.append(f"no {' or '.join(missing)} tool found: the probes cover only the mapped tools")
    if chosen and not any(c.entry["role"] in ("read", "list") for c in chosen):
        # Only a read or a list shows an outside file's content or name: without one, no escape
        # check can pass (GF-ESC-001 reads blocked), and the proposal says so.
        notes.append("no read or list tool with a path argument: the escape checks cannot pass on this mapping")
        confident = False
    if not chosen:
        notes.append("no tool could be mapped: write the mapping by hand")
        confident = False
    style, sure = _style(chosen, notes)
    mapping: dict = {"paths": style, "tools": [c.entry for c in chosen], "denial": ["is_error", "jsonrpc"]}
    if roots:
        mapping["discloses_root"] = roots
    notes.append("denial: is_error and jsonrpc (tools/list cannot show how a refusal looks): check them "
                 "against a real refusal")
    return Proposal(mapping, notes, confident and sure)


def render(proposal: Proposal, server: dict | None = None) -> str:
    """The proposal as YAML, its notes as comments; with `server` it loads into a complete mapping."""
    left_out = sum(1 for note in proposal.notes if "no read, list, search or stat role recognised" in note)
    head = ["# proposed by --mapping auto (retrieval-contract map): review before use",
            "# confident: auto guessed nowhere in what it mapped" if proposal.confident
            else "# NOT confident: some choices below were guesses (see the notes)"]
    if left_out:
        head.append(f"# {left_out} listed tool(s) had no role auto recognised (see the notes): map any that reads, "
                    "lists, searches or stats by hand")
    if server is None:
        head.append("# add `server: {cmd: ...}`: how to start the server on {root}")
    head += ["#", "# notes:"] + [f"# - {n}".replace("\n", " ") for n in proposal.notes]
    doc = ({"server": server} if server is not None else {}) | proposal.mapping
    return "\n".join(head) + "\n" + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
