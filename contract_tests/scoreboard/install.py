"""Installing a catalog entry into a cache keyed by package and version: an npm prefix per entry,
a venv per PyPI entry (made with uv where it is installed), and the runtime each needs.

An entry whose runtime is not on the machine is `NotRun` (the board says what it needs), never a
failure. Each install's resolved versions are kept (package-lock.json; `pip freeze`)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from .catalog import Entry

INSTALL_TIMEOUT = 900


class NotRun(Exception):
    """The entry cannot run on this machine (a runtime it needs is missing); not a finding."""


class InstallError(Exception):
    """The package could not be installed (the registry, the package itself): the board says so."""


@dataclass
class Installed:
    argv: list[str]  # the executable and its arguments, placeholders kept
    lock: Path | None  # the install's resolved versions
    visible: list[str] = field(default_factory=list)  # folders the server must see read-only
    runtime: str = ""  # "node 20.20.2", "python 3.12.8"
    bin: str | None = None  # the executable chosen of the package's


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "retrieval-contract" / "scoreboard"


def _folder(cache: Path, entry: Entry) -> Path:
    beside = hashlib.sha256("\n".join(entry.beside).encode()).hexdigest()[:8] if entry.beside else ""
    safe = re.sub(r"[^A-Za-z0-9._=@+-]", "_", entry.spec.lstrip("@"))
    return cache / entry.kind / (safe + (f"+{beside}" if beside else ""))


def _run(argv: list[str], cwd: Path | None = None, timeout: float = INSTALL_TIMEOUT) -> str:
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise InstallError(f"{' '.join(argv[:4])} ...: no end in {timeout:.0f} s") from exc
    except OSError as exc:
        raise InstallError(f"{argv[0]}: {exc}") from exc
    if proc.returncode != 0:
        raise InstallError(f"{' '.join(argv)} exited {proc.returncode}: {(proc.stderr or proc.stdout)[-1500:]}")
    return proc.stdout


# -- node ---------------------------------------------------------------------------------------

def node_version() -> str | None:
    node = shutil.which("node")
    if not node:
        return None
    try:
        return subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip().lstrip("v")
    except (OSError, subprocess.TimeoutExpired):
        return None


def _semver_module() -> str | None:
    """npm's own copy of the `semver` package: npm ranges are checked by npm's rules."""
    npm = shutil.which("npm")
    if not npm:
        return None
    for root in (Path(npm).resolve().parent.parent, Path(npm).resolve().parent.parent / "lib" / "node_modules" / "npm"):
        candidate = root / "node_modules" / "semver"
        if (candidate / "package.json").is_file():
            return str(candidate)
    try:
        lib = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    candidate = Path(lib) / "npm" / "node_modules" / "semver"
    return str(candidate) if (candidate / "package.json").is_file() else None


def node_satisfies(version: str, wanted: str) -> bool:
    """`version` is in the npm range `wanted` (">=22", "^18 || >=20"), by npm's semver."""
    module = _semver_module()
    if module is None:
        raise InstallError("npm's semver module was not found: cannot check a Node range")
    script = "const s=require(process.argv[1]);process.stdout.write(String(s.satisfies(process.argv[2],process.argv[3])))"
    out = subprocess.run(["node", "-e", script, module, version, wanted], capture_output=True, text=True, timeout=60)
    return out.stdout.strip() == "true"


def _need_node(wanted: str | None, where: str) -> str:
    have = node_version()
    if have is None:
        raise NotRun(f"needs Node{(' ' + pretty(wanted)) if wanted else ''}: no node on PATH")
    if wanted and not node_satisfies(have, wanted):
        raise NotRun(f"needs Node {pretty(wanted)} ({where}); this machine has {have}")
    return have


def pretty(spec: str) -> str:
    return spec.replace(">=", "≥ ").replace("<=", "≤ ")


def _npm(entry: Entry, cache: Path) -> Installed:
    _need_node(entry.runtime.get("node"), "the catalog")
    if not shutil.which("npm"):
        raise NotRun("needs npm: not on PATH")
    folder = _folder(cache, entry)
    manifest = folder / "node_modules" / entry.package / "package.json"
    if not manifest.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        (folder / "package.json").write_text(json.dumps({"private": True}) + "\n")
        try:
            _run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", entry.spec, *entry.beside], cwd=folder)
        except InstallError:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    package = json.loads(manifest.read_text(encoding="utf-8"))
    engines = (package.get("engines") or {}).get("node")
    node = _need_node(engines, "its package.json engines") if engines else node_version()
    bins = package.get("bin") or {}
    if isinstance(bins, str):
        bins = {entry.package.rpartition("/")[2]: bins}
    wanted = entry.raw.get("bin")
    if wanted:
        if wanted not in bins:
            raise InstallError(f"{entry.spec} has no executable {wanted!r} (it has {', '.join(sorted(bins)) or 'none'})")
        chosen = wanted
    elif len(bins) == 1:
        chosen = next(iter(bins))
    else:
        raise InstallError(f"{entry.spec} installs {len(bins)} executables ({', '.join(sorted(bins)) or 'none'}): "
                           "name one with `bin:`")
    script = (manifest.parent / bins[chosen]).resolve()
    node_bin = Path(shutil.which("node") or "node").resolve()
    return Installed(argv=[str(node_bin), str(script), *entry.args], lock=folder / "package-lock.json",
                     visible=[str(folder), str(node_bin.parent.parent)], runtime=f"node {node}", bin=chosen)


# -- python -------------------------------------------------------------------------------------

def pythons() -> list[tuple[Version, str]]:
    """The Python interpreters on PATH (python3.N and python3), newest first."""
    found: dict[str, tuple[Version, str]] = {}
    names = [f"python3.{minor}" for minor in range(20, 8, -1)] + ["python3"]
    for name in names:
        path = shutil.which(name)
        if not path:
            continue
        try:
            out = subprocess.run([path, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                                 capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip():
            version = Version(out.stdout.strip())
            found.setdefault(str(version), (version, path))
    return sorted(found.values(), reverse=True)


def _python_for(entry: Entry) -> tuple[Version, str]:
    wanted = entry.runtime.get("python")
    try:
        spec = SpecifierSet(wanted) if wanted else SpecifierSet()
    except InvalidSpecifier as exc:
        raise InstallError(f"runtime.python {wanted!r} is not a version range: {exc}") from exc
    for version, path in pythons():
        if version in spec:
            return version, path
    raise NotRun(f"needs Python {pretty(wanted or '3')}; this machine has "
                 + (", ".join(str(v) for v, _ in pythons()) or "no python3 on PATH"))


def _pypi(entry: Entry, cache: Path) -> Installed:
    version, interpreter = _python_for(entry)
    folder = _folder(cache, entry)
    venv = folder / "venv"
    lock = folder / "requirements.lock.txt"
    python = venv / "bin" / "python"
    if not lock.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        uv = shutil.which("uv")
        try:
            if uv:
                _run([uv, "venv", "-q", "-p", interpreter, str(venv)])
                _run([uv, "pip", "install", "-q", "--python", str(python), entry.spec, *entry.beside])
                freeze = _run([uv, "pip", "freeze", "--python", str(python)])
            else:
                _run([interpreter, "-m", "venv", str(venv)])
                _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", entry.spec, *entry.beside])
                freeze = _run([str(python), "-m", "pip", "freeze", "--disable-pip-version-check"])
        except InstallError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            needs = re.search(r"[Rr]equires-[Pp]ython\s*['\"]?([<>=!~][^'\"\s;]+)", str(exc))
            if needs:
                raise NotRun(f"needs Python {pretty(needs[1])} (its Requires-Python); newest here {version}") from exc
            raise
        lock.write_text(freeze, encoding="utf-8")
    scripts = _run([str(python), "-c", (
        "import importlib.metadata as m, sys\n"
        "d = m.distribution(sys.argv[1])\n"
        "print('\\n'.join(e.name for e in d.entry_points if e.group == 'console_scripts'))"), entry.package]).split()
    wanted = entry.raw.get("bin")
    if wanted:
        if not (venv / "bin" / wanted).exists():
            raise InstallError(f"{entry.spec} has no executable {wanted!r} (it has {', '.join(scripts) or 'none'})")
        chosen = wanted
    elif len(scripts) == 1:
        chosen = scripts[0]
    else:
        raise InstallError(f"{entry.spec} installs {len(scripts)} console scripts ({', '.join(scripts) or 'none'}): "
                           "name one with `bin:`")
    base = _run([str(python), "-c", "import sys; print(sys.base_prefix)"]).strip()
    return Installed(argv=[str(venv / "bin" / chosen), *entry.args], lock=lock, visible=[str(folder), base],
                     runtime=f"python {version}", bin=chosen)


def install(entry: Entry, cache: Path) -> Installed:
    """The entry, installed (or found in the cache) and ready to start. Two entries of one package
    and version (in `-j` threads, or shards on one machine) take turns: one installs, the other
    finds it installed."""
    if entry.kind in ("npm", "pypi"):
        folder = _folder(cache, entry)
        lock = folder.parent / f"{folder.name}.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        with lock.open("w") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            return _npm(entry, cache) if entry.kind == "npm" else _pypi(entry, cache)
    import shlex
    argv = [sys.executable if part == "{python}" else part for part in shlex.split(entry.package)] + list(entry.args)
    # a relative path to an existing file is the caller's, as with --server-cmd (the server starts elsewhere)
    argv = [os.path.abspath(a) if not a.startswith("-") and not os.path.isabs(a) and os.path.isfile(a) else a
            for a in argv]
    return Installed(argv=argv, lock=None, visible=[os.getcwd(), sys.prefix, sys.base_prefix],
                     runtime=f"local command (python {sys.version.split()[0]})")
