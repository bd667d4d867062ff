"""The implementation's own commands (index, load, a start that must be refused) run within
bounds: a flood of output costs a few MiB of the suite's memory, a command that hangs is killed
at its deadline with everything it started, and a role that hung is not run again."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from contract_tests.synthetic.adapter import FixtureSetupError
from contract_tests.transport.limits import HEALTH, LIMITS, MIB, configure
from contract_tests.transport.process import Bounded, run_bounded, run_role

FLOOD = """
import sys
line = b"x" * (1024 * 1024 - 1) + b"\\n"
for _ in range(200):
    sys.stdout.buffer.write(line)
    sys.stderr.buffer.write(line)
"""
CHATTY = """
import sys
for n in range(200_000):
    print(f"line {n} of the log", file=sys.stderr)
print("the error: the vault is missing", file=sys.stderr)
"""


def _rss_kib(field: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children_of(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.fixture(autouse=True)
def _fresh_limits():
    configure(command_timeout=60.0)
    yield
    configure(command_timeout=60.0)


def test_a_command_that_floods_both_streams_keeps_a_bounded_part_and_says_what_it_dropped():
    """200 MiB on stdout and 200 MiB on stderr, in 1 MiB lines: the suite's memory grows by
    a few MiB, not hundreds, and the note counts what was cut and dropped."""
    peak = [_rss_kib()]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _rss_kib())
            time.sleep(0.02)
    sampler = threading.Thread(target=sample, daemon=True)
    before = _rss_kib()
    sampler.start()
    done = run_bounded([sys.executable, "-c", FLOOD], env=None, cwd=None, timeout=120)
    stop.set()
    sampler.join()
    after = _rss_kib()
    print(f"VmRSS before {before} KiB, after {after} KiB, peak {peak[0]} KiB "
          f"(growth {after - before} KiB, peak growth {peak[0] - before} KiB); {done.seconds:.1f} s")
    assert done.returncode == 0 and not done.timed_out
    for text in (done.stdout, done.stderr):
        assert len(text) <= LIMITS.max_kept_log_bytes + 1024
        assert "1,048,575 bytes" in text  # a cut line says how long it was
        assert "lines (" in text and "bytes) not kept]" in text  # where lines were left out
    assert "200 stdout lines over" in done.dropped and "200 stderr lines over" in done.dropped
    assert "stdout lines (" in done.dropped and "between its first and last lines not kept" in done.dropped
    assert peak[0] - before < 100 * 1024, f"peak RSS grew by {peak[0] - before} KiB"
    assert after - before < 100 * 1024


def test_the_head_and_the_tail_of_a_chatty_command_are_kept():
    LIMITS.max_kept_log_bytes = 1 * MIB
    try:
        done = run_bounded([sys.executable, "-c", CHATTY], env=None, cwd=None, timeout=60)
    finally:
        LIMITS.max_kept_log_bytes = 4 * MIB
    lines = done.stderr.splitlines()
    assert lines[0] == "line 0 of the log"
    assert lines[-1] == "the error: the vault is missing"
    assert lines[-2] == "line 199999 of the log"
    assert any(line.startswith("[retrieval-contract: ") and "not kept]" in line for line in lines)
    assert len(done.stderr) <= 1 * MIB + 200
    assert "stderr lines (" in done.dropped


def test_a_command_that_hangs_is_killed_at_its_deadline_with_its_children():
    started = time.monotonic()
    run = Bounded(["sh", "-c", "sleep 1000 & sleep 1000"], env=None, cwd=None)
    deadline = time.monotonic() + 5
    while not _children_of(run.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    children = _children_of(run.pid)
    assert len(children) == 2, children
    assert run.wait(1.0) is None
    done = run.finished()
    elapsed = time.monotonic() - started
    assert done.timed_out and done.returncode is None
    assert elapsed < 15, elapsed
    assert not _alive(run.pid), "the command was left a zombie or running"
    time.sleep(0.2)  # the killed children are reparented and reaped by init
    assert not [pid for pid in children if _alive(pid)], "a child of the command outlived it"


def test_a_command_that_leaves_a_child_holding_its_output_does_not_block_the_reader():
    started = time.monotonic()
    done = run_bounded(["sh", "-c", "echo started; sleep 1000 &"], env=None, cwd=None, timeout=30)
    assert done.returncode == 0 and done.stdout == "started\n"
    assert time.monotonic() - started < 10


def test_a_role_that_timed_out_is_refused_the_second_time_without_waiting(tmp_path):
    argv = [sys.executable, "-c", "import time; time.sleep(1000)"]
    started = time.monotonic()
    with pytest.raises(FixtureSetupError, match="index command did not finish within 1 s") as first:
        run_role("index", argv, command="hang", env=None, cwd=tmp_path, timeout=1)
    assert time.monotonic() - started < 10
    assert first.value.command == "hang"
    HEALTH.reset()  # as after the preflight: a command that hung there is not run again either
    started = time.monotonic()
    with pytest.raises(FixtureSetupError, match="index command .*1 s.*not run again"):
        run_role("index", argv, command="hang", env=None, cwd=tmp_path, timeout=30)
    assert time.monotonic() - started < 0.5
    done = run_role("load", [sys.executable, "-c", "print('loaded')"], command="load", env=None, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "loaded\n"


def test_the_command_deadline_defaults_to_the_option():
    configure(command_timeout=0.5)
    started = time.monotonic()
    with pytest.raises(FixtureSetupError, match="within 0.5 s"):
        run_role("index", [sys.executable, "-c", "import time; time.sleep(1000)"], command="hang", env=None,
                 cwd=os.getcwd())
    assert time.monotonic() - started < 10
    configure()
    assert LIMITS.command_timeout == 0.5 and HEALTH.hung_commands == {}
