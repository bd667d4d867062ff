"""The fork server and its relay (tests/forkserver.py, tests/mutants/relay.py) stand in for a new
process: the caller's pipes, arguments and environment reach the child, its exit status or its
signal comes back, signals go to it, it dies with the relay, and a caller with other
credentials (or no fork server) gets a new process."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

RELAY = ROOT / "tests" / "mutants" / "relay.py"
# What the child runs: its pid on the first line, then stdin upper-cased, then what argv and the
# environment asked for (an exit status, or a wait for a signal).
PROGRAM = """import os, sys, time
print(os.getpid(), flush=True)
print(sys.stdin.readline().upper(), end="", flush=True)
print(sys.argv[1], os.environ.get("RC_PROBE", ""), flush=True)
if sys.argv[1] == "wait":
    time.sleep(60)
sys.exit(int(sys.argv[1]) if sys.argv[1].isdigit() else 0)
"""


@pytest.fixture(scope="module")
def forkserver(tmp_path_factory):
    folder = tmp_path_factory.mktemp("forkserver")
    path = folder / "socket"
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "forkserver.py"), str(path)], stdin=subprocess.PIPE,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    assert path.exists(), "the fork server did not listen within 60 s"
    program = folder / "program.py"
    program.write_text(PROGRAM)
    yield path, program
    proc.stdin.close()
    proc.wait(timeout=30)


def _start(forkserver, arg: str, **kwargs) -> subprocess.Popen:
    path, program = forkserver
    return subprocess.Popen([sys.executable, str(RELAY), str(path), str(program), arg], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "RC_PROBE": "probe"}, **kwargs)


def _alive(pid: int) -> bool:
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def test_the_child_gets_the_callers_pipes_argv_and_environment_and_its_status_comes_back(forkserver):
    relay = _start(forkserver, "3")
    out, _err = relay.communicate("hello\n", timeout=30)
    child, echoed, args = out.splitlines()
    assert int(child) != relay.pid  # a forked child, not the relay become the program
    assert echoed == "HELLO" and args == "3 probe"
    assert relay.returncode == 3


def test_a_signal_reaches_the_child_and_its_death_comes_back(forkserver):
    relay = _start(forkserver, "wait")
    relay.stdin.write("x\n")
    relay.stdin.flush()
    child = int(relay.stdout.readline())
    relay.stdout.readline()
    relay.stdout.readline()
    os.killpg(relay.pid, signal.SIGTERM)  # as the suite stops a server: the relay's group
    assert relay.wait(timeout=30) == -signal.SIGTERM
    assert not _alive(child)


def test_the_child_dies_with_a_killed_relay(forkserver):
    relay = _start(forkserver, "wait")
    child = int(relay.stdout.readline())
    os.killpg(relay.pid, signal.SIGKILL)
    relay.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the forked server outlived its relay"


def test_a_caller_with_other_limits_or_no_fork_server_gets_a_new_process(forkserver, tmp_path):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lower = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (max(64, soft // 2), hard))  # noqa: E731
    relay = _start(forkserver, "0", preexec_fn=lower)
    out, _err = relay.communicate("x\n", timeout=30)
    assert int(out.splitlines()[0]) == relay.pid  # refused: the relay exec'd the program itself
    path, program = forkserver
    relay = subprocess.run([sys.executable, str(RELAY), str(tmp_path / "none"), str(program), "5"], input="x\n",
                           capture_output=True, text=True, timeout=30)
    assert relay.returncode == 5 and relay.stdout.splitlines()[1] == "X"
