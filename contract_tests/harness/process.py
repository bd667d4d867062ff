"""Turn the user's --server-cmd into an argv, and give a server a private environment."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path


def render_command(template: str, values: Mapping[str, str]) -> list[str]:
    """Split a command template like a POSIX shell, then fill {placeholders} per argument.

    Substituting after splitting keeps paths with spaces in one argument. A relative path to a
    file that exists where the suite runs is made absolute, since the server starts in a
    private working directory (so that files it writes there are seen).
    """
    values = {"python": sys.executable, **values}
    argv = []
    for arg in shlex.split(template):
        literal = not any("{" + key + "}" in arg for key in values)
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        argv.append(_anchored(arg) if literal else arg)
    if not argv:
        raise ValueError("empty server command")
    return argv


def _anchored(arg: str) -> str:
    """A relative path to an existing file (e.g. `server.py`, `dist/server.js`) made absolute:
    servers start in a private directory, but the command is written where the suite runs."""
    if arg.startswith("-") or os.path.isabs(arg) or not os.path.isfile(arg):
        return arg
    return os.path.abspath(arg)


def private_environment(home: Path) -> dict[str, str]:
    """The server's environment: the caller's, with HOME, XDG and temp dirs under `home`.

    Data-integrity checks then see any cache or sidecar the server writes.
    """
    env = dict(os.environ)
    dirs = {
        "HOME": home / "home",
        "XDG_CONFIG_HOME": home / "xdg-config",
        "XDG_CACHE_HOME": home / "xdg-cache",
        "XDG_DATA_HOME": home / "xdg-data",
        "XDG_STATE_HOME": home / "xdg-state",
        "TMPDIR": home / "tmp",
    }
    for key, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        env[key] = str(path)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # Any network attempt through a proxy-aware client goes nowhere.
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env[key] = "http://127.0.0.1:9"
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    return env
