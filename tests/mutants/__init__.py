"""Deliberate defects and correct variants of the reference servers (see _dispatch.py).

A launcher takes the reference's own arguments after the mutant's name, so a mutant's commands
are the profile's reference commands (specs/<profile>.yaml `reference`) with the launcher in
place of the reference module: a new profile brings its launcher, `launch_<anything>.py`, and
nothing here changes."""

from __future__ import annotations

import importlib
import os
import re
import shlex
from pathlib import Path

HERE = Path(__file__).resolve().parent
# `{python} -m reference.<package>[.<module>]` in a reference command template
REFERENCE_MODULE = re.compile(r"\{python\} -m reference(?:\.\w+)+")


def registry():
    """Every mutant and variant, by name (importing the launchers registers them)."""
    from tests.mutants import _dispatch
    for path in sorted(HERE.glob("launch*.py")):
        importlib.import_module(f"tests.mutants.{path.stem}")
    return dict(_dispatch.REGISTRY)


def _profile(m):
    from contract_tests.contracts import specs as contracts
    return contracts.load_profile(m.profile)


def command(m) -> str:
    """The suite's --server-cmd for a mutant or variant: the reference's (a mapped profile's: the
    server command of the mapping in its options), through its launcher."""
    profile = _profile(m)
    if "--mapping" in m.options:
        from contract_tests.contracts.mapping import load
        return _through(m, load(m.options[m.options.index("--mapping") + 1])["server"]["cmd"])
    return _through(m, profile.reference_command(m.transport or profile.transports[0]))


def suite_args(m, phase: str | None = None) -> list[str]:
    """--profile, and --transport or --phase, for a mutant or variant; every further command of
    the profile (index, serve, ...) goes through the launcher too."""
    profile = _profile(m)
    args = ["--profile", m.profile]
    if m.transport:
        args += ["--transport", m.transport]
    if profile.phases:
        args += ["--phase", phase or (m.phases[0] if m.phases else profile.default_phase)]
    for role, template in profile.reference_commands().items():
        args += ["--rc-command", f"{role}={_through(m, template)}"]
    return args + list(m.options)


def _through(m, template: str) -> str:
    """A reference command template with the launcher (and the mutant's name) in place of the
    reference module."""
    launcher = f"{{python}} {shlex.quote(m.launcher)} {m.name}"
    forkserver = os.environ.get("RC_FORKSERVER")
    if forkserver and forkserver != "0" and not m.fresh:  # started by this worker's fork server (tests/forkserver.py)
        launcher = f"{{python}} {shlex.quote(str(HERE / 'relay.py'))} {shlex.quote(forkserver)} " \
                   f"{shlex.quote(m.launcher)} {m.name}"
    through, count = REFERENCE_MODULE.subn(lambda _match: launcher, template)
    if count != 1:
        raise ValueError(f"{m.name}: the reference command names the reference module {count} times: {template}")
    return through
