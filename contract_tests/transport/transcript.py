"""Every byte a server sends, kept for canary scans and evidence."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract_tests.transport.limits import LIMITS


class _Budget:
    """Characters kept by every transcript of the process (LIMITS.max_kept_total), so that many
    servers flooding at once stay bounded too."""

    def __init__(self) -> None:
        self.used = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        with self._lock:
            if self.used + n > LIMITS.max_kept_total:
                return False
            self.used += n
            return True


_KEPT = _Budget()


@dataclass
class Transcript:
    """What one connection carried. A flood is capped, never kept whole: past LIMITS.max_lines
    lines (or max_kept_bytes) on a channel, a line is only counted in `dropped`, unless it holds
    a watched canary token, when an excerpt around it is kept (the canary guard still finds it).
    Responses to the suite's own requests are always kept (`force`): there are as many as it sent."""
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)  # HTTP status lines, headers and bodies
    dropped: Counter = field(default_factory=Counter)   # channel -> lines counted, not kept
    _kept: Counter = field(default_factory=Counter, repr=False)
    _tokens: list[bytes] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def watch(self, tokens: Any) -> None:
        """Canary tokens to look for in what is not kept (lowercase, like the canary scan)."""
        self._tokens = [str(t).lower().encode("utf-8") for t in tokens if t]

    def tokens(self) -> list[bytes]:
        return list(self._tokens)

    def add(self, channel: str, line: str, *, force: bool = False) -> None:
        cap = LIMITS.max_kept_log_bytes if channel == "stderr" else LIMITS.max_kept_bytes
        with self._lock:
            kept = getattr(self, channel)
            if force or channel == "sent" or (len(kept) < LIMITS.max_lines and self._kept[channel] < cap
                                              and _KEPT.take(len(line))):
                kept.append(line)
                self._kept[channel] += len(line)
                return
            self.dropped[channel] += 1
            lowered = line.lower()
            for token in self._tokens:
                at = lowered.find(token.decode("utf-8", "replace"))
                if at >= 0:
                    kept.append("[retrieval-contract: a line past the cap, kept for a canary] "
                                + line[max(0, at - 120):at + len(token) + 120])
                    return

    def cut(self, line: str, limit: int) -> str:
        """A log line over `limit` characters: its start, and excerpts around any token in the rest."""
        if len(line) <= limit:
            return line
        lowered = line.lower()
        excerpts = []
        for token in self._tokens:
            at = lowered.find(token.decode("utf-8", "replace"), limit)
            if at >= 0:
                excerpts.append(line[max(0, at - 120):at + len(token) + 120])
        return line[:limit] + f" [... {len(line) - limit:,} more characters]" + "".join(
            f" [... excerpt: {e}]" for e in excerpts)

    def mark(self) -> tuple[int, int, int]:
        with self._lock:
            return len(self.stdout), len(self.stderr), len(self.raw)

    def since(self, mark: tuple[int, ...]) -> tuple[list[str], list[str]]:
        """(protocol output, log output) added since mark; raw HTTP text counts as output."""
        with self._lock:
            raw = self.raw[mark[2]:] if len(mark) > 2 else []
            return self.stdout[mark[0]:] + raw, self.stderr[mark[1]:]

    def flood_note(self) -> str | None:
        """What was counted and not kept, if anything (for the report)."""
        if not self.dropped:
            return None
        return ", ".join(f"{n:,} {channel} lines" for channel, n in sorted(self.dropped.items()))


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
