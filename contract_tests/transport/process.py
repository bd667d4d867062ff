"""Turn the user's --server-cmd into an argv, give a server a private environment, and run the
implementation's other commands (index, load, a refused start) within bounds: a deadline, and
at most LIMITS.max_kept_log_bytes characters kept of each output stream, read as it is written
(reader.read_lines: an over-long line is never assembled)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from contract_tests.transport.limits import HEALTH, LIMITS
from contract_tests.transport.reader import Oversize, chunks_of, read_lines


class FixtureSetupError(RuntimeError):
    """A fixture could not be made ready with the implementation's own command (e.g. building
    its index): the preflight reports it like a server that cannot start."""

    def __init__(self, problem: str, *, command: str = "", exit_status: int | None = None,
                 stderr_tail: list[str] | None = None) -> None:
        super().__init__(problem)
        self.problem, self.command, self.exit_status = problem, command, exit_status
        self.stderr_tail = list(stderr_tail or [])


def render_command(template: str, values: Mapping[str, str]) -> list[str]:
    """Split a command template like a POSIX shell, then fill {placeholders} per argument.

    Substituting after splitting keeps paths with spaces in one argument. A relative path to a
    file that exists where the suite runs is made absolute, since the server starts in a
    private working directory (so that files it writes there are seen).
    """
    values = {"python": sys.executable, **values}
    argv = []
    for arg in shlex.split(template):
        literal = not any("{" + key + "}" in arg for key in values)
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        argv.append(_anchored(arg) if literal else arg)
    if not argv:
        raise ValueError("empty server command")
    return argv


def _anchored(arg: str) -> str:
    """A relative path to an existing file (e.g. `server.py`, `dist/server.js`) made absolute:
    servers start in a private directory, but the command is written where the suite runs."""
    if arg.startswith("-") or os.path.isabs(arg) or not os.path.isfile(arg):
        return arg
    return os.path.abspath(arg)


def private_environment(home: Path) -> dict[str, str]:
    """The server's environment: the caller's, with HOME, XDG and temp dirs under `home`.

    Data-integrity checks then see any cache or sidecar the server writes.
    """
    env = dict(os.environ)
    dirs = {
        "HOME": home / "home",
        "XDG_CONFIG_HOME": home / "xdg-config",
        "XDG_CACHE_HOME": home / "xdg-cache",
        "XDG_DATA_HOME": home / "xdg-data",
        "XDG_STATE_HOME": home / "xdg-state",
        "TMPDIR": home / "tmp",
    }
    for key, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        env[key] = str(path)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # Any network attempt through a proxy-aware client goes nowhere.
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env[key] = "http://127.0.0.1:9"
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    return env


# -- the implementation's other commands, bounded ------------------------------------------------

@dataclass
class Finished:
    """How a command ended and what is kept of its output: per stream its first and its last
    lines, LIMITS.max_kept_log_bytes characters at most, each line cut at LIMITS.log_line_chars."""
    returncode: int | None   # None: it was killed at its timeout
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float
    dropped: str = ""        # what of the output was not kept ("" when all was)


class _Kept:
    """One stream's lines as they come: the first, up to half the budget, and the last, up to the
    other half (an error message is usually at the end); the lines between are only counted."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.budget = LIMITS.max_kept_log_bytes // 2
        self.head: list[str] = []
        self.tail: deque[tuple[str, int]] = deque()
        self.head_chars = self.tail_chars = 0
        self.head_full = False
        self.dropped_lines = self.dropped_bytes = self.cut = 0

    def line(self, raw: bytes) -> None:
        self._add(raw.decode("utf-8", "replace"), len(raw) + 1)

    def oversize(self, record: Oversize) -> None:
        self.cut += 1
        self._add(record.text(), record.size + 1)

    def _add(self, text: str, size: int) -> None:
        chars = len(text) + 1  # with its line end
        self.head_full = self.head_full or self.head_chars + chars > self.budget
        if not self.head_full:
            self.head.append(text)
            self.head_chars += chars
            return
        self.tail.append((text, size))
        self.tail_chars += chars
        while self.tail_chars > self.budget:
            old, old_size = self.tail.popleft()
            self.tail_chars -= len(old) + 1
            self.dropped_lines += 1
            self.dropped_bytes += old_size

    def note(self) -> str:
        parts = []
        if self.dropped_lines:
            parts.append(f"{self.dropped_lines:,} {self.name} lines ({self.dropped_bytes:,} bytes) between its first "
                         "and last lines not kept")
        if self.cut:
            parts.append(f"{self.cut:,} {self.name} lines over {LIMITS.log_line_chars:,} bytes kept cut")
        return "; ".join(parts)

    def text(self) -> str:
        gap = [f"[retrieval-contract: {self.dropped_lines:,} lines ({self.dropped_bytes:,} bytes) not kept]"]
        lines = self.head + (gap if self.dropped_lines else []) + [text for text, _ in self.tail]
        return "".join(line + "\n" for line in lines)


class Bounded:
    """A command running while its caller does something else, both pipes drained in the
    background as they are written (a chatty command never blocks on a full pipe), kept as _Kept
    says. It runs in a session of its own, so that kill() ends whatever it started too."""

    def __init__(self, argv: list[str], *, env: Mapping[str, str] | None, cwd: Path | str | None,
                 input: str | None = None, merge_stderr: bool = False, start_new_session: bool = True) -> None:
        self.argv, self.group, self.timed_out = argv, start_new_session, False
        self.cwd = Path(cwd) if cwd is not None else None
        self.started, self.ended = time.monotonic(), None
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                                     env=env, cwd=cwd, start_new_session=start_new_session)
        self.kept = {"stdout": _Kept("stdout"), "stderr": _Kept("stderr")}
        self._stop = threading.Event()
        pipes = {"stdout": self.proc.stdout, "stderr": None if merge_stderr else self.proc.stderr}
        self._readers = [threading.Thread(target=self._read, args=(pipe, self.kept[name]), daemon=True)
                         for name, pipe in pipes.items() if pipe is not None]
        if input is not None:
            threading.Thread(target=self._feed, args=(input.encode("utf-8"),), daemon=True).start()
        for thread in self._readers:
            thread.start()

    def _read(self, pipe, kept: _Kept) -> None:
        try:
            read_lines(chunks_of(pipe.fileno(), self._stop), lambda: LIMITS.log_line_chars, kept.line, kept.oversize,
                       lambda: [])
        finally:
            pipe.close()

    def _feed(self, data: bytes) -> None:
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.close()
        except OSError:
            pass

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def poll(self) -> int | None:
        code = self.proc.poll()
        if code is not None and self.ended is None:
            self.ended = time.monotonic()
        return code

    def wait(self, timeout: float) -> int | None:
        """The exit status, if it exits within `timeout` seconds; else it is killed (kill()),
        `timed_out` set, and None returned."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.timed_out = True
            self.kill()
            return None
        return self.poll()

    def kill(self, grace: float = 5.0) -> None:
        """SIGTERM to the command and its process group, SIGKILL after `grace` seconds to what
        is left of either; the command is reaped (no zombie is left)."""
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
        self._signal(signal.SIGKILL)
        self.proc.wait()
        self.poll()

    def _signal(self, sig: int) -> None:
        try:
            if self.group:
                os.killpg(self.proc.pid, sig)
            elif self.proc.poll() is None:
                self.proc.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    def finished(self, grace: float = 2.0) -> Finished:
        """What the ended command wrote (call after wait() or kill()). Pipes a process it left
        behind still holds are read for `grace` seconds more; then its group is killed and the
        reading stops, so no reader thread is left waiting."""
        deadline = time.monotonic() + grace
        for thread in self._readers:
            thread.join(max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in self._readers):
            self._signal(signal.SIGKILL)
            self._stop.set()
            for thread in self._readers:
                thread.join(5)
        out, err = self.kept["stdout"], self.kept["stderr"]
        return Finished(None if self.timed_out else self.proc.poll(), out.text(), err.text(), self.timed_out,
                        (self.ended or time.monotonic()) - self.started,
                        "; ".join(note for note in (out.note(), err.note()) if note))


def run_bounded(argv: list[str], *, env: Mapping[str, str] | None, cwd: Path | str | None, timeout: float,
                input: str | None = None, start_new_session: bool = True) -> Finished:
    """Run a command to its end, killed (with its process group) after `timeout` seconds; stdin
    is empty (or `input`); its output is kept as Bounded keeps it."""
    run = Bounded(argv, env=env, cwd=cwd, input=input, start_new_session=start_new_session)
    run.wait(timeout)
    return run.finished()


def run_role(role: str, argv: list[str], *, command: str, env: Mapping[str, str] | None,
             cwd: Path | str | None, timeout: float | None = None) -> Finished:
    """Run the implementation's `role` command (index, load) within `timeout` seconds (default
    LIMITS.command_timeout, --command-timeout). One that overran it raises FixtureSetupError, and
    is not run again in this process: a hanging command costs one timeout per worker, not one
    per fixture copy."""
    timeout = LIMITS.command_timeout if timeout is None else timeout
    earlier = HEALTH.hung_commands.get(role)
    if earlier is not None:
        raise FixtureSetupError(f"the {role} command did not finish within {earlier:g} s earlier in this run; "
                                "it is not run again", command=command)
    done = run_bounded(argv, env=env, cwd=cwd, timeout=timeout)
    if done.timed_out:
        HEALTH.command_hung(role, timeout)
        raise FixtureSetupError(f"the {role} command did not finish within {timeout:g} s (killed, with what it "
                                "started; --command-timeout sets the deadline)", command=command,
                                stderr_tail=(done.stderr + done.stdout).splitlines()[-20:])
    return done
