"""Helpers shared by the retrieval-tools test modules: calls in the profile's names, the
envelope and the lists the seed describes, found wherever the server puts them."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from contract_tests.contracts.specs import validator
from contract_tests.implementation import calls as target_calls
from contract_tests.implementation.names import entry_paths, find_list, numbered
from contract_tests.retrieval_tools import PROFILES
from contract_tests.synthetic.roots import REPOS
from contract_tests.transport.limits import patience
from contract_tests.verdicts.checks import called_ok, error_code, schema_errors, structured_error
from contract_tests.verdicts.findings import Finding, Findings, RequirementFailure, esc
from contract_tests.verdicts.running import _checked, own

PROFILE, = PROFILES  # the folder's one profile
profiles_mark = pytest.mark.profiles(PROFILE)
TOOLS = ("search", "open_file", "get_snippet", "list_dir")
ENVELOPE = "RT-ENV-002"  # every failure is a structured error: the one owner of an error's form

# An error that reports the server's own failure, not what was wrong with the request: a code
# naming an internal or unhandled error, a message saying so or carrying a runtime's exception
# text, or JSON-RPC's internal error. Every failure the suite provokes is the caller's (a bad
# argument, path, range or repo), so such an error identifies no reason (SC-004).
CRASH_CODE_WORDS = frozenset({"INTERNAL", "UNHANDLED", "UNCAUGHT"})
CRASH_TEXT = re.compile(r"\bunhandled\b|\buncaught\b|\binternal (?:server )?error\b|Traceback \(most recent call last\)"
                        r"|\bis not a function\b|\bcannot read propert(?:y|ies) of\b|\bhas no attribute\b", re.I)
JSONRPC_INTERNAL_ERROR = -32603


def crash(response: dict[str, Any], document: Any, code: str | None) -> str | None:
    """How an error reports the server's own crash (what to quote), or None."""
    error = response.get("error")
    if isinstance(error, dict) and error.get("code") == JSONRPC_INTERNAL_ERROR:
        return f"JSON-RPC internal error {JSONRPC_INTERNAL_ERROR}"
    if isinstance(code, str):
        words = set(re.split(r"[^A-Z0-9]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", code).upper()))
        if words & CRASH_CODE_WORDS:
            return f"code {esc(code, 80)}"
    inner = document.get("error") if isinstance(document, dict) and isinstance(document.get("error"), dict) \
        else document
    if isinstance(inner, dict):
        text = f"{inner.get('message', '')} {json.dumps(inner.get('details', ''), ensure_ascii=False, default=str)}"
        found = CRASH_TEXT.search(text)
        if found:
            return f"{esc(found.group(0), 80)!s} in its message or details"
    return None


def crash_findings(what: str, why: str, request: str, req: str, case: str | None = None) -> list[Finding]:
    """A crash reported as the structured error: RT-ENV-002's finding; `req`'s check, which
    needs the structured error, is blocked by it."""
    found = [Finding(ENVELOPE, f"{what}: the error reports the server's own failure ({why}), not a structured "
                               "error identifying what was wrong with the request", case, request)]
    if req != ENVELOPE:
        found.append(Finding(req, f"{what}: the error reports a crash", case, request, "blocked", ENVELOPE))
    return found


class Calls(target_calls.Calls):
    """One server, spoken to in the profile's names; every assertion names the request."""

    def __init__(self, server, names, profile) -> None:
        super().__init__(server, profile, names)

    def accept(self, tool: str, body: Any, request: str, req: str) -> dict[str, Any]:
        """A success is the shared envelope (RT-ENV-001's schema)."""
        errors = schema_errors(validator(self.profile.data["schemas"]["outputs"][tool]), body)
        if errors:
            raise RequirementFailure([_finding(f"not the shared envelope: {errors[:2]}", request, req=req)])
        return body

    def error(self, tool: str, arguments: dict[str, Any], what: str, *,
              req: str | None = None) -> tuple[str | None, Any, str]:
        """Assert the call fails (else `req` fails) with a structured error on an accepted
        channel; return (code, document, request). A malformed error is RT-ENV-002's finding
        (the structured-error requirement), and leaves the rest of `req` blocked by it."""
        req = own(req)
        response, request = self.raw(tool, arguments)
        return (*self.judge_error(response, what, request, req=req), request)

    def judge_error(self, response: dict[str, Any], what: str, request: str, *,
                    req: str | None = None) -> tuple[str | None, Any]:
        req = own(req)
        if called_ok(response):
            raise RequirementFailure([_finding(f"{what}: succeeded; it must fail", request, req=req)])
        _checked(req, None)  # the check that the call fails ran, and held
        try:
            document = structured_error(response, self.profile, what, req=ENVELOPE, request=request)
        except RequirementFailure as exc:
            if req == ENVELOPE:
                raise
            raise RequirementFailure(exc.findings + [Finding(req, f"{what}: the error could not be read", None,
                                                             request, "blocked", ENVELOPE)]) from None
        code = error_code(document, self.profile)
        why = crash(response, document, code)
        if why:
            raise RequirementFailure(crash_findings(what, why, request, req))
        return code, document

    def listing(self, tool: str, arguments: dict[str, Any], name: str, *, req: str | None = None) -> list[Any]:
        """The list `name` (search.matches, open_file.lines, ...) of a successful call."""
        req = own(req)
        envelope = self.ok(tool, arguments, req=req)
        found = find_list(self.profile, name, envelope)
        if found is None:
            request = self.describe(tool, arguments)
            raise RequirementFailure([_finding(f"cannot find {name} in the result (tried "
                                               f"{self.profile.data['outputs'][name]}); declare it", request,
                                               req="RT-TOOL-003"),
                                      _finding(f"{name} not found: not checked", request, "blocked", req=req)])
        return found

    def matches(self, arguments: dict[str, Any], *, req: str | None = None) -> list[dict[str, Any]]:
        req = own(req)
        return self.listing("search", arguments, "search.matches", req=req)

    def lines(self, tool: str, arguments: dict[str, Any], *, req: str | None = None) -> list[tuple[int, str]]:
        req = own(req)
        items = self.listing(tool, arguments, f"{tool}.lines", req=req)
        got = numbered(items)
        if got is None:
            request = self.describe(tool, arguments)
            raise RequirementFailure([_finding(f"the lines are not numbered lines: {esc(items[:2], 200)}",
                                               request, req=req)])
        return got

    def entries(self, arguments: dict[str, Any], *, req: str | None = None) -> list[str]:
        req = own(req)
        items = self.listing("list_dir", arguments, "list_dir.entries", req=req)
        got = entry_paths(items)
        if got is None:
            request = self.describe("list_dir", arguments)
            raise RequirementFailure([_finding(f"entries carry no path: {esc(items[:2], 200)}", request, req=req)])
        return got


def _finding(message, request, kind="fail", *, req: str | None = None):
    return Finding(own(req), message, None, request, kind)


def start_with_roots(own_servers, fixture, root_name, bad_value, *, prefix=None):
    """Start the server with one root spoiled (None: the variable unset) and its stdin closed;
    return the finished process (killed after 1.5 request timeouts, 30 s by default: one that kept
    running)."""
    placeholder = root_name.lower()
    if bad_value is None and "{" + placeholder + "}" in (own_servers.command("server") or ""):
        pytest.skip(f"the server command passes {{{placeholder}}} itself; the variable cannot be left unset")
    values = {placeholder: bad_value} if bad_value is not None else {}
    return own_servers.run(fixture, "server", values=values, env_drop=(root_name,) if bad_value is None else (),
                       prefix=prefix, input="", timeout=patience(1.5))


def started(proc) -> str | None:
    """How a server that should have refused to start did not: it exited 0, or was still
    running 30 s after its stdin closed (killed then, returncode None). None: it refused."""
    if proc.returncode is None:
        return "it was still running 30 s after its stdin closed"
    return f"it exited {proc.returncode}" if proc.returncode == 0 else None


def names_the_root(text: str, root_name: str, value: str | None) -> bool:
    """An explicit message about a root: it names the variable, the repo (docs, code) or the
    configured path."""
    lowered = text.lower()
    repo = root_name.split("_")[0].lower()
    return root_name.lower() in lowered or repo in lowered or bool(value and value.lower() in lowered)


__all__ = ["Calls", "ENVELOPE", "Findings", "crash", "crash_findings", "start_with_roots", "started", "names_the_root",
           "profiles_mark", "TOOLS", "PROFILE"]


# --- what search and open_file should answer on a fixture --------------------------------

def match_pairs(matches):
    return [(m.get("path"), m.get("line")) for m in matches]


# "relative path (lexicographic)" (FR-002) names no collation: by code point, or case-insensitively
# (ties by code point), are both lexicographic orders. A "natural" order (a2 before a10) is not.
PATH_ORDERS = {"code point": None, "case-insensitive": lambda path: (path.casefold(), path)}


def expected_matches(fixture, query, repo="both", order=None, *, nested=True):
    """Expected (path, line) pairs; without `nested`, files a nested .gitignore decides on are
    left out (seed checks accept them shown or not: RT-VIS-005)."""
    skip = set() if nested else {p for r in REPOS for p in fixture.nested_paths(r)}
    return [(path, line) for _repo, path, line in fixture.expected_matches(query, repo, order) if path not in skip]


def without_nested(fixture, pairs):
    skip = {p for r in REPOS for p in fixture.nested_paths(r)}
    return [pair for pair in pairs if not (isinstance(pair[0], str) and pair[0] in skip)]


def first_difference(got, want) -> str:
    i = next((n for n, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return (f"first difference at match {i}: got {esc(got[i:i + 2])}, expected {esc(want[i:i + 2])} "
            f"({len(got)} matches, expected {len(want)})")


def as_file_lines(got: list[tuple[int, str]], spec) -> list[tuple[int, str]]:
    """Numbered lines as the fixture counts them. Seed 003 does not say how a file splits into
    lines: a CR kept at the end of a CRLF line, and one empty line counted after the final
    newline (a plain split on LF), are accepted (the empty line is the advisory RT-OPEN-003's)."""
    lines = [(n, t[:-1] if isinstance(t, str) and t.endswith("\r") else t) for n, t in got]
    want = len(spec.lines())
    if (not spec.data or spec.data.endswith(b"\n")) and lines[want:] == [(want + 1, "")]:
        lines = lines[:want]
    return lines
