"""One sweep of a mapped file server: a plain call of every mapped tool, then every path of the
attack corpus and the fixture's own traps, in root-relative and absolute forms, through every
mapped path argument, and searches for the words of the files outside. The tests judge the
calls; nothing here decides a verdict."""

from __future__ import annotations

import copy
import json
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

from contract_tests.contracts.mapping import PathArgument, denial_forms, path_arguments, put, ready_seconds
from contract_tests.contracts.specs import policy
from contract_tests.synthetic.corpus import attack_path
from contract_tests.synthetic.files import (
    ESCAPE_LINKS,
    OUTSIDE_SIZE,
    OUTSIDE_WORD,
    PLAIN_FILE,
    PLAIN_SIZE,
    FilesFixture,
)
from contract_tests.transport import progress
from contract_tests.transport.limits import patience
from contract_tests.transport.stdio import NoResponse, ServerGone, ServerStopped
from contract_tests.verdicts.checks import json_pointer, short, texts
from contract_tests.verdicts.findings import describe_call, esc

# Missing paths beside the corpus: a read must not fall back to another file for them.
MISSING = [
    {"id": "missing-file", "category": "missing", "path": "no-such-dir-rc/missing-rc.md"},
    {"id": "missing-sibling-name", "category": "missing", "path": "inbox/example.md.bak"},
    {"id": "missing-prefix-name", "category": "missing", "path": "inbox/exam"},
    {"id": "missing-dir", "category": "missing", "path": "no-such-dir-rc"},
]
PLAIN_DIR = "inbox"
PLAIN_QUERIES = ("example", "*example*")  # a plain search: a word of PLAIN_FILE, or a glob of its name
# What a search asks for when it probes for an escape, through its path argument or on its own:
# the outside files' own word, in their text and in the names of those named after the canary (the
# canary is not in the query, so an answer that echoes the query is no escape); the glob for a tool
# that matched the plain file only by a glob of its name.
OUTSIDE_QUERIES = (OUTSIDE_WORD, f"*{OUTSIDE_WORD}*")
_OUTSIDE_SIZE = re.compile(rf"(?<![\w.]){OUTSIDE_SIZE}(?![\w.])")
_PLAIN_SIZE = re.compile(rf"(?<![\w.]){PLAIN_SIZE}(?![\w.])")
_ESCAPE_LINK = re.compile("|".join(re.escape(link.rpartition("/")[2]) for link in ESCAPE_LINKS))
CANARY_PIECE = 10  # random characters of the outside canary that count as a piece of it
RANDOM_PART = 12  # the canary's random hex digits (harness/files.token)


def reveals_outside(text: str, fixture: FilesFixture, probe: "Probe | None") -> bool:
    """Whether an answer carries something of a file outside the root: the outside canary (in the
    files' text and in the names of those named after it), or a piece of it (a snippet that starts
    inside it), or, for a path naming something outside, the outside files' byte size (a stat
    that answered for one)."""
    if canary_piece(text, fixture.canaries["outside"]):
        return True
    return probe is not None and probe.kind == "outside" and bool(_OUTSIDE_SIZE.search(text))


def canary_piece(text: str, canary: str, size: int = CANARY_PIECE) -> str | None:
    """The first run of `size` characters of the canary's random part found in `text` (the whole
    canary, or the piece a snippet cut out of it), or None. No file inside the root, no request
    and no path of the fixture holds one, and `size` random hex digits do not occur by chance
    (16**-10 a place)."""
    lowered = text.lower()
    random = canary[-RANDOM_PART:].lower()
    for start in range(len(random) - size + 1):
        if random[start:start + size] in lowered:
            return random[start:start + size]
    return None


def names_an_escape_link(text: str) -> bool:
    """Whether an answer names one of the root's links out (links/escape-file.md, escape-dir,
    prefix-file.md, prefix-dir): a search for the outside files' own word that names one found
    the word in the file outside the link leads to."""
    return bool(_ESCAPE_LINK.search(text))


def reached(call: "Call", fixture: FilesFixture) -> bool:
    """Whether a plain call shows the tool read the plain file or its folder through its path: a
    read returned its content, a list or a search named it, a stat answered with its token (in
    its heading) or its byte size. Only such a tool could show an outside file's content."""
    token = f"rcf{fixture.file_token(PLAIN_FILE)}"
    if call.role == "stat":
        return token in call.text or bool(_PLAIN_SIZE.search(call.text))
    return {"read": token in call.text, "list": "example.md" in call.text}.get(call.role, finds_plain(call.text, fixture))


def finds_plain(text: str, fixture: FilesFixture) -> bool:
    """Whether a search's answer found PLAIN_FILE: names it, or carries its text."""
    return "example.md" in text or f"rcf{fixture.file_token(PLAIN_FILE)}" in text


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
    answer: str = "answered"    # answered | no-answer | gone (the server exited on it) | not-sent (the run
    #                             or the connection had stopped: the case was never tried)
    error: BaseException | None = None  # why there is no answer (NoResponse, ServerGone, ServerStopped)

    @property
    def answered(self) -> bool:
        return self.answer == "answered"

    @property
    def tests(self) -> str:
        """The requirement this call tests, whose finding it is when the server leaves it
        unanswered: a plain call GF-TOOL-001's; a path naming content outside the root, and a
        search for the outside files' words, GF-ESC-001's; a path naming nothing, GF-DENY-001's
        (no answer is no denial); any other path GF-TOOL-001's (a path the server serves)."""
        if self.probe is None:
            return "GF-TOOL-001" if self.case == "plain" or self.case.startswith("plain@") else "GF-ESC-001"
        return {"outside": "GF-ESC-001", "missing": "GF-DENY-001"}.get(self.probe.kind, "GF-TOOL-001")


@dataclass
class Sweep:
    plain: dict[str, Call] = field(default_factory=dict)   # tool -> its plain call
    calls: list[Call] = field(default_factory=list)        # attacks and searches
    stderr: list[str] = field(default_factory=list)        # what the server wrote meanwhile
    stdout: list[str] = field(default_factory=list)        # the messages it sent (stdio: every line)
    changes: list[str] = field(default_factory=list)       # the fixture after the run, vs before
    compared: int = 0                                       # entries the before/after comparison covered
    listed: list[str] = field(default_factory=list)        # tools/list's names
    schemas: dict[str, Any] = field(default_factory=dict)  # tool -> the outputSchema it declares


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


def caller(server: Any, mapping: dict[str, Any]):
    """A function that makes one mapped call and records it as a Call, answered or not."""
    def call(tool: str, role: str, label: str, case: str, args: dict[str, Any], probe: Probe | None,
             timeout: float | None = None) -> Call:
        # Every case is recorded, answered or not: what the server answered before it stopped is
        # judged, the case it left unanswered is the finding of the requirement it tests, and the
        # cases after the stop (not sent: the connection sends nothing more) are blocked.
        answer, error = "answered", None
        try:
            response = server.call_tool(tool, args, timeout=timeout) if timeout else server.call_tool(tool, args)
        except NoResponse as exc:
            answer, error, response = "no-answer", exc, {"rc_no_answer": str(exc)}
        except ServerGone as exc:
            answer, error, response = ("not-sent" if exc.earlier else "gone"), exc, {"rc_no_answer": str(exc)}
        except ServerStopped as exc:
            answer, error, response = "not-sent", exc, {"rc_no_answer": str(exc)}
        denied = answer == "answered" and is_denial(response, denial_forms(mapping, tool))
        return Call(tool, role, label, case, describe_call(tool, args), response,
                    json.dumps(response, ensure_ascii=False), denied, probe, answer, error)
    return call


def plain_calls(server: Any, fixture: FilesFixture, mapping: dict[str, Any], style: str,
                timeout: float | None = None) -> dict[str, Call]:
    """A plain call of each mapped tool inside the root, its paths in `style` (relative or
    absolute): a read of PLAIN_FILE, a list (and a search) of PLAIN_DIR; each waits `timeout`
    (default: the request timeout)."""
    base = caller(server, mapping)

    def call(*args: Any) -> Call:
        return base(*args, timeout=timeout)
    out: dict[str, Call] = {}
    for tool in mapping["tools"]:
        args = copy.deepcopy(tool.get("arguments", {}))
        target = PLAIN_DIR if tool["role"] in ("list", "search") else PLAIN_FILE
        for key in ("path", "paths"):
            if key in tool:
                args = put(args, tool[key], plain_path(fixture, style, target) if key == "path"
                           else [plain_path(fixture, style, target)])
        if "query" in tool:
            # A word of the plain file's name and text; a search that matches names by glob finds
            # it only as `*example*`: the second is tried when the first finds nothing.
            plain = call(tool["name"], tool["role"], tool["name"], "plain", put(args, tool["query"], PLAIN_QUERIES[0]),
                         None)
            if plain.answered and not finds_plain(plain.text, fixture):
                second = call(tool["name"], tool["role"], tool["name"], "plain",
                              put(args, tool["query"], PLAIN_QUERIES[1]), None)
                plain = second if not second.answered or finds_plain(second.text, fixture) else plain
            out[tool["name"]] = plain
            continue
        out[tool["name"]] = call(tool["name"], tool["role"], tool["name"], "plain", args, None)
    return out


def broken_tools(plain: dict[str, Call], listed: list[Any], fixture: FilesFixture) -> dict[str, str]:
    """Mapped tools whose plain call did not do what the mapping says, with why."""
    out = {}
    token = f"rcf{fixture.file_token(PLAIN_FILE)}"
    for name, call in plain.items():
        if not call.answered:
            out[name] = f"a plain call got no answer: {call.error}"
        elif name not in listed:
            out[name] = f"{name} is not listed by tools/list (listed: {esc(sorted(map(str, listed))[:20])})"
        elif call.denied:
            out[name] = f"a plain call was answered as a denial: {short(call.response, 300)}"
        elif call.role == "read" and token not in call.text:
            out[name] = f"a read of {PLAIN_FILE} did not return its content: {short(call.response, 300)}"
        elif call.role == "list" and "example.md" not in call.text:
            out[name] = f"a list of inbox/ did not name example.md: {short(call.response, 300)}"
        elif call.role == "search" and not finds_plain(call.text, fixture):
            out[name] = (f"a search for {' or '.join(map(repr, PLAIN_QUERIES))} did not find {PLAIN_FILE} (its name "
                         f"or its text): {short(call.response, 300)}")
    return out


def run_sweep(server: Any, fixture: FilesFixture, mapping: dict[str, Any]) -> Sweep:
    style = mapping["paths"]
    sweep = Sweep()
    listing = server.request("tools/list", {}).get("result") or {}
    sweep.listed = [t.get("name") for t in listing.get("tools", []) if isinstance(t, dict)]
    sweep.schemas = {t["name"]: t["outputSchema"] for t in listing.get("tools", [])
                     if isinstance(t, dict) and isinstance(t.get("name"), str) and "outputSchema" in t}
    arguments = path_arguments(mapping)
    call = caller(server, mapping)
    sweep.plain = ready_calls(server, fixture, mapping, style, sweep.listed)
    corpus = probes(fixture)  # what each path names, read once, before the server is asked anything
    total = len(arguments) * len(corpus)
    for argument in arguments:
        for probe in corpus:
            progress.note("generic-files sweep", len(sweep.calls), total)
            args = _with_query(sweep, mapping, argument, argument.arguments(probe.path))
            sweep.calls.append(call(argument.tool, argument.role, argument.label,
                                    f"{probe.id}:{probe.form}@{argument.label}", args, probe))
    progress.note("generic-files sweep", total, total)
    for tool in mapping["tools"]:
        if "query" in tool:
            args = put(copy.deepcopy(tool.get("arguments", {})), tool["query"], outside_query(sweep.plain[tool["name"]]))
            sweep.calls.append(call(tool["name"], tool["role"], f"{tool['name']}.{tool['query']}",
                                    f"outside-text@{tool['name']}", args, None))
    return sweep


def ready_calls(server: Any, fixture: FilesFixture, mapping: dict[str, Any], style: str,
                listed: list[Any]) -> dict[str, Call]:
    """The plain calls the sweep judges. With the mapping's `ready.seconds` (a server that indexes
    before it serves), the first round waits up to that long for each answer, and the round is
    repeated, a second apart, until every mapped tool serves its plain call or the time is spent:
    the last round is judged. Without it, one round under the request timeout."""
    seconds = ready_seconds(mapping)
    if not seconds:
        return plain_calls(server, fixture, mapping, style)
    deadline = time.monotonic() + seconds
    plain = plain_calls(server, fixture, mapping, style, timeout=max(seconds, patience()))
    while (broken_tools(plain, listed, fixture) and all(call.answered for call in plain.values())
           and time.monotonic() + 1 < deadline):
        time.sleep(1)
        plain = plain_calls(server, fixture, mapping, style, timeout=max(1.0, deadline - time.monotonic()))
    return plain


def outside_query(plain: Call) -> str:
    """The query a search asks for the outside files with: their word, or its glob where the plain
    call found the plain file only by the glob of its name."""
    return OUTSIDE_QUERIES[1] if PLAIN_QUERIES[1] in plain.request else OUTSIDE_QUERIES[0]


def _with_query(sweep: Sweep, mapping: dict[str, Any], argument: PathArgument,
                args: dict[str, Any]) -> dict[str, Any]:
    """A search tool's path probe carries a query too: the outside files' word, so a search that
    runs where the path escapes to names or quotes them."""
    for tool in mapping["tools"]:
        if tool["name"] == argument.tool and "query" in tool:
            return put(args, tool["query"], outside_query(sweep.plain[tool["name"]]))
    return args
