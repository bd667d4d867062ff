"""A pytest plugin for benchmarks/suite_speed.py: where one suite run spends its time.

Loaded with `-p benchmarks._suite_timing` into a run of the suite (controller and xdist workers
alike), it appends one JSON line per process to the file named by RC_BENCH_LOG:

- `imports`: from RC_BENCH_T0 (the wall clock just before the benchmark started the process;
  for a worker, the controller's configure) to this process's pytest_configure;
- `preflight`: the controller's pytest_sessionstart (the preflight runs there);
- `bringup`: from the end of the preflight to this worker's first test;
- `fixture`: building the profile's fixture (the `contract_fixture` fixture);
- `starts`/`start_s`: processes the suite started (the implementation's servers and commands)
  and the seconds spent in starting them (Popen, and a server's handshake or port wait);
- `tests`: the sum of the tests' call phases; `setup`: of their setup phases (fixtures);
- `wall`: the process's whole life, from RC_BENCH_T0.

It changes nothing the suite does: it only wraps subprocess.Popen and two harness entry points
to count and time them.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

T0 = float(os.environ.get("RC_BENCH_T0") or time.time())
STATS: dict = {"starts": 0, "start_s": 0.0, "fixture": 0.0, "tests": 0.0, "setup": 0.0, "teardown": 0.0,
               "first_test": None, "preflight": 0.0, "imports": 0.0}


def _wrap_starts() -> None:
    original_init = subprocess.Popen.__init__

    def counted(self, *args, **kwargs):
        STATS["starts"] += 1
        began = time.monotonic()
        try:
            return original_init(self, *args, **kwargs)
        finally:
            STATS["start_s"] += time.monotonic() - began
    subprocess.Popen.__init__ = counted  # type: ignore[method-assign]

    from contract_tests.transport import http, stdio
    for cls, name in ((stdio.Connection, "initialize"), (http.HttpServer, "__init__")):
        inner = getattr(cls, name)

        def timed(self, *args, _inner=inner, **kwargs):
            began = time.monotonic()
            try:
                return _inner(self, *args, **kwargs)
            finally:
                STATS["start_s"] += time.monotonic() - began
        setattr(cls, name, timed)


def _role(config: pytest.Config) -> str:
    worker = getattr(config, "workerinput", None)
    return worker["workerid"] if worker else "controller"


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    STATS["imports"] = time.time() - T0
    worker = getattr(config, "workerinput", None)
    if worker and "rc_bench_ready" in worker:
        STATS["imports"] = time.time() - worker["rc_bench_ready"]
    _wrap_starts()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionstart(session: pytest.Session):
    began = time.time()
    try:
        return (yield)
    finally:
        if not hasattr(session.config, "workerinput"):
            STATS["preflight"] = time.time() - began
            STATS["ready"] = time.time()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    node.workerinput["rc_bench_ready"] = time.time()
    node.workerinput["rc_bench_preflight_end"] = STATS.get("ready", time.time())


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    if fixturedef.argname != "contract_fixture":
        return (yield)
    began = time.monotonic()
    try:
        return (yield)
    finally:
        STATS["fixture"] += time.monotonic() - began


def pytest_runtest_setup(item) -> None:
    if STATS["first_test"] is None:
        STATS["first_test"] = time.time()


PER_TEST: dict[str, list[float]] = {}  # nodeid -> [processes started, seconds] (RC_BENCH_DETAIL)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    starts, began = STATS["starts"], time.monotonic()
    try:
        return (yield)
    finally:
        PER_TEST[item.nodeid] = [STATS["starts"] - starts, round(time.monotonic() - began, 3)]


def pytest_runtest_logreport(report) -> None:
    if report.when in ("call", "setup", "teardown"):
        STATS["tests" if report.when == "call" else report.when] += report.duration


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    log = os.environ.get("RC_BENCH_LOG")
    if not log:
        return
    worker = getattr(config, "workerinput", None)
    ready = (worker or {}).get("rc_bench_preflight_end", STATS.get("ready"))
    bringup = (STATS["first_test"] - ready) if (STATS["first_test"] and ready) else 0.0
    row = {"process": _role(config), "wall": round(time.time() - T0, 3), "bringup": round(bringup, 3),
           **{k: round(v, 3) if isinstance(v, float) else v for k, v in STATS.items()
              if k not in ("first_test", "ready")}}
    if os.environ.get("RC_BENCH_DETAIL"):
        row["per_test"] = PER_TEST
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
