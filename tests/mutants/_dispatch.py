"""Command-line entry shared by the mutant launchers: `launcher MUTANT [server args]`."""

from __future__ import annotations

import sys
from collections.abc import Callable


def run(prog: str, mutants: dict[str, Callable[[], None]], server_main: Callable[[list[str]], int]) -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in mutants:
        print(f"usage: {prog} MUTANT [server args]; mutants: {', '.join(mutants)}", file=sys.stderr)
        return 2
    mutants[sys.argv[1]]()  # patch the reference, then start it as usual
    return server_main(sys.argv[2:])
