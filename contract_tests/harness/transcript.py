"""Every byte a server sends, kept for canary scans and evidence."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


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
