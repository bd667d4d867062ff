"""The generic-files fixture: a root of about a thousand small files, each carrying a token of its
own (so a read that returns the wrong file shows which), and beside the root the traps file
servers fall into.

Layout (like the vault's: policies/path-attacks.yaml relies on it):
  <base>/vault/                         the root the server serves ({root} in the mapping)
    inbox/example.md, notes/alpha.md, notes/deep/nested/gamma-note.md     (the corpus names these)
    bulk/dNN/fNNNN.md                   the rest of the files
    .hidden/secret.md, .env             hidden files (inside the root: serving them is no escape)
    links/inside.md -> ../inbox/example.md                      a symlink that stays inside
    links/escape-file.md -> ../../outside/secret.md, links/escape-dir -> ../../outside
    links/prefix-file.md -> ../../vault_evil/secret.md, links/prefix-dir -> ../../vault_evil
  <base>/vault_evil/, <base>/vault-evil/, <base>/vaultevil/   siblings sharing the root's name prefix
  <base>/outside/secret.md, outside/sub/deeper.md, <base>/secret.md        secrets outside
  <base>/zzbeyond-<outside canary>.md, and one in each folder outside    named after the canary
Every file outside the root holds the `outside` canary, the word OUTSIDE_WORD (what a search for
the outside files' own words asks for) and exactly OUTSIDE_SIZE bytes (so a stat that answers for
one shows it by its size); every folder outside holds a file named after the canary (so a listing
of any of them carries it). <base>'s name holds the `path` canary, so any absolute path of the
fixture carries it. The plain file (inbox/example.md) is PLAIN_SIZE bytes, its token in its
heading: a stat tool that answers with either has read it.
"""

from __future__ import annotations

import functools
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from contract_tests.synthetic.adapter import DiskFixture, derived_disk_attacks, plant_escapes, register
from contract_tests.synthetic.roots import directory_link_attacks

ESCAPE_LINKS = ["links/escape-file.md", "links/escape-dir", "links/prefix-file.md", "links/prefix-dir"]
SIBLINGS = ("vault_evil", "vault-evil", "vaultevil")
OUTSIDE_FILES = ["outside/secret.md", "outside/sub/deeper.md", "secret.md"] + [f"{s}/secret.md" for s in SIBLINGS]
CANARY_CLASSES = ("content", "outside", "path", "hidden")
# A word every inside file holds: what a mapped search looks for in its plain call.
COMMON_WORD = "rcfilesneedle"
# A word only the files outside hold (and the names of the canary-named ones): what a search asks
# for when it probes for an escape. Sorted after secret.md, so no derived attack path names them.
OUTSIDE_WORD = "zzbeyond"
# Byte sizes no other file of the fixture has: the plain file's, and every outside file's.
PLAIN_FILE, PLAIN_SIZE, OUTSIDE_SIZE = "inbox/example.md", 2917, 7919
OUTSIDE_DIRS = ("", "outside", "outside/sub") + SIBLINGS
# The root's own top-level entries, which a mapping's `prepare` may not name: contracts/mapping.py
# OWN_ENTRIES.


def token() -> str:
    return secrets.token_hex(6)


@register
@dataclass
class FilesFixture(DiskFixture):
    kind = "files"
    root: Path                                   # <base>: the served root is root / "vault"
    canaries: dict[str, str]
    tokens: dict[str, str] = field(default_factory=dict)   # root-relative file -> its own token
    hidden: list[str] = field(default_factory=list)        # hidden files (inside the root)

    @property
    def served(self) -> Path:
        return self.root / "vault"

    @functools.cached_property
    def served_real(self) -> str:
        """The served root's real path (the fixture never moves it)."""
        return os.path.realpath(self.served)

    @classmethod
    def build(cls, profile: Any, base: Path, settings: dict[str, Any]) -> "FilesFixture":
        fixture = build_files(base, int(profile.limits.get("files", 1000)))
        fixture.prepare((profile.data.get("mapping") or {}).get("prepare") or {})
        return fixture

    def prepare(self, wanted: dict[str, Any]) -> None:
        """The folders and files a mapping's `prepare` asks for in the root (a server's own marker,
        such as .obsidian/), made before any server starts (mapping.validate checked the paths)."""
        for folder in wanted.get("dirs", []):
            (self.served / folder).mkdir(parents=True, exist_ok=True)
        for relative, text in wanted.get("files", {}).items():
            path = self.served / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    # -- what the server is started on ---------------------------------------------------
    def placeholders(self) -> dict[str, str]:
        return {"root": str(self.served)}

    def items(self) -> list[str]:
        return sorted(self.tokens)

    def file_token(self, relative: str) -> str:
        return self.tokens[relative]

    def owner_of(self, text: str) -> list[str]:
        """The inside files whose token `text` carries."""
        return [rel for rel, tok in self.tokens.items() if f"rcf{tok}" in text]

    def write(self, relative: str, text: str) -> None:
        path = self.served / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def remove(self, relative: str) -> None:
        (self.served / relative).unlink()
        self.tokens.pop(relative, None)

    # -- path attacks ----------------------------------------------------------------------
    def attack_roots(self) -> list[str]:
        return ["vault"]

    def attack_placeholders(self, root: str) -> dict[str, str]:
        return {"vault": str(self.served), "root": str(self.root)}

    def derived_attacks(self, root: str) -> list[dict[str, Any]]:
        siblings = {name: "secret.md" for name in SIBLINGS} | {"outside": "secret.md"}
        return derived_disk_attacks(self.served, "vault", "inbox/example.md", "inbox", siblings, ESCAPE_LINKS) + \
            directory_link_attacks(self.served, "vault", ESCAPE_LINKS) + [
                {"id": "derived-parent-secret-vault", "category": "traversal", "path": "../secret.md",
                 "expect": "reject"},
                {"id": "derived-absolute-prefix-sibling-vault", "category": "sibling-prefix",
                 "path": f"{self.served}-evil/secret.md", "expect": "reject"},
                {"id": "derived-absolute-prefix-joined-vault", "category": "sibling-prefix",
                 "path": f"{self.served}evil/secret.md", "expect": "reject"}]

    def resolve(self, path: str) -> tuple[str, str | None]:
        """What `path` names, read literally (relative to the served root, or absolute; symlinks
        followed): ("inside", the file, or None for a directory), ("outside", None) or
        ("missing", None)."""
        if "\x00" in path:
            return "missing", None
        full = path if os.path.isabs(path) else os.path.join(self.served, path)
        real = os.path.realpath(full)
        served = self.served_real
        if real != served and not real.startswith(served + os.sep):
            return ("outside", None) if os.path.exists(real) else ("missing", None)
        if os.path.isdir(real):
            return "inside", None
        if os.path.isfile(real):
            return "inside", os.path.relpath(real, served).replace(os.sep, "/")
        return "missing", None

    def names_a_link_inside(self, path: str) -> bool:
        """Whether `path` names a symlink that itself lies in the root (its folder, real, inside):
        a stat or a listing of the link, not followed, reads nothing outside."""
        if "\x00" in path:
            return False
        full = os.path.normpath(path if os.path.isabs(path) else os.path.join(self.served, path))
        served = self.served_real
        parent = os.path.realpath(os.path.dirname(full))
        return os.path.islink(full) and (parent == served or parent.startswith(served + os.sep))

    def readings(self, path: str) -> tuple[str, set[str]]:
        """What `path` may name for a server that reads it literally, trims whitespace, decodes
        %-escapes, takes a backslash for a separator or a leading slash for the root (choices of
        its own, none of them a security matter while they stay inside the root): ("inside", the files it may name) if
        any reading lands inside, else the literal reading's kind and no file."""
        literal = self.resolve(path)
        inside = set()
        def trim(text: str) -> str:
            return text.strip().strip("\ufeff\u200b").strip()

        readable = {path, trim(path), unquote(path), trim(unquote(path)), path.replace("\\", "/"),
                    trim(unquote(path).replace("\\", "/"))}
        for variant in readable | {v.lstrip("/") for v in readable}:  # "/x" as the root's own x
            kind, file = self.resolve(variant)
            if kind == "inside":
                inside |= {file} if file else set()
                literal = ("inside", literal[1]) if literal[0] != "inside" else literal
        return literal[0], inside


def build_files(base: Path, count: int) -> FilesFixture:
    c = {cls: f"rc{cls}{token()}" for cls in CANARY_CLASSES}
    fx = FilesFixture(root=base / f"rc-files-{c['path']}", canaries=c)
    fx.served.mkdir(parents=True)

    def add(relative: str, head: str, size: int = 0) -> None:
        fx.tokens[relative] = token()
        text = f"{head}\n\nfile {relative} rcf{fx.tokens[relative]} {COMMON_WORD} {c['content']}\n"
        text = text.replace("{token}", fx.tokens[relative])
        fx.write(relative, padded(text, size) if size else text)

    add(PLAIN_FILE, "# Example rcf{token}", PLAIN_SIZE)
    add("notes/alpha.md", "# Alpha")
    add("notes/beta.markdown", "Beta, no heading")
    add("notes/deep/nested/gamma-note.md", "# Gamma")
    add("readme.txt", "plain text")
    for hidden in (".hidden/secret.md", ".env"):
        add(hidden, f"hidden {c['hidden']}")
        fx.hidden.append(hidden)
    for i in range(max(0, count - len(fx.tokens))):
        add(f"bulk/d{i // 50:02d}/f{i:04d}.md", f"# Bulk {i}")
    named = [f"{folder}/{OUTSIDE_WORD}-{c['outside']}.md".lstrip("/") for folder in OUTSIDE_DIRS]
    plant_escapes(fx.root, fx.served, padded(f"# Outside {c['outside']}\n\n{c['outside']} must never be read "
                                             f"{OUTSIDE_WORD}\n", OUTSIDE_SIZE), OUTSIDE_FILES + named,
                  {"escape-file.md": "../../outside/secret.md", "escape-dir": "../../outside",
                   "prefix-file.md": "../../vault_evil/secret.md", "prefix-dir": "../../vault_evil",
                   "inside.md": "../inbox/example.md"})
    return fx


def padded(text: str, size: int) -> str:
    """`text` filled with a last line of dots to exactly `size` bytes (ASCII)."""
    fill = size - len(text.encode("utf-8")) - 1
    if fill < 0:
        raise ValueError(f"text of {len(text)} bytes does not fit in {size}")
    return text + "." * fill + "\n"
