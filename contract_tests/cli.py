"""`retrieval-contract`: the suite as a command; the same engine as `pytest --pyargs contract_tests`.

The command isolates the run from the caller's pytest configuration and installed plugins: it
passes the suite's own ini file (`-c`), fixes the root directory to the installed package's
parent, and loads only the plugins the suite needs (pytest-xdist, hypothesis, the suite's own).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent
USAGE = """usage: retrieval-contract [--profile ID] [--server-cmd CMD] [--strict] [--expectations FILE]
                          [--report DIR] [--req IDS] [--case IDS] [any pytest option, e.g. -n 2, -m security]
Runs the conformance suite (pytest --pyargs contract_tests) with these options, isolated from the
caller's pytest configuration. --strict makes advisories (the profile's own reading) fail the run."""
# Short names of the console script mapped to the plugin's prefixed options.
ALIASES = {"--strict": "--rc-strict"}


def _selects_tests(args: list[str]) -> bool:
    """True if the caller named tests to run (e.g. a rerun line's module::test)."""
    return any(not a.startswith("-") and ("::" in a or a.startswith("contract_tests")) for a in args)


def suite_args(args: list[str]) -> list[str]:
    args = [ALIASES.get(a, a) for a in args]
    plugins = ["-p", "xdist.plugin", "-p", "contract_tests.plugin"]
    if importlib.util.find_spec("_hypothesis_pytestplugin"):
        plugins += ["-p", "_hypothesis_pytestplugin"]
    head = ["-c", str(PACKAGE / "suite.ini"), "--rootdir", str(PACKAGE.parent), *plugins,
            "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning", "--pyargs"]
    return head + ([] if _selects_tests(args) else ["contract_tests"]) + args


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    # Only the plugins named above: a plugin the caller happens to have installed (randomly,
    # asyncio, ...) must not change the run. Workers inherit the environment.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return int(pytest.main(suite_args(args)))


if __name__ == "__main__":
    sys.exit(main())
