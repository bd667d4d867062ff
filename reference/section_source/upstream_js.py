"""Run SectionSource v0 on the upstream parser stack (remark-parse 11 on micromark 4, js-yaml 4)
through node: the oracle for the golden vectors and the differential test.

The npm packages are installed on first use, from the committed lockfile, into a cache
directory outside version control (RC_UPSTREAM_JS_CACHE, else .cache/upstream-js in the
checkout); each lockfile and script version gets its own subdirectory.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).resolve().parent / "upstream_js"
FILES = ("package.json", "package-lock.json", "outline.mjs")
DEFAULT_CACHE = Path(__file__).resolve().parents[2] / ".cache" / "upstream-js"


class UpstreamUnavailable(RuntimeError):
    """node or npm is missing, or the npm packages cannot be installed."""


def missing_tools() -> list[str]:
    return [tool for tool in ("node", "npm") if shutil.which(tool) is None]


def _cache_root() -> Path:
    return Path(os.environ.get("RC_UPSTREAM_JS_CACHE") or DEFAULT_CACHE)


def install(timeout: float = 300) -> Path:
    """The directory holding outline.mjs and its node_modules, installed if needed."""
    if missing_tools():
        raise UpstreamUnavailable(f"not on PATH: {', '.join(missing_tools())}")
    digest = hashlib.sha256(b"".join((SOURCE / name).read_bytes() for name in FILES)).hexdigest()
    root = _cache_root()
    target = root / digest[:16]
    marker = target / ".installed"
    if marker.is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    # pytest-xdist workers may get here together: one installs, the others wait.
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.is_file():
            return target
        target.mkdir(exist_ok=True)
        for name in FILES:
            shutil.copyfile(SOURCE / name, target / name)
        proc = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
            cwd=target, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise UpstreamUnavailable(f"npm ci failed: {proc.stderr.strip()[-2000:]}")
        marker.write_text("ok\n")
    return target


def run(cases: Iterable[dict[str, Any]], timeout: float = 600) -> list[dict[str, Any]]:
    """Answers for cases of {id, path, markdown}: {id, output[, implementation_defined]} or
    {id, error}, in the same order."""
    directory = install()
    lines = "".join(json.dumps({k: c[k] for k in ("id", "path", "markdown")}) + "\n" for c in cases)
    proc = subprocess.run(["node", "outline.mjs"], cwd=directory, input=lines.encode("utf-8"),
                          capture_output=True, timeout=timeout)
    if proc.returncode != 0:
        raise UpstreamUnavailable(f"node failed: {proc.stderr.decode(errors='replace')[-2000:]}")
    # Split on LF only: JSON text may hold a raw U+2028, which str.splitlines would split on.
    answers = [json.loads(line) for line in proc.stdout.decode("utf-8").split("\n") if line.strip()]
    if len(answers) != lines.count("\n"):
        raise UpstreamUnavailable("node answered a different number of cases")
    return answers
