"""The suite survives any server: against each mode of a hostile server (tests/hostile/server.py)
a run ends within two minutes on two cores, writes results.json, .md and .html, names what went
wrong, exits non-zero, and the suite's own processes stay under 1 GB resident together (the
hostile server's processes are not the suite's, and are left out of the sum)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contract_tests.harness.system import process_tree

HERE = Path(__file__).resolve().parent
SERVER = HERE / "hostile" / "server.py"
WALL_S = 120
RSS_LIMIT_KIB = 1024 * 1024

# (transport, mode) -> words the run's output must carry (the symptom, named). Over stdio the
# retrieval-tools profile; over Streamable HTTP section-source-local (retrieval-tools is stdio only).
HTTP_MODES = {
    "hang": ["stopped answering"],
    "huge": ["over the", "MCP-SIZE-001"],
    "sse-open": [],
    "sse-endless": ["stopped answering"],
}
MODES = {
    "hang": ["stopped answering"],
    "huge": ["over the", "MCP-SIZE-001"],
    "notify": ["notifications or other unrequested messages"],
    "slowloris": ["stopped answering"],
    "exit-half": ["exited"],
    "mid-message": ["stopped answering"],
    "garbage": ["MCP-RPC-003"],
    "stderr-gig": ["stderr lines past the caps"],
}


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _is_server(pid: int) -> bool:
    """The hostile server itself (`python .../server.py MODE ...`), not the suite naming it."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return len(argv) > 1 and argv[1].decode("utf-8", "replace") == str(SERVER)


def _suite_rss_kib(root: int) -> int:
    """Resident memory of `root` and its descendants, the hostile server's subtree left out."""
    tree = process_tree(root)
    servers = {pid for top in tree if _is_server(top) for pid in process_tree(top)}
    return sum(_rss_kib(pid) for pid in tree if pid not in servers)


def run_measured(tmp_path: Path, args: list[str]) -> tuple[int, str, float, int]:
    """(exit status, output, wall seconds, peak RSS of the suite's process tree in KiB)."""
    report = tmp_path / "report"
    log = tmp_path / "output.txt"
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "contract_tests.cli", "-p", "no:randomly", "--report",
                                 str(report), *args], stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path,
                                env={**os.environ, "PYTHONPATH": str(HERE.parent)}, start_new_session=True)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _suite_rss_kib(proc.pid))
            if time.monotonic() - started > WALL_S + 60:
                os.killpg(proc.pid, signal.SIGKILL)  # the run, its workers and its servers
                break
            time.sleep(0.2)
        proc.wait()
    return proc.returncode, log.read_text(errors="replace"), time.monotonic() - started, peak


@pytest.fixture
def one_at_a_time(tmp_path_factory):
    """Hostile runs take turns (xdist workers share the lock): each is timed on the machine's two
    cores, not against another hostile run."""
    lock = tmp_path_factory.getbasetemp().parent / "rc-hostile.lock"
    with lock.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
        fcntl.flock(handle, fcntl.LOCK_UN)


CASES = [("stdio", mode) for mode in sorted(MODES)] + [("http", mode) for mode in sorted(HTTP_MODES)]


@pytest.mark.parametrize("transport,mode", CASES, ids=[f"{t}-{m}" for t, m in CASES])
def test_a_hostile_server_gets_a_bounded_run_and_a_report(tmp_path, transport, mode, one_at_a_time):
    if transport == "stdio":
        profile, command, expected = "retrieval-tools", f"{{python}} {SERVER} {mode} --profile retrieval-tools", MODES
    else:
        profile, expected = "section-source-local", HTTP_MODES
        command = f"{{python}} {SERVER} {mode} --profile {profile} --http --port {{port}}"
    code, output, wall, peak = run_measured(tmp_path, ["--profile", profile, "--transport", transport,
                                                       "--server-cmd", command, "-n", "2"])
    mode = f"{transport} {mode}"
    line = f"hostile {mode}: exit {code}, {wall:.1f} s, peak RSS of the suite's processes {peak / 1024:.0f} MiB"
    print(line)
    if os.environ.get("RC_HOSTILE_LOG"):
        with open(os.environ["RC_HOSTILE_LOG"], "a", encoding="utf-8") as log:
            log.write(line + "\n")
    assert wall < WALL_S, f"{mode}: the run took {wall:.0f} s\n{output[-3000:]}"
    assert peak < RSS_LIMIT_KIB, f"{mode}: the suite's processes reached {peak / 1024:.0f} MiB resident"
    assert code not in (0, 8), f"{mode}: exit {code}\n{output[-3000:]}"
    for name in ("results.json", "results.md", "results.html"):
        assert (tmp_path / "report" / name).is_file(), f"{mode}: no {name}\n{output[-3000:]}"
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    assert not results["suite_errors"], f"{mode}: suite errors {results['suite_errors']}"
    for words in expected[mode.split(" ", 1)[1]]:
        assert words in output, f"{mode}: the output does not say {words!r}\n{output[-3000:]}"
