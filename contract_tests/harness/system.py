"""What a server process holds, read from Linux /proc (skipped elsewhere)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contract_tests.harness.stdio import ServerGone

# A skip for what this machine lacks (not what the server does) starts with these words; `all`
# does not hold it against a reference (reference_check.py).
MACHINE_LACKS = "this machine lacks"
needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason=f"{MACHINE_LACKS} Linux /proc")


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets a process holds. A descriptor closed while they are read is
    skipped; a process that has gone raises ServerGone."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except FileNotFoundError:
        raise ServerGone(f"process {pid} exited before its sockets could be read") from None
    inodes = set()
    for fd in fds:
        try:
            link = os.readlink(fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    return inodes


def inet_sockets(pid: int, own_ports: tuple[int, ...] = (), remote_ports: tuple[int, ...] = ()) -> list[str]:
    """The network (TCP, UDP, raw) sockets a process holds, as 'table local remote'; sockets on
    one of `own_ports` (an HTTP server's own listening port and its clients), and connections
    to one of `remote_ports` on loopback (an upstream double), are left out."""
    inodes = socket_inodes(pid)
    found = []
    for table in ("tcp", "tcp6", "udp", "udp6", "raw", "raw6"):
        try:
            rows = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) <= 9 or cols[9] not in inodes:
                continue
            if int(cols[1].rsplit(":", 1)[1], 16) in own_ports:
                continue
            host, port = cols[2].rsplit(":", 1)
            if int(port, 16) in remote_ports and host in _LOOPBACK:
                continue
            found.append(f"{table} {cols[1]} {cols[2]}")
    return found


_LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


def process_tree(pid: int) -> list[int]:
    """`pid` and all its descendants (a --server-cmd may start the server through a wrapper)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(children.get(current, []))
    return out


def own_ports(connection) -> tuple[int, ...]:
    """The port a connection's HTTP server listens on, if it has one."""
    url = getattr(connection, "url", None)
    if not url:
        return ()
    import httpx
    return (httpx.URL(url).port,)
