"""Every byte a server sends, kept for canary scans and evidence."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class Transcript:
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, channel: str, line: str) -> None:
        with self._lock:
            getattr(self, channel).append(line)

    def mark(self) -> tuple[int, int]:
        with self._lock:
            return len(self.stdout), len(self.stderr)

    def since(self, mark: tuple[int, int]) -> tuple[list[str], list[str]]:
        with self._lock:
            return self.stdout[mark[0]:], self.stderr[mark[1]:]
