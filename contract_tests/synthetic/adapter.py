"""What the shared concern tests need of a profile's synthetic data, whatever its kind.

A fixture kind (a vault on disk, docs and code roots, an upstream note-store double) implements
ContractFixture; the plugin and the concern tests speak only to this interface, so they name
no kind. Each kind registers itself in KINDS; a self-test checks the registry against the enum
of fixture kinds in schemas/spec.schema.json.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from contract_tests.transport import fsevents
from contract_tests.transport.process import FixtureSetupError  # noqa: F401  (re-exported: the kinds raise it)


@dataclass
class Reads:
    """What the server read while a block ran: locations relative to the fixture (a root's
    name, then the path inside it, e.g. `vault/inbox/example.md`, `outside/secret.md`), and
    requests that are not reads of one item (e.g. `GET /api/v1/notes`). `seen` is False where
    the kind cannot observe reads (no inotify): checks that need them then skip the read part."""
    seen: bool = True
    locations: list[str] = field(default_factory=list)

    def outside(self, root: str) -> list[str]:
        """Everything read that is not inside the root `root`."""
        return [loc for loc in self.locations if loc != root and not loc.startswith(root + "/")]

    def items(self, root: str) -> list[str]:
        """The root-relative paths read inside `root`."""
        return [loc[len(root) + 1:] for loc in self.locations if loc.startswith(root + "/")]


class ContractFixture:
    """The interface; subclasses set `kind` and implement what their profile uses."""

    kind: ClassVar[str] = ""
    canaries: dict[str, str]
    # The settings it was built with (e.g. the commands that index it): a private copy of the
    # fixture is built with the same ones.
    settings: dict[str, Any] = {}

    # -- starting servers --------------------------------------------------------------
    def placeholders(self) -> dict[str, str]:
        """Values for the server command's {placeholders} and the profile's environment."""
        raise NotImplementedError

    def call_values(self) -> dict[str, str]:
        """Values for {placeholders} in the spec's sweep calls (e.g. a canary to send in a query)."""
        return {}

    def session_headers(self, token: str | None = None) -> dict[str, str]:
        """HTTP headers a session needs (a bearer token for hosted fixtures)."""
        return {}

    # -- content -----------------------------------------------------------------------
    def items(self) -> list[str]:
        """Every readable item (note, file) a sweep calls the tools on, as the tools name it."""
        raise NotImplementedError

    def write(self, relative: str, text: str) -> None:
        """Create or change an item the server may read (for edit and fuzzing checks)."""
        raise NotImplementedError

    def remove(self, relative: str) -> None:
        raise NotImplementedError

    # -- observing the server ----------------------------------------------------------
    @contextlib.contextmanager
    def reading(self) -> Iterator[Reads]:
        """Record what the server reads while the block runs."""
        raise NotImplementedError
        yield  # pragma: no cover

    @contextlib.contextmanager
    def watching(self) -> Iterator["ContractFixture"]:
        """Keep one observer for many `reading()` blocks (a sweep of hundreds of calls)."""
        yield self

    def snapshot(self) -> Any:
        """Opaque state of everything a read-only server must leave unchanged."""
        raise NotImplementedError

    def changes(self, before: Any) -> list[str]:
        """What changed since `before` (files written, requests that were not reads)."""
        raise NotImplementedError

    # -- path attacks ------------------------------------------------------------------
    def attack_roots(self) -> list[str]:
        """The names of the roots the profile's path tools address."""
        raise NotImplementedError

    def attack_placeholders(self, root: str) -> dict[str, str]:
        """Values for the corpus's {vault} (the root under attack) and {root} (its parent)."""
        raise NotImplementedError

    def derived_attacks(self, root: str) -> list[dict[str, Any]]:
        """Attacks made from this fixture's layout, in the corpus's entry format: climbing out
        and back in through the root's own name and through each sibling, `x/..` to the
        root, and through each symlink."""
        return []

    @classmethod
    def running_server_problem(cls, options: dict[str, Any], environ: Any) -> str | None:
        """Why --server-url cannot be used with this kind (None: it can)."""
        return f"the {cls.kind} fixture is made of local files the suite creates; use --server-cmd"

    @classmethod
    def running_server_settings(cls, options: dict[str, Any], environ: Any) -> dict[str, Any]:
        """Build settings that make the fixture match an already running server."""
        return {}

    def allowed_ports(self) -> tuple[int, ...]:
        """Loopback ports the server may connect to (an upstream double the fixture runs)."""
        return ()

    injection_texts: tuple[str, ...] = ()

    def close(self) -> None:
        pass


KINDS: dict[str, type[ContractFixture]] = {}


def register(cls: type[ContractFixture]) -> type[ContractFixture]:
    KINDS[cls.kind] = cls
    return cls


class DiskFixture(ContractFixture):
    """A fixture of files under `root`; reads are seen through inotify."""

    root: Path
    _watcher: Any = None

    @contextlib.contextmanager
    def reading(self) -> Iterator[Reads]:
        reads = Reads(seen=fsevents.available())
        if not reads.seen:
            yield reads
            return
        if self._watcher is not None:  # inside watching(): one inotify instance for the sweep
            self._watcher.drain()
            yield reads
            opened = self._watcher.opened()
        else:
            with fsevents.OpenWatcher(self.root) as watcher:
                yield reads
                opened = watcher.opened()
        reads.locations = sorted(p.relative_to(self.root).as_posix() for p in opened)

    @contextlib.contextmanager
    def watching(self) -> Iterator["DiskFixture"]:
        if not fsevents.available() or self._watcher is not None:
            yield self
            return
        with fsevents.OpenWatcher(self.root) as watcher:
            self._watcher = watcher
            try:
                yield self
            finally:
                self._watcher = None

    def snapshot(self) -> Any:
        return snapshot(self.root)

    def changes(self, before: Any) -> list[str]:
        return snapshot_diff(before, snapshot(self.root))


def derived_disk_attacks(root: Path, root_name: str, inside_file: str, inside_dir: str,
                         siblings: dict[str, str], symlinks: list[str]) -> list[dict[str, Any]]:
    """Attacks built from a root's own layout (see ContractFixture.derived_attacks).

    `inside_file` / `inside_dir`: an existing file and directory of the root (root-relative);
    `siblings`: sibling directory name -> a file inside it; `symlinks`: root-relative paths of
    symlinks that lead out of the root (a path through each must fail).
    """
    base = root.name
    out = [
        {"id": f"derived-back-in-{root_name}", "category": "traversal", "path": f"../{base}/{inside_file}",
         "expect": "reject"},
        {"id": f"derived-back-in-dir-{root_name}", "category": "traversal", "path": f"../{base}/{inside_dir}",
         "expect": "reject"},
        {"id": f"derived-down-up-{root_name}", "category": "traversal", "path": f"{inside_dir}/..",
         "expect": "reject"},
        {"id": f"derived-down-up-back-{root_name}", "category": "traversal",
         "path": f"{inside_dir}/../{inside_file}", "expect": "reject"},
        {"id": f"derived-absolute-inside-{root_name}", "category": "absolute", "path": f"{root}/{inside_file}",
         "expect": "error"},
    ]
    for sibling, target in sorted(siblings.items()):
        out.append({"id": f"derived-sibling-{sibling}-{root_name}", "category": "traversal",
                    "path": f"../{sibling}/{target}", "expect": "reject"})
        out.append({"id": f"derived-sibling-down-up-{sibling}-{root_name}", "category": "traversal",
                    "path": f"{inside_dir}/../../{sibling}/{target}", "expect": "reject"})
    for link in symlinks:
        real = os.readlink(root / link)
        out.append({"id": f"derived-symlink-{link.replace('/', '-')}-{root_name}", "category": "symlink",
                    "path": link if not (root / link).is_dir() else f"{link}/{_first_file(root / link)}",
                    "expect": "error", "target": real})
    return out


def plant_escapes(root: Path, vault: Path, text: str, outside: list[str], links: dict[str, str]) -> None:
    """Files beside the vault that escapes aim at (each holding `text`, with its canary), and the
    symlinks of vault/links (name -> relative target), out to them or back inside."""
    for rel in outside:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (vault / "links").mkdir()
    for name, target in links.items():
        link = vault / "links" / name
        os.symlink(target, link, target_is_directory=(link.parent / target).is_dir())


def _first_file(directory: Path) -> str:
    for dirpath, _dirs, files in os.walk(directory):
        if files:
            return (Path(dirpath) / sorted(files)[0]).relative_to(directory).as_posix()
    return "missing.md"


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under root (symlinks not followed): kind, size, mtime_ns, content hash."""
    import hashlib
    entries: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            st = path.lstat()
            if path.is_symlink():
                entries[rel] = ("link", os.readlink(path), st.st_mtime_ns)
            elif path.is_dir():
                entries[rel] = ("dir",)
            else:
                try:
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                except PermissionError:
                    digest = "unreadable"
                entries[rel] = ("file", st.st_size, st.st_mtime_ns, digest)
    return entries


def snapshot_diff(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    changed = [f"new: {k}" for k in after.keys() - before.keys()]
    changed += [f"removed: {k}" for k in before.keys() - after.keys()]
    changed += [f"changed: {k}" for k in before.keys() & after.keys() if before[k] != after[k]]
    return sorted(changed)
