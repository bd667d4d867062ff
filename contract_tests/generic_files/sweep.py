"""One sweep of a mapped file server: a plain call of every mapped tool, then every path of the
attack corpus and the fixture's own traps, in root-relative and absolute forms, through every
mapped path argument, and searches for the text of the files outside. The tests judge the
calls; nothing here decides a verdict."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from contract_tests.checks import json_pointer, texts
from contract_tests.contracts import policy
from contract_tests.harness.corpus import attack_path
from contract_tests.harness.files import COMMON_WORD, FilesFixture
from contract_tests.harness.stdio import NoResponse
from contract_tests.mapping import PathArgument, denial_forms, path_arguments, put
from contract_tests.verdicts import describe_call

# Missing paths beside the corpus: a read must not fall back to another file for them.
MISSING = [
    {"id": "missing-file", "category": "missing", "path": "no-such-dir-rc/missing-rc.md"},
    {"id": "missing-sibling-name", "category": "missing", "path": "inbox/example.md.bak"},
    {"id": "missing-prefix-name", "category": "missing", "path": "inbox/exam"},
    {"id": "missing-dir", "category": "missing", "path": "no-such-dir-rc"},
]
# What a search for the outside files' text looks for (their canary is not in the query, so an
# answer that echoes the query is no escape).
OUTSIDE_QUERY = "never be read"
PLAIN_FILE, PLAIN_DIR = "inbox/example.md", "inbox"


@dataclass
class Probe:
    id: str
    category: str
    path: str
    form: str                   # relative | absolute
    kind: str                   # inside | outside | missing (what the path names, read carefully)
    expected: frozenset[str] = frozenset()  # inside: the files whose content may come back
    link: bool = False          # names a symlink lying in the root: a stat or list may answer for the link


@dataclass
class Call:
    tool: str
    role: str
    label: str                  # tool.argument, or tool.query
    case: str
    request: str
    response: dict[str, Any]
    text: str                   # the whole response, as JSON
    denied: bool
    probe: Probe | None = None  # None for a plain call or a search


@dataclass
class Sweep:
    plain: dict[str, Call] = field(default_factory=dict)   # tool -> its plain call
    calls: list[Call] = field(default_factory=list)        # attacks and searches
    stderr: list[str] = field(default_factory=list)        # what the server wrote meanwhile
    changes: list[str] = field(default_factory=list)       # the fixture after the run, vs before
    listed: list[str] = field(default_factory=list)        # tools/list's names


def probes(fixture: FilesFixture) -> list[Probe]:
    """Every corpus and derived path, in each form: a root-relative path also absolute (the root
    joined to it); an absolute one as it is."""
    entries = policy("path-attacks.yaml")["paths"] + fixture.derived_attacks("vault") + MISSING
    served = str(fixture.served)
    out = []
    for entry in entries:
        path = attack_path(entry, fixture.attack_placeholders("vault"))
        forms = [("absolute", path)] if os.path.isabs(path) else [("relative", path), ("absolute", f"{served}/{path}")]
        for form, sent in forms:
            kind, files = fixture.readings(sent)
            out.append(Probe(entry["id"], entry.get("category", "missing"), sent, form, kind, frozenset(files),
                             fixture.names_a_link_inside(sent)))
    return out


def plain_path(fixture: FilesFixture, style: str, relative: str) -> str:
    return f"{fixture.served}/{relative}" if style == "absolute" else relative


def is_denial(response: dict[str, Any], forms: list[Any]) -> bool:
    """A JSON-RPC error, an isError result or an HTTP refusal always; a normal result when it
    takes a form the mapping declares (a value at a pointer, a text match); no answer, never."""
    result = response.get("result")
    if "rc_no_answer" in response:
        return False
    if not isinstance(result, dict) or result.get("isError") or "rc_http_status" in response:
        return True
    blocks = texts(result)
    for form in forms:
        if isinstance(form, dict) and "pointer" in form:
            document = result.get("structuredContent")
            if document is None and blocks:
                try:
                    document = json.loads(blocks[0])
                except ValueError:
                    document = None
            try:
                value = json_pointer(document, form["pointer"])
            except KeyError:
                continue
            if value not in (None, False, "", [], {}):
                return True
        elif isinstance(form, dict) and "text" in form and re.search(form["text"], "\n".join(blocks)):
            return True
    return False


def run_sweep(server: Any, fixture: FilesFixture, mapping: dict[str, Any]) -> Sweep:
    style = mapping["paths"]
    sweep = Sweep()
    listing = server.request("tools/list", {}).get("result") or {}
    sweep.listed = [t.get("name") for t in listing.get("tools", []) if isinstance(t, dict)]
    arguments = path_arguments(mapping)

    def call(tool: str, role: str, label: str, case: str, args: dict[str, Any], probe: Probe | None) -> Call:
        try:
            response = server.call_tool(tool, args)
        except NoResponse as exc:  # judged by no test; the connection's next request ends the sweep
            response = {"rc_no_answer": str(exc)}
        return Call(tool, role, label, case, describe_call(tool, args), response,
                    json.dumps(response, ensure_ascii=False), is_denial(response, denial_forms(mapping, tool)), probe)

    for tool in mapping["tools"]:
        args = dict(tool.get("arguments", {}))
        target = PLAIN_DIR if tool["role"] in ("list", "search") else PLAIN_FILE
        for key in ("path", "paths"):
            if key in tool:
                args = put(args, tool[key], plain_path(fixture, style, target) if key == "path"
                           else [plain_path(fixture, style, target)])
        if "query" in tool:
            args = put(args, tool["query"], "example")
        sweep.plain[tool["name"]] = call(tool["name"], tool["role"], tool["name"], "plain", args, None)
    corpus = probes(fixture)  # what each path names, read once, before the server is asked anything
    for argument in arguments:
        for probe in corpus:
            args = _with_query(mapping, argument, argument.arguments(probe.path))
            sweep.calls.append(call(argument.tool, argument.role, argument.label,
                                    f"{probe.id}:{probe.form}@{argument.label}", args, probe))
    for tool in mapping["tools"]:
        if "query" in tool:
            args = put(dict(tool.get("arguments", {})), tool["query"], OUTSIDE_QUERY)
            sweep.calls.append(call(tool["name"], tool["role"], f"{tool['name']}.{tool['query']}",
                                    f"outside-text@{tool['name']}", args, None))
    return sweep


def _with_query(mapping: dict[str, Any], argument: PathArgument, args: dict[str, Any]) -> dict[str, Any]:
    """A search tool's path probe carries a query too (one that any file matches)."""
    for tool in mapping["tools"]:
        if tool["name"] == argument.tool and "query" in tool:
            return put(args, tool["query"], COMMON_WORD)
    return args
