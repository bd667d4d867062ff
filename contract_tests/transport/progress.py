"""Progress on the console, so that a run of minutes is never silent.

A long step (the generic-files sweep: hundreds of calls on one connection) says how far it is
with `note`, at most once a second, in a file of its own process beside the run's stop file
(limits.STOP_FILE: every xdist worker knows it). The process that reports (the controller, or
the one process of a run without workers) runs a `Ticker`: every INTERVAL seconds in which no
test finished it prints one line: how many tests are done, and what each step in progress says.

The line goes to the standard error the process started with, taken before pytest captures
output (a test running in the same process must not swallow it): never to stdout, which may be
a report or a pipe.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from contract_tests.transport.limits import STOP_FILE

INTERVAL = 15.0   # seconds without a finished test before a progress line
THROTTLE = 1.0    # a step writes its progress at most this often

try:  # at import, before pytest captures the process's output (plugins load first)
    _CONSOLE: TextIO | None = os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace")
except OSError:
    _CONSOLE = None

_last = {"written": 0.0}


def _own_file() -> Path | None:
    shared = os.environ.get(STOP_FILE)
    return Path(shared).parent / f"progress-{os.getpid()}" if shared else None


def note(step: str, done: int, total: int, unit: str = "calls") -> None:
    """`step` has done `done` of `total` `unit`: kept for the console (a second apart, and the
    last), named after the xdist worker doing it."""
    now = time.monotonic()
    if done < total and now - _last["written"] < THROTTLE:
        return
    _last["written"] = now
    path = _own_file()
    if path is None:
        return
    try:
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        said = f"{worker + ': ' if worker else ''}{step}: {done:,} of {total:,} {unit}"
        path.write_text(said if done < total else "", encoding="utf-8")
    except OSError:
        pass


def in_progress(folder: Path) -> list[str]:
    """What every process of the run says it is doing now."""
    out = []
    for path in sorted(folder.glob("progress-*")):
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if text:
            out.append(text)
    return out


class Ticker:
    """Prints a progress line every INTERVAL s in which no test finished (`finished` resets it)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total, self.done = total, 0
        self.started = self._quiet_since = time.monotonic()
        self._stream = stream if stream is not None else (_CONSOLE or sys.stderr)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rc-progress", daemon=True)

    def start(self) -> "Ticker":
        self._thread.start()
        return self

    def finished(self) -> None:
        self.done += 1
        self._quiet_since = time.monotonic()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def line(self) -> str:
        shared = os.environ.get(STOP_FILE)
        steps = in_progress(Path(shared).parent) if shared else []
        doing = f"; {'; '.join(steps)}" if steps else ""
        return (f"retrieval-contract: {time.monotonic() - self.started:,.0f} s: {self.done:,} of {self.total:,} "
                f"tests done{doing}")

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            if time.monotonic() - self._quiet_since >= INTERVAL:
                self._quiet_since = time.monotonic()
                try:
                    self._stream.write("\n" + self.line() + "\n")
                    self._stream.flush()
                except (OSError, ValueError):
                    return
