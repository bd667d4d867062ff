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


def _selects_tests(args: list[str]) -> bool:
    """True if the caller named tests to run (e.g. a rerun line's module::test)."""
    return any(not a.startswith("-") and ("::" in a or a.startswith("contract_tests")) for a in args)


def suite_args(args: list[str]) -> list[str]:
    from .target.options import to_plugin_names
    args = to_plugin_names(args)  # the console's short names are the plugin's --rc- options
    plugins = ["-p", "xdist.plugin", "-p", "contract_tests.plugin"]
    if importlib.util.find_spec("_hypothesis_pytestplugin"):
        plugins += ["-p", "_hypothesis_pytestplugin"]
    head = ["-c", str(PACKAGE / "suite.ini"), "--rootdir", str(PACKAGE.parent), *plugins,
            "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning", "--pyargs"]
    return head + ([] if _selects_tests(args) else ["contract_tests"]) + args


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["declare"]:
        from .declare import main as declare
        return declare(args[1:])
    if args[:1] == ["all"]:
        return run_matrix(args[1:])
    if args[:1] == ["merge-reports"]:
        from .merge import main as merge_main
        return merge_main(args[1:])
    if args[:1] == ["map"]:
        from .cli_map import main as map_main
        return map_main(args[1:])
    if args[:1] == ["list"]:
        from .cli_list import main as list_main
        return list_main(args[1:])
    if "--version" in args or "-V" in args:
        from .cli_info import version_text
        sys.stdout.write(version_text())
        return 0
    if "-h" in args or "--help" in args:
        from .cli_info import help_text
        profile = args[args.index("--profile") + 1] if "--profile" in args[:-1] else None
        sys.stdout.write(help_text(profile))
        return 0
    # Only the plugins named above: a plugin the caller happens to have installed (randomly,
    # asyncio, ...) must not change the run. Workers inherit the environment.
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return int(pytest.main(suite_args(args)))


def matrix() -> list[tuple[str, str, str | None, str | None]]:
    """(profile, transport, phase, mapping) of every run the specs define for the bundled
    references; a mapped profile runs each of its worked examples, over its mapping's transport."""
    from . import contracts
    from .mapping import load
    runs = []
    for profile_id in contracts.available_profiles():
        profile = contracts.load_profile(profile_id)
        for mapping in profile.data["reference"].get("mappings", []):
            runs.append((profile_id, load(mapping).get("server", {}).get("transport", "stdio"), None, mapping))
        if profile.data.get("mapped"):
            continue
        for transport in profile.transports:
            if transport not in profile.data["reference"]:
                continue
            for phase in profile.phases or [None]:
                runs.append((profile_id, transport, phase, None))
    return runs


def run_matrix(args: list[str]) -> int:
    """Each run in its own process (the plugin keeps per-run state), one report folder each."""
    import subprocess
    import time

    report = None
    if "--report" in args:
        i = args.index("--report")
        report, args = args[i + 1], args[:i] + args[i + 2:]
    results = []
    for profile_id, transport, phase, mapping in matrix():
        example = Path(mapping).stem if mapping else None
        name = "-".join(x for x in (profile_id, example, transport, phase) if x)
        run = ["--profile", profile_id, "--transport", transport] + (["--phase", phase] if phase else []) + (
            ["--mapping", mapping] if mapping else [])
        if report:
            run += ["--report", str(Path(report) / name)]
        print(f"retrieval-contract all: {name}", flush=True)
        started = time.monotonic()
        code = subprocess.call([sys.executable, "-m", "contract_tests.cli", *run, *args])
        results.append((name, code, time.monotonic() - started))
    print("\nretrieval-contract all:")
    for name, code, seconds in results:
        print(f"  {'pass' if code == 0 else f'FAIL (exit {code})':<14} {name:<40} {seconds:6.1f} s")
    from .merge import exit_status
    return exit_status([code for _name, code, _s in results])  # the suite's precedence: 8, 9, 1, 7


if __name__ == "__main__":
    sys.exit(main())
