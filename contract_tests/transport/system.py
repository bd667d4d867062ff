"""What a server process holds, read from Linux /proc (skipped elsewhere)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contract_tests.transport.stdio import ServerGone

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


_INET_TABLES = ("tcp", "tcp6", "udp", "udp6", "raw", "raw6")
_LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


def _inet_rows(pid: int, inodes: set[str]) -> dict[str, list[tuple[str, str, str]]]:
    """The network-table rows (table, local, remote) of these socket inodes, as `pid` sees them
    (its network namespace's tables, which the kernel writes out whole on every read)."""
    rows: dict[str, list[tuple[str, str, str]]] = {}
    for table in _INET_TABLES:
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) > 9 and cols[9] in inodes:
                rows.setdefault(cols[9], []).append((table, cols[1], cols[2]))
    return rows


def _allowed(local: str, remote: str, own_ports: tuple[int, ...], remote_ports: tuple[int, ...]) -> bool:
    if int(local.rsplit(":", 1)[1], 16) in own_ports:
        return True
    host, port = remote.rsplit(":", 1)
    return int(port, 16) in remote_ports and host in _LOOPBACK


def inet_sockets(pid: int, own_ports: tuple[int, ...] = (), remote_ports: tuple[int, ...] = ()) -> list[str]:
    """The network (TCP, UDP, raw) sockets a process holds, as 'table local remote'; sockets on
    one of `own_ports` (an HTTP server's own listening port and its clients), and connections
    to one of `remote_ports` on loopback (an upstream double), are left out."""
    rows = _inet_rows(pid, socket_inodes(pid))
    return [f"{table} {local} {remote}" for entries in rows.values() for table, local, remote in entries
            if not _allowed(local, remote, own_ports, remote_ports)]


class SocketWatch:
    """inet_sockets, sampled every few milliseconds over a process tree, at the cost of a
    descriptor listing per process: a socket is looked up in the network tables (about 15 ms a
    read with a few thousand sockets on the machine) until it is classified, as a network
    socket (found, or allowed) or a Unix one, and never again. `found` gathers every network
    socket found. (A TCP socket is classified once it is bound or connected, when it shows in
    the tables; until then it is looked up at every sample.)"""

    def __init__(self, own_ports: tuple[int, ...] = (), remote_ports: tuple[int, ...] = ()) -> None:
        self.own_ports, self.remote_ports = own_ports, remote_ports
        self.known: set[str] = set()
        self.found: set[str] = set()

    def sample(self, pid: int) -> None:
        """Look at `pid`'s sockets now (ServerGone, an OSError, when it has gone)."""
        new = socket_inodes(pid) - self.known
        if not new:
            return
        rows = _inet_rows(pid, new)
        for inode, entries in rows.items():
            self.known.add(inode)
            self.found.update(f"{table} {local} {remote}" for table, local, remote in entries
                              if not _allowed(local, remote, self.own_ports, self.remote_ports))
        rest = new - rows.keys()
        if rest:
            self.known |= rest & _unix_inodes(pid)


def _unix_inodes(pid: int) -> set[str]:
    try:
        lines = Path(f"/proc/{pid}/net/unix").read_text().splitlines()[1:]
    except OSError:
        return set()
    return {cols[6] for cols in (line.split() for line in lines) if len(cols) > 6}


def process_tree(pid: int) -> list[int]:
    """`pid` and all its descendants (a --server-cmd may start the server through a wrapper)."""
    listed = _tree_from_children_files(pid)
    if listed is not None:
        return listed
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


# /proc/PID/task/TID/children: a kernel built with CONFIG_PROC_CHILDREN has it (most do).
_CHILDREN_FILES = Path("/proc/self/task").is_dir() and any(Path("/proc/self/task").glob("*/children"))


def _tree_from_children_files(pid: int) -> list[int] | None:
    """process_tree through each thread's `children` file: a few small reads instead of every
    process's stat; None where the kernel has no such files."""
    if not _CHILDREN_FILES:
        return None
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        try:
            tasks = list(Path(f"/proc/{current}/task").iterdir())
        except OSError:
            continue  # it ended meanwhile
        for task in tasks:
            try:
                todo.extend(int(child) for child in (task / "children").read_text().split())
            except OSError:
                continue
    return out


def own_ports(connection) -> tuple[int, ...]:
    """The port a connection's HTTP server listens on, if it has one."""
    url = getattr(connection, "url", None)
    if not url:
        return ()
    import httpx
    return (httpx.URL(url).port,)
