"""Helpers for the project's self-tests: run the suite in a subprocess and read its report."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "tests" / "mutants"


@dataclass
class SuiteRun:
    code: int
    output: str
    results: dict | None
    report_dir: Path | None = None

    def status(self) -> dict[str, str]:
        return {row["id"]: row["status"] for row in (self.results or {}).get("requirements", [])}


def unchecked_passes(results: dict | None) -> list[str]:
    """Requirements a run reports as pass although no check of theirs ran in any of their tests
    (results.json `tests_checking`): a pass nothing earned. Every mutant control and variant run
    is held to none (and every reference run, by `retrieval-contract all`: reference_check.py)."""
    return sorted(row["id"] for row in (results or {}).get("requirements", [])
                  if row["status"] == "pass" and not row.get("tests_checking"))


def run_suite(tmp_path: Path, *args: str, timeout: int = 900, env: dict[str, str] | None = None) -> SuiteRun:
    """`python -m contract_tests.cli -q --report DIR ARGS` in `tmp_path`: forked from this worker's
    warm suite (tests/warm.py: the same run without paying its imports again), or as a new
    process under RC_WARM=0."""
    report = tmp_path / "report"
    argv = ["-q", "-p", "no:randomly", "--report", str(report), *args]
    environment = {**os.environ, **(env or {})}
    if os.environ.get("RC_WARM") == "0":
        proc = subprocess.run([sys.executable, "-m", "contract_tests.cli", *argv], capture_output=True, text=True,
                              timeout=timeout, cwd=tmp_path, env=environment)
        code, output = proc.returncode, proc.stdout + proc.stderr
    else:
        out = tmp_path / "suite-output.txt"
        code = _warm().run(argv, cwd=tmp_path, env=environment, out=out, timeout=timeout)
        output = out.read_text(errors="replace")
    results_file = report / "results.json"
    results = json.loads(results_file.read_text()) if results_file.is_file() else None
    return SuiteRun(code, output, results, report)


class WarmSuite:
    """This worker's warm suite process (tests/warm.py), started on first use."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "warm.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                     env={**os.environ, "PYTHONPATH": str(ROOT)})

    def _answer(self, timeout: float | None) -> dict:
        import select
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the warm suite process exited ({self.proc.wait()})")
        return json.loads(line)

    def run(self, argv: list[str], *, cwd: Path, env: dict[str, str], out: Path, timeout: float) -> int:
        self.proc.stdin.write(json.dumps({"argv": argv, "cwd": str(cwd), "env": env, "out": str(out)}) + "\n")
        self.proc.stdin.flush()
        pid = self._answer(60)["pid"]
        try:
            return self._answer(timeout)["code"]
        except TimeoutError:
            import signal
            os.killpg(pid, signal.SIGKILL)  # the run, its xdist workers and its servers
            self._answer(60)
            raise subprocess.TimeoutExpired(["contract_tests.cli", *argv], timeout) from None


_WARM: list[WarmSuite] = []


def _warm() -> WarmSuite:
    if not _WARM or _WARM[0].proc.poll() is not None:
        _WARM[:] = [WarmSuite()]
    return _WARM[0]


def mutant_command(name: str) -> str:
    """The suite's --server-cmd for a registered mutant or variant."""
    from tests.mutants import command, registry
    return command(registry()[name])


@pytest.fixture
def suite_run(tmp_path):
    def run(*args: str, timeout: int = 900, env: dict[str, str] | None = None) -> SuiteRun:
        return run_suite(tmp_path, *args, timeout=timeout, env=env)
    return run


# -- the fork server: mutant and variant servers start without paying the SDK's imports -----------
# Each worker (or a run without xdist) starts tests/forkserver.py in the background; the mutant
# commands go through tests/mutants/relay.py to it once it listens (before, and under
# RC_FORKSERVER=0, they start as new processes, as a user's would).

def pytest_configure(config):
    if not hasattr(config, "workerinput") and getattr(config.option, "numprocesses", None):
        return  # the xdist controller runs no test
    import socket
    if os.environ.get("RC_FORKSERVER") == "0" or not hasattr(socket, "send_fds") or not Path("/proc/self/fd").is_dir():
        return
    import shutil
    import tempfile
    folder = Path(tempfile.mkdtemp(prefix="rc-forkserver-"))
    path = folder / "socket"
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "forkserver.py"), str(path)], stdin=subprocess.PIPE,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    os.environ["RC_FORKSERVER"] = str(path)

    def stop() -> None:
        proc.stdin.close()
        proc.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    config.add_cleanup(stop)


# -- the machine, shared between xdist workers ---------------------------------------------------
# A test marked `alone` (the hostile runs, which time a whole suite run against a bound stated
# for two cores) has the machine to itself: it waits for the test running on the other worker
# to end, and no other test starts until it is done. Every other test shares the machine. The
# turnstile gives the waiting `alone` test priority over tests that would start after it.

@pytest.fixture(autouse=True)
def _the_machine(request, tmp_path_factory):
    locks = tmp_path_factory.getbasetemp().parent  # one folder for every worker of the run
    alone = request.node.get_closest_marker("alone") is not None
    with (locks / "rc-turnstile.lock").open("w") as turnstile, (locks / "rc-machine.lock").open("w") as machine:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(machine, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(machine, fcntl.LOCK_UN)
            if alone:
                fcntl.flock(turnstile, fcntl.LOCK_UN)


# -- order: the longest runs first, so that two workers end together ------------------------------
# (xdist hands tests out in collection order; a full-suite run left for the end keeps one worker
# busy while the other waits.)
LONG_FIRST = ("tests/test_variants.py", "tests/test_shards.py", "tests/test_examples.py", "tests/test_reference.py",
              "tests/test_packaging.py", "tests/test_scoreboard.py", "tests/test_hostile.py", "tests/test_open_notebook_mock.py")


def pytest_collection_modifyitems(config, items):
    def rank(item) -> int:
        path = item.nodeid.split("::")[0]
        return LONG_FIRST.index(path) if path in LONG_FIRST else len(LONG_FIRST)
    items.sort(key=rank)  # stable: within a file, and for every other file, collection order
