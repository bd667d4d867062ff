"""A fork server for the mutant and variant servers: one process per self-test worker that has
imported every mutant launcher (and so the reference servers and the MCP SDK) once, and forks a
child for each server start that tests/mutants/relay.py asks for.

`python tests/forkserver.py SOCKET`: binds SOCKET once its imports are done (a relay that comes
earlier finds nothing there and starts a new process), and ends when its stdin closes (the worker
that started it has gone).

Per connection, the relay sends one JSON line {"argv", "cwd", "env", "credentials"} with its
stdin, stdout and stderr attached (SCM_RIGHTS). The answer is {"pid"} once the child runs, then
{"pid", "code"} when it has ended (a child killed by signal N gives -N); {"refused"} when the
relay's credentials differ from this process's (it then starts as a new process itself). The
child is what `python LAUNCHER MUTANT [server args]` would be: in its own session, with the
relay's descriptors as 0, 1 and 2, its working directory and environment, and nothing of this
process's state but imported modules. It kills its session when the relay's end of the
connection closes, so a relay killed with SIGKILL takes its server with it.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.mutants.relay import credentials  # noqa: E402
from tests.warm import become  # noqa: E402


def preload() -> None:
    """Every launcher, and so every reference it patches; nothing runs, no thread starts."""
    from tests.mutants import registry
    registry()


def child(conn: socket.socket, request: dict, fds: list[int]) -> None:
    """(In the forked child.) Become the launcher's run the request describes; never returns."""
    def run() -> None:
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        keep = {0, 1, 2, conn.fileno()}
        for name in os.listdir("/proc/self/fd"):  # the fork server's sockets, pipes and other relays'
            if int(name) not in keep:
                try:
                    os.close(int(name))
                except OSError:
                    pass
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        import tempfile
        tempfile.tempdir = None  # TMPDIR is the caller's (the suite gives each server a private one)

        def watch() -> None:  # the relay has gone (killed): the server goes too
            try:
                while conn.recv(64):
                    pass
            except OSError:
                pass
            os.killpg(0, signal.SIGKILL)

        threading.Thread(target=watch, daemon=True).start()
        sys.argv = list(request["argv"])
        import runpy
        runpy.run_path(sys.argv[0], run_name="__main__")
    become(run)


def serve(path: str) -> int:
    preload()
    assert threading.active_count() == 1, "a preloaded module started a thread: forking would be unsafe"
    mine = credentials()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".new")
    os.chmod(path + ".new", 0o600)
    os.replace(path + ".new", path)  # relays see the socket only once it accepts
    listener.listen(64)
    waker_r, waker_w = os.pipe()
    os.set_blocking(waker_w, False)
    signal.set_wakeup_fd(waker_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    running: dict[int, socket.socket] = {}
    events = selectors.DefaultSelector()
    events.register(listener, selectors.EVENT_READ, "accept")
    events.register(waker_r, selectors.EVENT_READ, "child")
    events.register(sys.stdin, selectors.EVENT_READ, "parent")
    try:
        while True:
            for key, _ in events.select():
                if key.data == "parent":
                    if not os.read(sys.stdin.fileno(), 1024):
                        return 0
                elif key.data == "child":
                    os.read(waker_r, 4096)
                    _reap(running)
                else:
                    _accept(listener, mine, running)
            _reap(running)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def _accept(listener: socket.socket, mine: str, running: dict[int, socket.socket]) -> None:
    conn, _ = listener.accept()
    try:
        conn.settimeout(10)
        data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
        while not data.endswith(b"\n"):
            more = conn.recv(1 << 20)
            if not more:
                raise OSError("the relay closed the connection")
            data += more
        conn.settimeout(None)
        request = json.loads(data)
    except (OSError, ValueError):
        conn.close()
        return
    if request.get("credentials") != mine or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        try:
            conn.sendall(b'{"refused": true}\n')
        finally:
            conn.close()
        return
    pid = os.fork()
    if pid == 0:
        child(conn, request, fds)
    for fd in fds:
        os.close(fd)
    running[pid] = conn
    try:
        conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
    except OSError:
        pass


def _reap(running: dict[int, socket.socket]) -> None:
    while running:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = running.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(json.dumps({"pid": pid, "code": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
            except OSError:
                pass
            conn.close()


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1]))
