"""Start a mutant or variant through this worker's fork server (tests/forkserver.py), or as a
new process when there is none: `python relay.py SOCKET LAUNCHER MUTANT [server args]`.

A reference server spends over a second importing the MCP SDK before it reads a byte; the
self-tests start some three thousand of them. The fork server has imported every launcher once
and forks a child for each start: the child gets this process's stdin, stdout and stderr,
working directory, environment and arguments, and runs the launcher exactly as
`python LAUNCHER MUTANT [server args]` would. This process stays as the server's stand-in for
the suite: it forwards the signals it gets, exits with the child's status (or dies of its
signal), and the child kills itself when this process dies (SIGKILL included).

What a relay cannot stand in for: the server's own /proc entries (its open files, sockets,
memory), which the suite reads under this process's pid. A mutant whose catch rests on them is
declared `fresh` and never comes here (tests/mutants/__init__.py). A process whose credentials
differ from the fork server's (setpriv's dropped capabilities, another user, limits, namespaces)
starts as a new process too: the fork server refuses it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def credentials() -> str:
    """What a forked child would inherit from the fork server rather than from its caller: ids,
    capabilities, limits, umask and namespaces. A caller whose fingerprint differs starts anew."""
    import resource
    status = {}
    with open("/proc/self/status", encoding="ascii", errors="replace") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
                       "Seccomp"):
                status[key] = value.split()
    umask = os.umask(0o022)
    os.umask(umask)
    limits = [resource.getrlimit(getattr(resource, name)) for name in dir(resource) if name.startswith("RLIMIT_")]
    spaces = []
    for space in ("mnt", "net", "pid", "user", "uts", "ipc", "cgroup"):
        try:
            spaces.append(os.readlink(f"/proc/self/ns/{space}"))
        except OSError:
            spaces.append("")
    return json.dumps([status, umask, limits, spaces, os.getpriority(os.PRIO_PROCESS, 0)])


def fresh(argv: list[str]) -> None:
    """Become the launcher itself, as a new interpreter (never returns)."""
    os.execv(sys.executable, [sys.executable, *argv])


def main() -> None:
    if len(sys.argv) < 3:
        print("usage: relay.py SOCKET LAUNCHER MUTANT [server args]", file=sys.stderr)
        sys.exit(2)
    path, argv = sys.argv[1], sys.argv[2:]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "credentials": credentials()}
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
        reader = conn.makefile("r", encoding="utf-8")
        first = json.loads(reader.readline() or "{}")
    except (OSError, ValueError):
        first = {}
    pid = first.get("pid")
    if not pid:  # no fork server, or it refused this caller: start as a new process
        conn.close()
        fresh(argv)
    # The child holds the caller's pipes now; this process keeps none of them open.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for sig in FORWARDED:
        signal.signal(sig, lambda number, _frame: os.kill(pid, number))
    try:
        line = reader.readline()
    except OSError:
        line = ""
    code = json.loads(line)["code"] if line.strip() else 70  # the fork server went away: no status to give
    if code < 0:  # killed by a signal: die of it too, as the server itself would have
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
