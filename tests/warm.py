"""A warm suite: one process per self-test worker that has imported the suite's libraries once
and forks a child for each suite run the self-tests ask for (`tests/conftest.py` run_suite).

A suite run costs about two seconds of imports (pytest, the MCP SDK, hypothesis, httpx,
jsonschema) before it does anything; the self-tests run the suite some four hundred times. The
child of a fork starts with those modules loaded and nothing run: no test, no configuration, no
server (only modules are imported here, never a pytest session). It then runs exactly what
`python -m contract_tests.cli ARGS` runs, in its own session and process group, with the run's
working directory, environment and output files.

Protocol, one JSON object per line: the caller writes {"argv", "cwd", "env", "out"} to stdin;
this process answers {"pid"} once the child runs and {"pid", "code"} when it has ended (a child
killed by signal N gives -N, as subprocess does).
"""

from __future__ import annotations

import json
import os
import sys
import threading


def preload() -> None:
    """What every suite run imports before its first test; none of it starts a thread or keeps
    state that a run could see (each run configures limits, health and selection itself)."""
    import _pytest.config  # noqa: F401
    import pytest  # noqa: F401
    import xdist.plugin  # noqa: F401
    try:
        import _hypothesis_pytestplugin  # noqa: F401
        import hypothesis  # noqa: F401
    except ImportError:  # the suite runs without hypothesis too
        pass
    import contract_tests.cli.retrieval_contract  # noqa: F401
    import contract_tests.plugin  # noqa: F401
    import contract_tests.reports.html  # noqa: F401
    import contract_tests.suite.fixtures  # noqa: F401
    import contract_tests.suite.judging  # noqa: F401
    import contract_tests.transport.sdk  # noqa: F401  (the MCP SDK's client)
    from contract_tests.contracts import specs as contracts
    # The contract data every run reads (cached, never changed by a run): specs, checked
    # against their schema, and policies.
    for profile in contracts.available_profiles():
        contracts.load_profile(profile)
    for path in (contracts.contracts_root() / "policies").glob("*.yaml"):
        contracts.policy(path.name)


def become(run) -> None:
    """(In a forked child.) Run `run()` as a new interpreter would run a program, then exit with
    its status: an int it returns or SystemExit gives, 1 after printing an uncaught exception's
    traceback; never returns. (tests/forkserver.py's children end here too.)"""
    code = 70
    try:
        code = run() or 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - report it as `python -m` would, then exit non-zero
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def child(request: dict) -> None:
    """(In the forked child.) Become the suite run the request describes; never returns."""
    def run() -> int:
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(fd, 0)
        out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        sys.argv = [sys.executable, *request["argv"]]
        from contract_tests.cli.retrieval_contract import main
        return main(request["argv"])
    become(run)


def serve() -> int:
    preload()
    assert threading.active_count() == 1, "a preloaded module started a thread: forking would be unsafe"
    answer = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        answer.flush()
        pid = os.fork()
        if pid == 0:
            child(request)
        answer.write(json.dumps({"pid": pid}) + "\n")
        answer.flush()
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        answer.write(json.dumps({"pid": pid, "code": code}) + "\n")
        answer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
