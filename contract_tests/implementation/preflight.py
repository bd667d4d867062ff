"""Preflight: start the server under test once before any test, and stop the run in seconds
with one message when it cannot start or does not answer initialize.

Without it a server that cannot start gets every test, each failing with a traceback, and
the same exit status as a real conformance failure.
"""

from __future__ import annotations

import json
import shlex
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract_tests.contracts.mapping import ready_seconds
from contract_tests.implementation.sessions import connect
from contract_tests.implementation.subject import Subject
from contract_tests.synthetic.fixtures import build_for
from contract_tests.transport.limits import patience
from contract_tests.transport.process import FixtureSetupError
from contract_tests.transport.stdio import BadAnswer, MessageTooLarge, NoResponse, ServerGone, ServerStopped
from contract_tests.verdicts.findings import esc

# What a server can do to a preflight request: not answer, go away, answer too much or not in
# JSON-RPC (OSError: it could not be started or reached; ValueError: it sent what is not MCP).
SERVER_FAULTS = (OSError, ValueError, NoResponse, ServerGone, ServerStopped, MessageTooLarge, BadAnswer)


# The first initialize waits for the server's start-up too: 20 s, or the request timeout when
# --request-timeout gives more. The preflight's other requests wait the request timeout, as
# every request of the run does.
INITIALIZE_TIMEOUT_S = 20.0
TAIL_LINES = 20


def initialize_timeout(state: Subject | None = None) -> float:
    """20 s, the request timeout, or a mapping's `ready.seconds` (a server that indexes before
    it answers), whichever is longest."""
    ready = ready_seconds(state.mapping) if state is not None else 0.0
    return max(INITIALIZE_TIMEOUT_S, patience(), ready)


@dataclass
class Preflight:
    ok: bool
    command: str
    seconds: float
    server_info: dict[str, Any] = field(default_factory=dict)
    protocol_version: str | None = None
    capabilities: list[str] = field(default_factory=list)
    problem: str = ""
    exit_status: int | None = None
    stderr_tail: list[str] = field(default_factory=list)
    stray_stdout: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "VERSION: how initialize answered it"
    warnings: list[str] = field(default_factory=list)
    refused_version: bool = False  # this attempt's initialize was answered, but not with a version offered
    tools: list[dict[str, Any]] = field(default_factory=list)  # tools/list, when --mapping auto needs it

    def describe(self) -> str:
        """One line for the report header."""
        if not self.ok:
            return f"did not start: {self.problem}"
        info = self.server_info
        return (f"{info.get('name', '?')} {info.get('version', '?')}, protocol {self.protocol_version or '?'}, "
                f"capabilities: {', '.join(self.capabilities) or 'none'}")

    def message(self) -> str:
        """Everything a user needs to see why the server never became usable."""
        lines = [f"retrieval-contract: the server under test is not usable: {self.problem}",
                 f"  command: {self.command}"]
        if self.exit_status is not None:
            lines.append(f"  exit status: {self.exit_status}")
        lines.append(f"  server stderr (last {TAIL_LINES} lines):" if self.stderr_tail else "  server stderr: (empty)")
        lines += [f"    {esc(line, 300)}" for line in self.stderr_tail]
        if self.stray_stdout:
            lines.append("  stdout lines that are not MCP messages:")
            lines += [f"    {esc(line, 300)}" for line in self.stray_stdout[:TAIL_LINES]]
        if self.refused:
            lines.append("  initialize was refused for every protocol version offered:")
            lines += [f"    {esc(line, 300)}" for line in self.refused]
            lines.append("No test was run. If the server speaks another version, give it with --protocol-version "
                         "(or fix its version negotiation) and run again.")
        else:
            lines.append("No test was run. Fix the start-up and run again.")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def _stray(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        try:
            message = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            out.append(line)
    return out


def run(state: Subject, settings: dict[str, Any]) -> Preflight:
    """Start the target on a fresh fixture and negotiate a protocol version: offer each version
    the run may speak (--protocol-version, else the profile's allowed versions, newest first),
    on a fresh server each time, until one initialize succeeds."""
    started = time.monotonic()
    command = state.server_url or state.command
    versions = [state.protocol_version_given] if state.protocol_version_given else state.profile.protocol_versions
    refused: list[str] = []
    with tempfile.TemporaryDirectory(prefix="rc-preflight-") as tmp:
        try:
            fixture = build_for(state.profile, Path(tmp) / "fixture", settings)
        except FixtureSetupError as exc:  # e.g. the implementation's own index command failed
            return Preflight(ok=False, command=exc.command or command, seconds=time.monotonic() - started,
                             problem=exc.problem, exit_status=exc.exit_status, stderr_tail=exc.stderr_tail[-TAIL_LINES:])
        try:
            for n, version in enumerate(versions):
                outcome = _attempt(state, fixture, Path(tmp) / f"home-{n}", version, command, started)
                if isinstance(outcome, Preflight):
                    if outcome.ok or not outcome.refused_version:
                        outcome.refused = refused
                        if not outcome.ok:  # a usable server's warnings came with it (_attempt)
                            outcome.warnings = warnings(state, fixture)
                        return outcome
                    refused.append(f"{version}: {outcome.problem}")
                    last = outcome
            last.problem = ("initialize was refused for every protocol version offered "
                            f"({', '.join(versions)})")
            last.refused = refused
            return last
        finally:
            close = getattr(fixture, "close", None)
            if close:
                close()


def _attempt(state: Subject, fixture: Any, home: Path, version: str, command: str,
             started: float) -> Preflight:
    server = None
    try:
        home.mkdir()
        try:
            server = connect(state, fixture, home)
            command = shlex.join(getattr(server, "argv", None) or [command])
            response = server.initialize(version, timeout=initialize_timeout(state))
        except SERVER_FAULTS as exc:
            response = {"rc_problem": str(getattr(exc, "strerror", None) or exc) or type(exc).__name__}
        result = response.get("result") if isinstance(response, dict) else None
        answered = result.get("protocolVersion") if isinstance(result, dict) else None
        if isinstance(result, dict) and answered in state.profile.protocol_versions + [version]:
            return Preflight(ok=True, command=command, seconds=time.monotonic() - started,
                             server_info=result.get("serverInfo") or {}, protocol_version=answered,
                             capabilities=sorted(result.get("capabilities") or {}),
                             warnings=warnings(state, fixture, server),
                             tools=tools_of(server) if state.mapping_source == "auto" else [])
        problem = response.get("rc_problem") if isinstance(response, dict) else None
        refused_version = False
        if isinstance(result, dict):
            problem, refused_version = f"initialize answered version {esc(answered, 60)}, not one offered", True
        elif not problem:
            error = response.get("error") if isinstance(response, dict) else None
            problem = f"initialize answered an error: {esc(error, 300)}" if error else "initialize got no answer"
            refused_version = bool(error)
        status = None
        if server is not None and server.proc is not None:
            server.close(timeout=3)
            status = server.proc.returncode
        transcript = server.transcript if server is not None else None
        outcome = Preflight(ok=False, command=command, seconds=time.monotonic() - started, problem=problem,
                            exit_status=status,
                            stderr_tail=list(transcript.stderr[-TAIL_LINES:]) if transcript else [],
                            stray_stdout=_stray(list(transcript.stdout)) if transcript else [])
        outcome.refused_version = refused_version
        return outcome
    finally:
        if server is not None and server.alive():
            server.close(timeout=3)


def tools_of(server: Any) -> list[dict[str, Any]]:
    """The server's tools/list (every page), for --mapping auto to propose a mapping from."""
    tools: list[dict[str, Any]] = []
    cursor = None
    for _page in range(50):
        try:
            response = server.request("tools/list", {"cursor": cursor} if cursor else {},
                                      timeout=patience())
        except SERVER_FAULTS:
            break
        result = response.get("result") if isinstance(response, dict) else None
        if not isinstance(result, dict):
            break
        tools += [t for t in result.get("tools") or [] if isinstance(t, dict)]
        cursor = result.get("nextCursor")
        if not cursor:
            break
    return tools


def warnings(state: Subject, fixture: Any, server: Any = None) -> list[str]:
    """What the user should know before the verdicts: a --server-cmd that takes none of the
    fixture's placeholders (the server cannot see the suite's data), or one of another profile;
    and, given the started `server`, a fixture it does not serve (the profile's preflight calls)."""
    out = _reach(state, server) if server is not None else []
    if not state.server_cmd:
        return out
    from contract_tests.contracts import specs as contracts
    own = set(state.profile.data.get("placeholders", {}))
    data_placeholders = {p for p in own if p not in GENERIC_PLACEHOLDERS}
    by_environment = any(p in str(v) for v in state.profile.data.get("environment", {}).values() for p in own)
    if data_placeholders and not by_environment and not any(p in state.server_cmd for p in data_placeholders):
        out.append(f"--server-cmd takes none of the profile's fixture placeholders ({', '.join(sorted(data_placeholders))}): "
                   "the server cannot be serving the suite's fixture, so most checks will fail or be blocked")
    foreign = set()
    for other in contracts.available_profiles():
        if other != state.profile.id:
            foreign |= set(contracts.load_profile(other).data.get("placeholders", {}))
    foreign -= own | GENERIC_PLACEHOLDERS
    wrong = sorted(p for p in foreign if p in state.server_cmd)
    if wrong:
        out.append(f"--server-cmd holds {', '.join(wrong)}, a placeholder of another profile, not of "
                   f"{state.profile.id}: it stays unreplaced")
    return out


def _reach(state: Subject, server: Any) -> list[str]:
    """The profile's preflight calls on the started server: one warning per call that failed or
    whose result lacks a value the spec expects (e.g. open-notebook's collections, listed and
    entered), naming the call and what came back."""
    from contract_tests.verdicts.checks import called_ok, payload, short, texts, values_at
    from contract_tests.verdicts.findings import RequirementFailure
    spec = state.profile.data.get("preflight") or {}
    out = []
    for call in spec.get("calls", []):
        request = f"{call['tool']} {json.dumps(call['arguments'], ensure_ascii=False)}"
        try:
            response = server.call_tool(call["tool"], call["arguments"], timeout=patience())
        except SERVER_FAULTS as exc:
            response = {"rc_problem": str(exc) or type(exc).__name__}
        problem = None
        if "rc_problem" in response:
            problem = f"got no answer ({esc(response['rc_problem'], 200)})"
        elif not called_ok(response):
            result = response.get("result") or {}
            said = texts(result)
            problem = f"failed: {short(response.get('error') or (said[0] if len(said) == 1 else result), 300)}"
        else:
            try:
                body = payload(response["result"], req="preflight")
            except RequirementFailure:
                body = None  # no JSON document: every expected value is missing
            for pointer, wanted in call.get("expect", {}).items():
                found = values_at(body, pointer)
                missing = [w for w in wanted if w not in found]
                if missing:
                    problem = (f"gave {short(found, 200)} at {pointer}, not {', '.join(missing)} "
                               "(the fixture's)")
                    break
        if problem:
            then = f"will be blocked by {call['blocks']}" if call.get("blocks") else "will fail or be blocked"
            out.append(f"after start-up, {request} {problem}: the server does not seem to serve the suite's "
                       f"fixture, so the checks that need it {then}" + (f"; {spec['hint']}" if spec.get("hint") else ""))
    return out


GENERIC_PLACEHOLDERS = {"{python}", "{port}", "{phase}"}
