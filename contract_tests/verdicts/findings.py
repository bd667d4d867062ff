"""What a failed check means: findings named by requirement (and case), advisories and
expected failures (the run's case selection and the running test are running.py's).

A check never fails "the test"; it fails a requirement, optionally for one case (a vector, an
attack, a tool and root). The plugin turns a test's findings into per-requirement verdicts:
`fail` for seed and MCP requirements, `advisory` for the profile's own reading unless
--strict, `xfail` where the implementer's expectations file lists the requirement or case.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

from _pytest.outcomes import Failed

from contract_tests.verdicts.running import SELECTION, _checked, own

# Exit status of a run whose server could not be started or did not answer initialize:
# distinct from pytest's 1 (conformance failures) and 2-5 (usage, internal errors).
EXIT_SERVER_UNUSABLE = 6
# No requirement failed, but a seed or MCP requirement (any, under --strict) could not be
# checked: a precondition it needs did not hold (blocked).
EXIT_BLOCKED = 7
# The suite's own code crashed: a bug in retrieval-contract, never evidence against the server.
EXIT_SUITE_ERROR = 8
# The run stopped talking to the server: it stopped answering (LIMITS.unanswered_limit requests
# in a row without an answer, or one request on a connection that was then refused the requests
# after it) or the run budget was spent; the checks that needed it were blocked.
EXIT_RUN_STOPPED = 9
XPASS = "xpass"
CONSOLE_CHARS = 300      # one finding on the console and in JUnit; results.json keeps EVIDENCE_CHARS
CONSOLE_LINES = 40       # findings shown per test on the console
TRACEBACK_CHARS = 6000


def requirement_status(verdicts: Counter, deselected: int, applies: bool, strict: bool) -> str:
    """One requirement's verdict from its tests' verdicts (pass, fail, advisory, xfail, skip,
    blocked, incomplete) and how many of its tests were deselected. The single place the rule
    lives: a run's report and a merge of shard reports both use it. A check that ran and failed
    is never n/a, and a requirement none of whose checks ran never reads pass."""
    if verdicts["fail"]:
        return "fail"
    if verdicts["advisory"]:
        return "fail" if strict else "advisory"
    if not applies:
        return "n/a"
    if verdicts["xfail"]:
        return "xfail"
    if verdicts["blocked"]:
        return "partial" if verdicts["pass"] else "blocked"
    if deselected or verdicts["incomplete"]:
        return "partial" if verdicts["pass"] else "not-run"
    if verdicts["pass"]:
        return "pass"
    if verdicts["skip"]:
        return "skip"
    return "not-run"


EXIT_MEANINGS = {
    0: "every requirement checked passed",
    1: "a requirement failed (or an expectations entry is stale or passed unexpectedly)",
    6: "the server under test is not usable: it did not start or did not answer initialize",
    7: "no requirement failed, but checks of seed or MCP requirements were blocked: a precondition they need "
       "did not hold, so they were not checked",
    8: "the suite itself crashed (a suite error): a bug in retrieval-contract, not evidence against the server",
    9: "the run stopped talking to the server (it stopped answering, or the run budget was spent): the checks "
       "that needed it were blocked",
}


class ServerFault(Exception):
    """The server did something that stops a test before any requirement could be judged: it
    could not be initialized, or it stopped answering. Server-side: never a suite error."""


def server_side(exc: BaseException | None) -> bool:
    """An exception that says something about the server (it did not answer, went away, sent
    what the SDK cannot parse, refused a connection), not about the suite's own code.

    A pydantic ValidationError is the server's only when it was raised while reading what the
    server sent (inside the MCP SDK or the suite's harness); anywhere else it is the suite's own
    model misused. `pytest.fail` is not used for server faults (ServerFault is), so a Failed
    that is not a RequirementFailure is the suite's."""
    if exc is None:
        return True
    from contract_tests.transport.process import FixtureSetupError
    from contract_tests.transport.stdio import NoResponse, ServerGone
    kinds: list[type] = [ServerFault, NoResponse, ServerGone, FixtureSetupError, TimeoutError, ConnectionError]
    try:
        from mcp.shared.exceptions import MCPError
        kinds.append(MCPError)
    except ImportError:  # pragma: no cover - the SDK is a dependency
        pass
    import httpx
    import pydantic
    kinds.append(httpx.HTTPError)
    if isinstance(exc, tuple(kinds)):
        return True
    return isinstance(exc, pydantic.ValidationError) and _raised_reading_the_server(exc)


# the suite's own talk with the server: its transports, and the fixture's stand-ins a server calls
_READERS = (f"{os.sep}mcp{os.sep}", f"{os.sep}contract_tests{os.sep}transport{os.sep}",
            f"{os.sep}contract_tests{os.sep}synthetic{os.sep}")


def _raised_reading_the_server(exc: BaseException) -> bool:
    """Whether the innermost frame outside pydantic that raised `exc` is in the SDK or the harness."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    ours = [f for f in frames if f"{os.sep}pydantic" not in f]
    return bool(ours) and any(reader in ours[-1] for reader in _READERS)


def exception_text(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def cap_lines(lines: list[str], limit: int = CONSOLE_LINES) -> list[str]:
    if len(lines) <= limit:
        return lines
    return lines[:limit] + [f"... and {len(lines) - limit} more findings (all of them in results.json)"]


def esc(text: Any, limit: int | None = None) -> str:
    """A printable, unambiguous rendering: invisible and non-ASCII space characters, controls
    and combining marks as \\uXXXX, so two different strings never print alike."""
    if not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False, default=str)
    if limit is not None and len(text) > limit:  # escape only what is shown (answers can be megabytes)
        return esc(text[:limit])[:limit] + f"... ({len(text)} chars)"
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch == "\\":
            out.append("\\\\")
        elif cat[0] in ("C", "Z", "M") and ch != " " or ch in "\ufeff\u200b":
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    rendered = "".join(out)
    if limit is not None and len(rendered) > limit:
        return rendered[:limit] + f"... ({len(rendered)} chars)"
    return rendered


def describe_call(tool: str, arguments: Any) -> str:
    """The exact request, ASCII-escaped JSON: `tools/call NAME {...}`."""
    return f"tools/call {tool} {json.dumps(arguments, ensure_ascii=True, sort_keys=True)}"


def difference(expected: str, actual: str, width: int = 30) -> str:
    """Where two strings first differ, showing both sides from that point (never two
    truncations of a common prefix that would print alike)."""
    i = next((n for n, (a, b) in enumerate(zip(expected, actual)) if a != b), min(len(expected), len(actual)))
    start = max(0, i - 10)
    lead = "..." if start else ""
    return (f"differ at character {i}: expected {lead}{esc(expected[start:i + width])!s}"
            f"{'...' if len(expected) > i + width else ''} | got {lead}{esc(actual[start:i + width])}"
            f"{'...' if len(actual) > i + width else ''}")


@dataclass(frozen=True)
class Finding:
    req: str
    message: str
    case: str | None = None
    request: str | None = None
    kind: str = "fail"  # fail, error (the server could not be reached), xpass (an expected case passed),
    #                     blocked (not checked: a precondition it needs did not hold)
    by: str | None = None  # for blocked: what blocked it, a requirement id ("ON-COLL-001") or a symptom

    def render(self, limit: int | None = None) -> str:
        """`[REQ] case: message` and the request; each part at most `limit` characters (the
        console and JUnit), the whole text without one (results.json caps it itself)."""
        def cut(text: str) -> str:
            return text if limit is None or len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"
        head = f"[{self.req}]" + (f" {self.case}:" if self.case else "")
        text = f"{head} {cut(self.message)}"
        if self.kind == "blocked":
            text = f"{head} not checked (blocked{f' by {self.by}' if self.by else ''}): {cut(self.message)}"
        if self.request:
            text += f"\n    request: {cut(self.request)}"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Finding":
        return cls(**data)


def blocked(why: str, *, req: str | None = None, by: str | None = None, request: str | None = None,
            case: str | None = None) -> "RequirementFailure":
    """Raise it when a check of `req` (the running test's own requirement unless named) cannot
    run because a precondition did not hold (`by`: the requirement whose check failed, e.g.
    "ON-COLL-001", or a short symptom). The requirement reads `blocked`, never `pass`; the test
    reports as skipped, naming the blocker."""
    return RequirementFailure([Finding(own(req), why, case, request, "blocked", by)])


class RequirementFailure(Failed):
    """A failure that names the requirement(s) it breaks; pytest treats it as pytest.fail."""

    def __init__(self, findings: Iterable[Finding]) -> None:
        self.findings = list(findings)
        super().__init__(msg="\n".join(f.render() for f in self.findings), pytrace=False)


class Findings:
    """Collect every failing case of a sweep, then fail once, listing all of them.

    `with Findings() as f:` raises RequirementFailure on leaving if anything was found. Every
    case checked is recorded: an expectations entry for a case that is checked and fails
    nowhere in the run is an unexpected pass (the report decides, over the whole run).
    """

    # Findings one test keeps in memory; past it they are counted per requirement, and one
    # finding says how many more there were (whatever a server sends, a sweep stays small).
    KEPT = 1_000
    MESSAGE_CHARS = 4_000

    def __init__(self) -> None:
        self.items: list[Finding] = []
        self._failed: set[tuple[str, str | None]] = set()
        self._dropped: Counter[tuple[str, str, str | None]] = Counter()

    def wants(self, case: str | None) -> bool:
        return SELECTION.wants(case)

    def _add(self, finding: Finding) -> None:
        if finding.kind == "fail":
            self._failed.add((finding.req, finding.case))
        if len(self.items) < self.KEPT:
            if len(finding.message) > self.MESSAGE_CHARS:
                finding = Finding(finding.req, finding.message[:self.MESSAGE_CHARS] + " [...]", finding.case,
                                  finding.request, finding.kind, finding.by)
            self.items.append(finding)
        else:
            self._dropped[finding.req, finding.kind, finding.by] += 1

    def check(self, condition: Any, message: str, *, req: str | None = None, case: str | None = None,
              request: str | None = None) -> bool:
        """Whether `condition` held; if not, a finding against `req` (by default the running
        test's own requirement: a test that cites one names it once, in its `req` mark)."""
        req = own(req)
        _checked(req, case)
        if condition:
            return True
        self._add(Finding(req, message, case, request))
        return False

    def held(self, *, req: str | None = None, case: str | None = None) -> None:
        """A sweep that files each failure as it finds it (`fail`) has now examined all its
        evidence (the listing it obtained, every line it read): a check of `req` ran. Call it
        only after the evidence was in hand, never instead of reading it; a requirement none
        of whose checks ran never reads pass (tests/test_reference.py holds every run to it)."""
        _checked(own(req), case)

    def fail(self, message: str, *, req: str | None = None, case: str | None = None,
             request: str | None = None) -> None:
        req = own(req)
        _checked(req, case)
        self._add(Finding(req, message, case, request))

    def block(self, why: str, *, req: str | None = None, by: str | None = None, case: str | None = None,
              request: str | None = None) -> None:
        """`req` (or one case of it) could not be checked: a precondition did not hold."""
        self._add(Finding(own(req), why, case, request, "blocked", by))

    def failed(self, req: str | None = None, case: str | None = None) -> bool:
        kept = ((f.req, f.case) for f in self.items if f.kind == "fail")  # some callers extend items
        return any((req is None or r == req) and (case is None or c == case) for r, c in (*self._failed, *kept))

    def close(self) -> None:
        for (req, kind, by), count in sorted(self._dropped.items(), key=str):
            self.items.append(Finding(req, f"... and {count:,} more findings not kept (the suite keeps "
                                           f"{self.KEPT:,} per test)", None, None, kind, by))
        self._dropped.clear()
        if self.items:
            failure = RequirementFailure(self.items)
            failure.complete = True  # raised after every check of the block ran
            raise failure

    def __enter__(self) -> "Findings":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        elif self.items and isinstance(exc, Exception) and not isinstance(exc, RequirementFailure):
            # The sweep was cut short (the server stopped answering, a message too large): what
            # it found before stays a finding; the plugin reads it off the exception.
            try:
                exc.rc_findings = [*getattr(exc, "rc_findings", []), *self.items]
            except AttributeError:
                pass


@contextmanager
def one_case(findings: Findings, case: str, request: str | None = None, *,
             req: str | None = None) -> Iterator[None]:
    """Run one case of a sweep (of `req`, by default the running test's requirement); a
    RequirementFailure inside it becomes findings of that case and the sweep goes on. A request
    inside it that gets no answer is that case's (see `asking`)."""
    _checked(own(req), case)
    try:
        with asking(req, case):
            yield
    except RequirementFailure as failure:
        for f in failure.findings:
            findings.items.append(Finding(f.req, f.message, f.case or case, f.request or request, f.kind, f.by))


JSON_RPC_RESPONSE = ("JSON-RPC 2.0, which MCP messages MUST follow: 'When a rpc call is made, the Server MUST reply "
                     "with a Response'")


@contextmanager
def asking(req: str | None = None, case: str | None = None) -> Iterator[None]:
    """The requests inside test `req` (by default the running test's one requirement) for `case`:
    one that gets no answer is a finding of theirs (`unanswered`), not of every requirement the
    test cites. The innermost `asking` names it."""
    try:
        yield
    except TimeoutError as exc:
        if hasattr(exc, "full_wait") and getattr(exc, "rc_req", None) is None:
            exc.rc_req, exc.rc_case = own(req), case
        raise


def unanswered(exc: BaseException, req: str | None, case: str | None = None) -> Finding | None:
    """The finding a request left unanswered makes, or None where it is no evidence.

    A request that waited its whole deadline, sent to a server that had answered the requests
    before it on that connection, and got no answer breaks `req`, the requirement that request
    tests: every request gets a response (JSON-RPC 2.0), and a refusal is an answer, so a hang on
    an attack is a finding, never "not checked". A request to a server that had answered nothing
    yet (it never came up), or one whose wait the breaker cut short, is not: the run's health
    stop reports those."""
    if req is None or not getattr(exc, "full_wait", False) or getattr(exc, "answered_before", 0) < 1:
        return None
    count = exc.answered_before
    return Finding(req, f"{exc}: no answer, though the server had answered the {count} request{'s' if count > 1 else ''} "
                        f"before it ({JSON_RPC_RESPONSE})", case, getattr(exc, "request", None))


@dataclass
class Verdict:
    """A test's findings sorted by what they mean for the run."""
    failing: list[Finding] = field(default_factory=list)
    advisory: list[Finding] = field(default_factory=list)
    expected: list[Finding] = field(default_factory=list)
    blocked: list[Finding] = field(default_factory=list)


def classify(findings: Iterable[Finding], advisory_reqs: set[str], strict: bool) -> Verdict:
    verdict = Verdict()
    for f in findings:
        if f.kind == "blocked":
            verdict.blocked.append(f)
        elif f.kind != XPASS and SELECTION.expected(f.req, f.case):
            verdict.expected.append(f)
        elif f.req in advisory_reqs and not strict:
            verdict.advisory.append(f)
        else:
            verdict.failing.append(f)
    return verdict
