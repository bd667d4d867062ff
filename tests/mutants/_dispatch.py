"""The mutant registry and the command-line entry shared by the mutant launchers.

A launcher (`launch.py`, `launch_retrieval_tools.py`, `launch_hosted.py`) patches a reference
server from the outside and starts it: `launcher NAME [server args]`. Each deliberate defect is
declared beside its patch with `@mutant(ids..., profile=...)`: the requirement ids the suite
must report for it. Each correct variant (a server that takes the other side of seed-silent
choices, which the suite must pass) is declared with `@variant(profile=...)`. The self-tests
(tests/test_mutants.py, tests/test_variants.py) and the docs' mutants table come from here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Mutant:
    name: str
    patch: Callable[[], None]
    profile: str
    trips: tuple[str, ...] = ()
    transport: str | None = None
    phases: tuple[str, ...] = ()
    launcher: str = ""
    summary: str = ""
    variant: bool = False
    options: tuple[str, ...] = field(default=())  # further suite options (e.g. --declare FILE)
    control: str | None = None  # a requirement the mutant leaves intact (default: see control())
    preflight: bool = False     # its catch needs the version the preflight negotiates (the self-test
                                # skips the preflight otherwise: a catch never rests on it)
    fresh: bool = False         # its catch reads the server's own process (/proc: open files, sockets,
                                # memory): started as a new process, never through the fork server

    def control_id(self, requirements) -> str:
        """The requirement whose test must still pass against the mutant: the server is
        otherwise sound, so what the suite reports is the defect, not a broken server. The
        first of the given one, tools/list (MCP-TOOLS-001) and the profile's own tools listing
        that the mutant does not trip."""
        prefix = next(iter(self.trips), "X-").split("-")[0]
        for req in (self.control, "MCP-TOOLS-001", f"{prefix}-TOOL-001"):
            if req and req in requirements and req not in self.trips:
                return req
        raise LookupError(f"{self.name}: no control requirement (declare one with control=)")


REGISTRY: dict[str, Mutant] = {}


def _register(fn, **kwargs) -> Callable[[], None]:
    doc = (fn.__doc__ or "").strip().splitlines()
    launcher = sys.modules[fn.__module__].__file__ or ""
    REGISTRY[fn.__name__] = Mutant(name=fn.__name__, patch=fn, launcher=launcher, summary=doc[0] if doc else "",
                                   **kwargs)
    return fn


def mutant(*trips: str, profile: str, transport: str | None = None, phases: tuple[str, ...] = (),
           control: str | None = None, options: tuple[str, ...] = (), preflight: bool = False, fresh: bool = False):
    """A deliberate defect the suite must report under each of `trips`, while the test of
    `control` (default: Mutant.control_id) still passes."""
    return lambda fn: _register(fn, profile=profile, trips=tuple(trips), transport=transport, phases=phases,
                                control=control, options=options, preflight=preflight, fresh=fresh)


def variant(*, profile: str, transport: str | None = None, phases: tuple[str, ...] = (),
            options: tuple[str, ...] = ()):
    """A correct server taking the other side of seed-silent choices: the suite must pass it."""
    return lambda fn: _register(fn, profile=profile, transport=transport, phases=phases, variant=True,
                                options=options)


def run(prog: str, server_main: Callable[[list[str]], int]) -> int:
    mutants = {name: m for name, m in REGISTRY.items() if m.launcher.endswith(prog)}
    if len(sys.argv) < 2 or sys.argv[1] not in mutants:
        print(f"usage: {prog} MUTANT [server args]; mutants: {', '.join(mutants)}", file=sys.stderr)
        return 2
    mutants[sys.argv[1]].patch()  # patch the reference, then start it as usual
    return server_main(sys.argv[2:])
