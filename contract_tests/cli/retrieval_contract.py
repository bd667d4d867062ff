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

PACKAGE = Path(__file__).resolve().parents[1]


def _selects_tests(args: list[str]) -> bool:
    """True if the caller named tests to run (e.g. a rerun line's module::test)."""
    return any(not a.startswith("-") and ("::" in a or a.startswith("contract_tests")) for a in args)


def suite_args(args: list[str]) -> list[str]:
    from contract_tests.implementation.options import to_plugin_names
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
        from contract_tests.cli.declare import main as declare
        return declare(args[1:])
    if args[:1] == ["all"]:
        if "-h" in args or "--help" in args:
            from contract_tests.cli.info import all_help_text
            sys.stdout.write(all_help_text())
            return 0
        return run_matrix(args[1:])
    if args[:1] == ["merge-reports"]:
        from contract_tests.reports.merge import main as merge_main
        return merge_main(args[1:])
    if args[:1] == ["scoreboard"]:
        from contract_tests.scoreboard import main as scoreboard_main
        return scoreboard_main(args[1:])
    if args[:1] == ["map"]:
        from contract_tests.cli.mapper import main as map_main
        return map_main(args[1:])
    if args[:1] == ["list"]:
        from contract_tests.cli.listing import main as list_main
        return list_main(args[1:])
    if "--version" in args or "-V" in args:
        from contract_tests.cli.info import version_text
        sys.stdout.write(version_text())
        return 0
    if "-h" in args or "--help" in args:
        from contract_tests.cli.info import help_text
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
    from contract_tests.contracts import specs as contracts
    from contract_tests.contracts.mapping import load
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


def _pool_size(args: list[str]) -> tuple[int, list[str]]:
    """`-n N` (or `--numprocesses N`, `-nN`, `-n auto`) of `all`: how many runs go at once, each
    in one process (default 1); the rest of the arguments go to every run."""
    size, rest, i = None, [], 0
    while i < len(args):
        arg = args[i]
        if arg in ("-n", "--numprocesses") and i + 1 < len(args):
            size, i = args[i + 1], i + 2
            continue
        if arg.startswith("-n") and arg[2:] and not arg.startswith("--"):
            size = arg[2:]
        elif arg.startswith("--numprocesses="):
            size = arg.split("=", 1)[1]
        else:
            rest.append(arg)
        i += 1
    if size in (None, "0"):
        return 1, rest
    if size in ("auto", "logical"):
        return max(1, os.cpu_count() or 1), rest
    if not size.isdigit():
        raise SystemExit(f"retrieval-contract all: -n takes a number of runs at once or auto, not {size!r}")
    return int(size), rest


def _weight(run: tuple[str, str, str | None, str | None]) -> tuple[int, int]:
    """Longest first: a profile's own run (by its requirements) before a mapped one."""
    from contract_tests.contracts import specs as contracts
    profile_id, _transport, _phase, mapping = run
    return (0 if mapping else 1, len(contracts.load_profile(profile_id).requirements))


def judge_reference_run(folder: Path, profile_id: str) -> list[str]:
    """Why one run of `all` (its report folder) falls short of the reference's standard
    (contract_tests/cli/reference_check.py); [] when it holds."""
    import json

    from contract_tests.cli.reference_check import reference_problems
    from contract_tests.contracts.specs import load_profile
    report = folder / "results.json"
    try:
        results = json.loads(report.read_text(encoding="utf-8")) if report.is_file() else None
    except ValueError as exc:
        return [f"results.json is not JSON: {exc}"]
    return reference_problems(results, load_profile(profile_id))


def run_matrix(args: list[str]) -> int:
    """Every run of the matrix, each in its own process (the plugin keeps per-run state) and report
    folder, `-n N` of them at a time (each run in one process: the pool uses the cores, not
    xdist within a run). A run's output is kept in its report folder (output.txt) and printed
    whole when it fails; one line is printed as each run ends."""
    import subprocess
    import tempfile
    import time
    from concurrent.futures import ThreadPoolExecutor

    from contract_tests.cli.reference_check import narrowed

    report = None
    if "--report" in args:
        i = args.index("--report")
        report, args = args[i + 1], args[:i] + args[i + 2:]
    size, args = _pool_size(args)
    scratch = None if report else tempfile.TemporaryDirectory(prefix="rc-all-")
    folder = Path(report) if report else Path(scratch.name)
    runs = sorted(matrix(), key=_weight, reverse=True)
    print(f"retrieval-contract all: {len(runs)} runs, {size} at a time", flush=True)
    narrowing = narrowed(args)
    if narrowing:
        print(f"retrieval-contract all: {narrowing} narrows the runs, so each is judged by its exit status alone "
              "(not held to every requirement passing on the reference)", flush=True)
    started_all = time.monotonic()

    def one(run: tuple[str, str, str | None, str | None]) -> tuple[str, int, float, Path]:
        profile_id, transport, phase, mapping = run
        example = Path(mapping).stem if mapping else None
        name = "-".join(x for x in (profile_id, example, transport, phase) if x)
        argv = ["--profile", profile_id, "--transport", transport] + (["--phase", phase] if phase else []) + (
            ["--mapping", mapping] if mapping else []) + ["--report", str(folder / name), "-n", "0"]
        (folder / name).mkdir(parents=True, exist_ok=True)
        output = folder / name / "output.txt"
        began = time.monotonic()
        with output.open("wb") as out:
            code = subprocess.call([sys.executable, "-m", "contract_tests.cli", *argv, *args],
                                   stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        seconds = time.monotonic() - began
        problems = [] if narrowing or code != 0 else judge_reference_run(folder / name, profile_id)
        if problems:
            with output.open("a", encoding="utf-8") as out:
                out.write(f"\nretrieval-contract all: the reference's run falls short ({len(problems)}):\n"
                          + "".join(f"  {problem}\n" for problem in problems))
            code = 1
        print(f"  {'pass' if code == 0 else f'FAIL (exit {code})':<14} {name:<40} {seconds:6.1f} s"
              + (f"  ({problems[0]}{'; ...' if len(problems) > 1 else ''})" if problems else ""), flush=True)
        return name, code, seconds, output

    try:
        with ThreadPoolExecutor(max_workers=size) as pool:
            results = list(pool.map(one, runs))
        for name, code, _seconds, output in results:
            if code != 0:
                print(f"\nretrieval-contract all: {name} (exit {code}), its output:", flush=True)
                sys.stdout.write(output.read_text(encoding="utf-8", errors="replace"))
        print(f"\nretrieval-contract all: {len(results)} runs in {time.monotonic() - started_all:.1f} s"
              + (f"; each run's output is in {folder}/NAME/output.txt" if report else ""))
        for name, code, seconds, _output in sorted(results):
            print(f"  {'pass' if code == 0 else f'FAIL (exit {code})':<14} {name:<40} {seconds:6.1f} s")
    finally:
        if scratch is not None:
            scratch.cleanup()
    from contract_tests.reports.merge import exit_status
    return exit_status([code for _name, code, _s, _o in results])  # the suite's precedence: 8, 9, 1, 7


if __name__ == "__main__":
    sys.exit(main())
