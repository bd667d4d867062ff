"""Every byte a server sends, kept for canary scans and evidence."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Transcript:
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)  # HTTP status lines, headers and bodies
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, channel: str, line: str) -> None:
        with self._lock:
            getattr(self, channel).append(line)

    def mark(self) -> tuple[int, int, int]:
        with self._lock:
            return len(self.stdout), len(self.stderr), len(self.raw)

    def since(self, mark: tuple[int, ...]) -> tuple[list[str], list[str]]:
        """(protocol output, log output) added since mark; raw HTTP text counts as output."""
        with self._lock:
            raw = self.raw[mark[2]:] if len(mark) > 2 else []
            return self.stdout[mark[0]:] + raw, self.stderr[mark[1]:]


def spare_startup_paths(srv: Any, paths: list[Any], settle: float = 0.3, bound: float = 3.0) -> None:
    """Where a profile's documents let a server's start-up output name a path (vault-agent's
    `serve` may print its vault root: Phase 1 indexing.md), replace that exact path in the log
    lines written until the output settles by its placeholder, so that only the allowed path
    is spared: every other leak in those lines, and any later line naming it, is still found.
    A server whose output was already scanned is past its start-up: nothing is spared."""
    paths = [p for p in paths if p and str(p).strip()]
    if hasattr(srv, "rc_scanned") or not paths:
        return
    lines = srv.transcript.stderr
    deadline, seen, quiet_since = time.monotonic() + bound, -1, time.monotonic()
    while time.monotonic() < deadline:
        if len(lines) != seen:
            seen, quiet_since = len(lines), time.monotonic()
        elif time.monotonic() - quiet_since >= settle:
            break
        time.sleep(0.05)
    roots = sorted({s for p in paths for s in (str(p), str(Path(p).resolve()))}, key=len, reverse=True)
    with srv.transcript._lock:
        for n in range(len(lines)):
            for root in roots:
                lines[n] = lines[n].replace(root, "{startup path}")
