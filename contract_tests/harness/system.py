"""What a server process holds, read from Linux /proc (skipped elsewhere)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")


def inet_sockets(pid: int) -> list[str]:
    """The network (TCP, UDP, raw) sockets a process holds, as 'table local-address'."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = os.readlink(fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    found = []
    for table in ("tcp", "tcp6", "udp", "udp6", "raw", "raw6"):
        try:
            rows = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) > 9 and cols[9] in inodes:
                found.append(f"{table} {cols[2]}")
    return found
