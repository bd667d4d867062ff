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
from typing import TYPE_CHECKING, Any

from .harness.adapter import FixtureSetupError
from .harness.fixtures import build_for
from .harness.stdio import NoResponse, ServerGone
from .servers import connect
from .verdicts import esc

if TYPE_CHECKING:
    from .plugin import SuiteState

INITIALIZE_TIMEOUT_S = 20.0
TAIL_LINES = 20


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


def run(state: "SuiteState", settings: dict[str, Any]) -> Preflight:
    """Start the target on a fresh fixture and send initialize."""
    started = time.monotonic()
    command = state.server_url or state.command
    with tempfile.TemporaryDirectory(prefix="rc-preflight-") as tmp:
        try:
            fixture = build_for(state.profile, Path(tmp) / "fixture", settings)
        except FixtureSetupError as exc:  # e.g. the implementation's own index command failed
            return Preflight(ok=False, command=exc.command or command, seconds=time.monotonic() - started,
                             problem=exc.problem, exit_status=exc.exit_status, stderr_tail=exc.stderr_tail[-TAIL_LINES:])
        server = None
        try:
            home = Path(tmp) / "home"
            home.mkdir()
            try:
                server = connect(state, fixture, home)
                command = shlex.join(getattr(server, "argv", None) or [command])
                response = server.initialize(timeout=INITIALIZE_TIMEOUT_S)
            except (OSError, ServerGone, NoResponse, ValueError) as exc:
                response = {"rc_problem": str(getattr(exc, "strerror", None) or exc) or type(exc).__name__}
            result = response.get("result") if isinstance(response, dict) else None
            if isinstance(result, dict):
                return Preflight(ok=True, command=command, seconds=time.monotonic() - started,
                                 server_info=result.get("serverInfo") or {},
                                 protocol_version=result.get("protocolVersion"),
                                 capabilities=sorted(result.get("capabilities") or {}))
            problem = response.get("rc_problem") if isinstance(response, dict) else None
            if not problem:
                error = response.get("error") if isinstance(response, dict) else None
                problem = f"initialize answered an error: {esc(error, 300)}" if error else "initialize got no answer"
            status = None
            if server is not None and server.proc is not None:
                server.close(timeout=3)
                status = server.proc.returncode
            transcript = server.transcript if server is not None else None
            return Preflight(ok=False, command=command, seconds=time.monotonic() - started, problem=problem,
                             exit_status=status,
                             stderr_tail=list(transcript.stderr[-TAIL_LINES:]) if transcript else [],
                             stray_stdout=_stray(list(transcript.stdout)) if transcript else [])
        finally:
            if server is not None and server.alive():
                server.close(timeout=3)
            close = getattr(fixture, "close", None)
            if close:
                close()
