"""The scoreboard's catalog (schemas/scoreboard-catalog.schema.json): which servers, how each is
installed, how it takes its root, and with which mapping it is judged."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract_tests import __version__
from contract_tests.contracts import specs as contracts

LANGUAGES = {"npm": "JavaScript", "pypi": "Python", "command": "local"}
UNJUDGED = ("note", "checked", "language")  # catalog keys that do not change a run


class CatalogError(ValueError):
    """A catalog the scoreboard cannot use; the message names the file and every problem."""


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # npm, pypi or command
    package: str  # the package's name (npm, pypi) or the command line (command)
    version: str | None
    raw: dict[str, Any]
    folder: Path  # the catalog's folder: mapping files are relative to it
    args: tuple[str, ...] = ("{root}",)
    env: dict[str, str] = field(default_factory=dict)
    beside: tuple[str, ...] = ()

    @property
    def spec(self) -> str:
        """What the registry resolves: `@scope/name@1.2.3`, `name==1.2.3`."""
        return f"{self.package}@{self.version}" if self.kind == "npm" else f"{self.package}=={self.version}"

    @property
    def language(self) -> str:
        return self.raw.get("language") or LANGUAGES[self.kind]

    @property
    def runtime(self) -> dict[str, str]:
        return dict(self.raw.get("runtime") or {})

    @property
    def mapping(self) -> str | dict[str, Any]:
        """"auto", an absolute mapping file, or an inline mapping."""
        value = self.raw.get("mapping", "auto")
        if isinstance(value, str) and value != "auto":
            return str((self.folder / value).resolve())
        return value

    def mapping_text(self) -> str:
        mapping = self.mapping
        if isinstance(mapping, dict):
            return json.dumps(mapping, sort_keys=True)
        if mapping == "auto":
            return "auto"
        return Path(mapping).read_text(encoding="utf-8")

    def key(self) -> str:
        """What a rerun compares: the entry as written (but for what does not change its run: its
        note, its checked findings, its language), its mapping's text, and the suite (its version
        and the requirements it judges by). Unchanged, the entry's last result stands."""
        digest = hashlib.sha256()
        run = {k: v for k, v in self.raw.items() if k not in UNJUDGED}
        digest.update(json.dumps(run, sort_keys=True).encode())
        digest.update(self.mapping_text().encode())
        digest.update(suite_fingerprint().encode())
        return digest.hexdigest()[:16]


def suite_fingerprint() -> str:
    """The suite's version and the text of the specs a board is judged by."""
    digest = hashlib.sha256(__version__.encode())
    for spec_id in ("generic-files", "mcp-base"):
        digest.update((contracts.contracts_root() / "specs" / f"{spec_id}.yaml").read_bytes())
    return f"{__version__}+{digest.hexdigest()[:8]}"


_PACKAGE = re.compile(r"^(?P<kind>npm|pypi|command):(?P<rest>.+)$")


def _entry(raw: dict[str, Any], folder: Path) -> Entry:
    match = _PACKAGE.match(raw["package"])
    assert match  # the schema's pattern
    kind, rest = match["kind"], match["rest"].strip()
    if kind == "npm":
        name, _, version = rest.rpartition("@")
    elif kind == "pypi":
        name, _, version = rest.partition("==")
    else:
        name, version = rest, None
    return Entry(name=raw["name"], kind=kind, package=name, version=version, raw=raw, folder=folder,
                 args=tuple(raw.get("args", ["{root}"] if kind != "command" else [])),
                 env=dict(raw.get("env") or {}), beside=tuple(raw.get("beside") or ()))


def load(path: str | Path) -> list[Entry]:
    """Every entry of the catalog at `path`, checked against its schema and for what the schema
    cannot say (unique names, mapping files that exist, placeholders that exist)."""
    path = Path(path)
    data = contracts.read_yaml(path, str(path), "the catalog", CatalogError)
    problems = [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
                for e in contracts.validator("scoreboard-catalog.schema.json").iter_errors(data)]
    if problems:
        raise CatalogError(f"{path}: not a valid catalog (schemas/scoreboard-catalog.schema.json):\n  "
                           + "\n  ".join(problems[:20]))
    entries, seen = [], set()
    for i, raw in enumerate(data["servers"]):
        entry = _entry(raw, path.parent.resolve())
        where = f"servers/{i} ({entry.name})"
        if entry.name in seen:
            problems.append(f"{where}: the name is used twice")
        seen.add(entry.name)
        mapping = entry.mapping
        if isinstance(mapping, str) and mapping != "auto" and not Path(mapping).is_file():
            problems.append(f"{where}: no mapping file {raw['mapping']} beside the catalog")
        texts = [*entry.args, *entry.env.values(), entry.package if entry.kind == "command" else ""]
        if raw.get("config") is None and any("{config}" in t for t in texts):
            problems.append(f"{where}: {{config}} is used but the entry has no config")
        if not any("{root}" in t for t in [*texts, (raw.get("config") or {}).get("text", "")]):
            problems.append(f"{where}: nothing gives the server its root: put {{root}} in args, env or config")
        entries.append(entry)
    if problems:
        raise CatalogError(f"{path}: " + "\n  ".join(["the catalog has problems:", *problems]))
    return entries
