"""The index writer lock: `index.lock` in the index directory, held with flock by one writer at
a time (WriterLock), which writes its phase ("pending", then "updating") into it; readers look
the phase up without ever creating a file (writer_phase). Debug hook (documented in
docs/reference-vault-agent.md): with VAULT_AGENT_DEBUG_HOLD_AT set to `pending` or `updating`
and VAULT_AGENT_DEBUG_HOLD_FILE naming a file, a writer that reaches that phase waits while the
file exists (at most 300 s), so a test can observe each state.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from .errors import VaultError
from .safety import log_event

LOCK_NAME = "index.lock"
HOLD_AT, HOLD_FILE = "VAULT_AGENT_DEBUG_HOLD_AT", "VAULT_AGENT_DEBUG_HOLD_FILE"


def writer_phase(index_dir: Path) -> str | None:
    """'pending' or 'updating' while a writer holds the lock, else None. Never creates files."""
    try:
        fd = os.open(index_dir / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            phase = os.pread(fd, 16, 0).decode("ascii", "replace").strip()
            return phase if phase in ("pending", "updating") else "updating"
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class WriterLock:
    def __init__(self, index_dir: Path) -> None:
        index_dir.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(index_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + 1.0  # readers hold a shared lock for microseconds only
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(self.fd)
                    raise VaultError("INDEX_BUSY") from None
                time.sleep(0.01)

    def phase(self, name: str) -> None:
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, name.encode("ascii"), 0)

    def hold(self, name: str) -> None:
        """The debug hold point of phase `name` (see the module docstring)."""
        hold = os.environ.get(HOLD_FILE)
        if hold and os.environ.get(HOLD_AT) == name:
            log_event(event="index.hold", freshness=name)
            deadline = time.monotonic() + 300
            while os.path.exists(hold) and time.monotonic() < deadline:
                time.sleep(0.02)

    def release(self) -> None:
        os.ftruncate(self.fd, 0)
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
