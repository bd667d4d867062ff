"""Starting a catalog server in a sandbox: `python -m contract_tests.scoreboard.sandbox SPEC ROOT`.

The suite starts this launcher as the server's command (its private HOME is the working
directory, {root} the folder to serve). The launcher writes the entry's config file, fills
{root} and {config}, and replaces itself with the server, isolated by the best tool there is:

- bwrap (bubblewrap): no network, a new root holding only the system's folders (read-only), the
  install (read-only), the fixture and the private HOME/TMP;
- unshare: no network (a network namespace of its own); HOME and TMP private; the rest of the
  file system is not hidden;
- none: HOME and TMP private, as for every server the suite starts.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

DESCRIPTIONS = {
    "bwrap": "bubblewrap: no network; only the fixture, the install and the system's folders visible "
             "(read-only but the fixture); private HOME and TMP",
    "unshare": "unshare: no network (a network namespace of its own); private HOME and TMP; "
               "other files are not hidden",
    "none": "none: private HOME and TMP only (the server can reach the network and the machine's files)",
}
SYSTEM = ("/usr", "/etc", "/opt")


@functools.cache
def works(tool: str) -> bool:
    """`tool` can isolate a process on this machine (it is installed and the kernel allows it)."""
    if tool == "none":
        return True
    argv = {"bwrap": ["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--dev", "/dev", "--proc", "/proc", "true"],
            "unshare": ["unshare", "--user", "--map-root-user", "--net", "true"]}[tool]
    if not shutil.which(argv[0]):
        return False
    try:
        return subprocess.run(argv, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def choose(wanted: str = "auto") -> str:
    """The isolation a board's runs get: `wanted`, or the best that works here under auto."""
    if wanted == "auto":
        return next(tool for tool in ("bwrap", "unshare", "none") if works(tool))
    if not works(wanted):
        raise RuntimeError(f"--isolation {wanted}: {wanted} cannot isolate a process on this machine "
                           "(not installed, or the kernel refuses its namespaces)")
    return wanted


def _bwrap(argv: list[str], visible: list[str], writable: list[str]) -> list[str]:
    wrap = ["bwrap", "--die-with-parent", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for top in sorted(os.listdir("/")):  # merged /usr: /bin, /lib ... are symlinks into it
        path = "/" + top
        if os.path.islink(path):
            wrap += ["--symlink", os.readlink(path), path]
    for path in (*SYSTEM, *visible):
        if os.path.exists(path):
            wrap += ["--ro-bind", path, path]
    for path in writable:
        wrap += ["--bind", path, path]
    return wrap + ["--chdir", os.getcwd(), "--", *argv]


def command(spec: dict, root: str) -> tuple[list[str], dict[str, str]]:
    """The argv and environment that start the server of `spec` on `root`, isolated."""
    values = {"{root}": root}
    config = spec.get("config")
    if config:  # in the private HOME the suite gives the server (its working directory holds HOME)
        target = Path(os.environ.get("HOME") or os.getcwd()) / config["name"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(config["text"].replace("{root}", root), encoding="utf-8")
        values["{config}"] = str(target)

    def fill(text: str) -> str:
        for key, value in values.items():
            text = text.replace(key, value)
        return text

    argv = [fill(a) for a in spec["argv"]]
    env = dict(os.environ)
    env.update({k: fill(v) for k, v in spec.get("env", {}).items()})
    isolation = spec.get("isolation", "none")
    if isolation == "bwrap":
        home = Path(env.get("HOME", os.getcwd())).parent  # HOME, XDG and TMPDIR, side by side
        fixture = str(Path(root).parent)  # the root and the traps beside it
        argv = _bwrap(argv, spec.get("visible", []), [fixture, str(home)])
    elif isolation == "unshare":
        argv = ["unshare", "--user", "--map-root-user", "--net", "--", *argv]
    return argv, env


def main(args: list[str]) -> int:
    if len(args) != 2:
        sys.stderr.write("usage: python -m contract_tests.scoreboard.sandbox SPEC.json ROOT\n")
        return 2
    spec = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    argv, env = command(spec, os.path.abspath(args[1]))
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        sys.stderr.write(f"scoreboard sandbox: cannot start {argv[0]}: {exc}\n")
        return 127
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
