"""The vault-agent fixture: a vault of Markdown notes and attachments with canaries in note
bodies (and so in chunks), frontmatter, attachments and hidden files, symlinks out of the vault,
a sibling sharing its name prefix, and the index built by the implementation's own `index`
command.

Layout (the root is what inotify watches; the state directory is not, so an implementation
that reads its index during a call is not taken for one reading outside the vault):
  <base>/rc-va-<path canary>/vault/        the vault ({vault})
  <base>/rc-va-<path canary>/vault_evil/   a sibling sharing the vault's name prefix
  <base>/rc-va-<path canary>/outside/      what the vault's symlinks point at
  <base>/rc-va-<path canary>-state/index/  the index directory ({index_dir})
  <base>/rc-va-<path canary>-state/config.toml   the configuration file ({config})

Note ids are opaque (Phase 3 mcp-tools.md): tests find them by searching each note's own
token (`tokalpha`, ...), never by computing them.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract_tests.synthetic.adapter import (
    DiskFixture,
    FixtureSetupError,
    derived_disk_attacks,
    plant_escapes,
    register,
    snapshot,
    snapshot_diff,
)
from contract_tests.transport.process import Finished, private_environment

# `relpath` names an attachment file inside the vault: a vault-relative path no log may carry.
CANARY_CLASSES = ("body", "frontmatter", "attachment", "hidden", "outside", "path", "query", "relpath")
MiB = 1024 * 1024
# Vault-relative paths of the notes the tests address, each holding its own search token.
NOTES = {"alpha": "notes/alpha.md", "beta": "notes/beta.md", "gamma": "notes/gamma.md",
         "delta": "notes/nested/delta.md", "large": "notes/large.md", "empty": "notes/empty.md"}
ATTACHMENTS = ["attachments/pic.png", "attachments/readme.txt", "attachments/blob.unknownext",
               "attachments/sub/nested.txt", "links/inside.txt"]
SIZES = {"attachments/four.bin": 4 * MiB, "attachments/eleven.bin": 11 * MiB, "attachments/huge.bin": 64 * MiB}
STRIPPED_ENV_PREFIX = "VAULT_AGENT_"
# Wikilinks (Phase 1 indexing.md): `[[gamma]]` has exactly one matching note (its file stem),
# `[[rc twin]]` two (both titled so: ambiguous), `[[rc-ghost-note]]` none. The links sit in the
# linker's second section only, so its first chunk holds none of them.
LINKER = "notes/linker.md"
AMBIGUOUS, MISSING = "rc twin", "rc-ghost-note"
LINK_NOTES = {
    LINKER: (f"# Linker\n\nThe linker note, toklinker, names no other note here.\n\n## Links\n\n"
             f"Also toklinker: see [[gamma]], [[{AMBIGUOUS}]] and [[{MISSING}]].\n"),
    "notes/twin-a.md": f"---\ntitle: {AMBIGUOUS}\n---\n# One twin\n\nThe first twin, toktwin.\n",
    "notes/twin-b.md": f"---\ntitle: {AMBIGUOUS}\n---\n# Other twin\n\nThe second twin, toktwin.\n",
}


def relpath_attachment(canaries: dict[str, str]) -> str:
    """The vault-relative path of the attachment whose name is the `relpath` canary."""
    return f"attachments/{canaries['relpath']}.txt"


def token(name: str) -> str:
    """The search token only the note `name` holds."""
    return f"tok{name}"


@register
@dataclass
class VaultAgentFixture(DiskFixture):
    kind = "vault-agent"
    root: Path
    state: Path
    canaries: dict[str, str]
    api_key: str
    settings: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=lambda: dict(NOTES))

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    @property
    def index_dir(self) -> Path:
        return self.state / "index"

    @property
    def config(self) -> Path:
        return self.state / "config.toml"

    @classmethod
    def build(cls, profile: Any, base: Path, settings: dict[str, Any]) -> "VaultAgentFixture":
        fx = build_vault_agent(base)
        fx.settings = dict(settings)
        if fx.command("index"):
            fx.index()
        return fx

    # -- ContractFixture ----------------------------------------------------------------
    def placeholders(self) -> dict[str, str]:
        return {"vault": str(self.vault), "index_dir": str(self.index_dir), "config": str(self.config),
                "api_key": self.api_key, "root": str(self.root)}

    def call_values(self) -> dict[str, str]:
        return {f"{cls}_canary": value for cls, value in self.canaries.items()}

    def items(self) -> list[str]:
        return [*ATTACHMENTS, relpath_attachment(self.canaries)]

    def write(self, relative: str, text: str) -> None:
        path = self.vault / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))

    def remove(self, relative: str) -> None:
        (self.vault / relative).unlink()

    def attack_roots(self) -> list[str]:
        return ["vault"]

    def attack_placeholders(self, root: str) -> dict[str, str]:
        return {"vault": str(self.vault), "root": str(self.root)}

    def derived_attacks(self, root: str) -> list[dict[str, Any]]:
        return derived_disk_attacks(self.vault, "vault", "attachments/pic.png", "attachments",
                                    {"vault_evil": "secret.txt", "outside": "secret.txt"},
                                    ["links/escape-file.txt", "links/escape-dir", "links/prefix-file.txt",
                                     "links/prefix-dir"])

    def snapshot(self) -> Any:
        """The vault side and the index directory: neither transport writes to either."""
        return {"root": snapshot(self.root), "index": snapshot(self.index_dir) if self.index_dir.is_dir() else {}}

    def changes(self, before: Any) -> list[str]:
        after = self.snapshot()
        index = {k: v for k, v in after["index"].items() if k in before["index"] or not _reader_sidecar(k, v)}
        return snapshot_diff(before["root"], after["root"]) + [
            f"index dir: {change}" for change in snapshot_diff(before["index"], index)]

    # -- the implementation's commands ------------------------------------------------------
    @property
    def commands(self) -> Any:
        """The implementation's commands by role, as the suite gave them (settings["commands"]:
        target.commands.Commands, which renders and runs them), or None."""
        return self.settings.get("commands")

    def command(self, role: str) -> str | None:
        return self.commands.template(role) if self.commands is not None else None

    def environment(self, home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
        """A private environment without the caller's VAULT_AGENT_* settings."""
        env = {k: v for k, v in private_environment(home).items() if not k.startswith(STRIPPED_ENV_PREFIX)}
        return env | (extra or {})

    def index(self, role: str = "index", *, values: dict[str, str] | None = None, env: dict[str, str] | None = None,
              timeout: float | None = None) -> Finished:
        """Run the implementation's index command on this fixture; raise if it fails."""
        proc = self.run_command(role, values=values, env=env, timeout=timeout)
        if proc.returncode != 0:
            raise FixtureSetupError(f"the {role} command exited with status {proc.returncode}",
                                    command=self.command(role) or "", exit_status=proc.returncode,
                                    stderr_tail=proc.stderr.splitlines()[-20:])
        return proc

    def run_command(self, role: str, *, values: dict[str, str] | None = None, env: dict[str, str] | None = None,
                    timeout: float | None = None) -> Finished:
        """Run a role's command on this fixture to its end (default deadline: --command-timeout);
        one that overran its deadline raises FixtureSetupError, then and whenever asked again."""
        if self.commands is None:
            raise FixtureSetupError(f"no {role} command was given")
        home = self.state / f"home-{role}"
        home.mkdir(parents=True, exist_ok=True)
        return self.commands.run(role, {**self.placeholders(), **(values or {})}, env=self.environment(home, env),
                                 cwd=home, timeout=timeout)

    def write_config(self, name: str, text: str) -> Path:
        """Another configuration file beside the fixture's own (for {config})."""
        path = self.state / name
        path.write_text(text, encoding="utf-8")
        return path

    def private_copy(self, base: Path, profile: Any) -> "VaultAgentFixture":
        """A fixture of its own (edits, index runs, a vanishing vault), built the same way."""
        return type(self).build(profile, base, self.settings)


def _reader_sidecar(rel: str, entry: tuple) -> bool:
    """What SQLite creates for a reader of a WAL-mode index (Phase 2 reads while a writer runs):
    the shared-memory file, and a write-ahead log with nothing in it. Written rows would show as
    a non-empty log or a changed database file."""
    return entry[0] == "file" and (rel.endswith("-shm") or (rel.endswith("-wal") and entry[1] == 0))


def _note_text(c: dict[str, str]) -> dict[str, str]:
    body, front = c["body"], c["frontmatter"]
    filler = " ".join(["river stone cloud forest meadow lantern"] * 3)
    return {
        "alpha": (f"---\ntitle: Alpha\ntags: [project, planning]\naliases: [First note]\nsecret: {front} private value\n"
                  f"---\n# Alpha\n\nThe alpha note introduces {token('alpha')} and the shared topic of {filler}. "
                  f"{body}\n\n## Details\n\nDetails of {token('alpha')} with {body} and more words about the "
                  f"shared topic: {filler}.\n\n## Plans\n\nPlans mention {token('alpha')}, lantern and meadow "
                  f"again, so related notes can be found. {filler}.\n"),
        "beta": f"Beta has no headings; it holds {token('beta')} and {body} in one paragraph. {filler}.\n",
        "gamma": (f"# Gamma\n\nGamma shares the topic: {filler}. {token('gamma')} {body}\n\n## Child\n\n"
                  f"Child section of {token('gamma')} with lantern and meadow. {filler}.\n"),
        "delta": f"# Delta\n\nA nested note, {token('delta')}, about gardening and tomatoes. {body}\n",
        "large": "# Large\n\n" + f"{token('large')} filler line {body} of a note over the 200 KiB limit\n" * 3000,
        "empty": "",
    }


def build_vault_agent(base: Path) -> VaultAgentFixture:
    c = {cls: f"rc{cls}{secrets.token_hex(6)}" for cls in CANARY_CLASSES}
    root = base / f"rc-va-{c['path']}"
    fx = VaultAgentFixture(root=root, state=base / f"rc-va-{c['path']}-state", canaries=c,
                           api_key=f"rckey{secrets.token_hex(16)}")
    c["key"] = fx.api_key
    fx.vault.mkdir(parents=True)
    fx.index_dir.parent.mkdir(parents=True, exist_ok=True)
    fx.config.write_text("# written by retrieval-contract: every setting at its default\n", encoding="utf-8")
    for name, text in _note_text(c).items():
        fx.write(NOTES[name], text)
    for rel, text in LINK_NOTES.items():
        fx.write(rel, text)
    fx.write("drafts/draft.md", f"# Draft\n\nA draft, {token('draft')}, excluded only when vault.exclude says so.\n")
    fx.write(".hidden/secret.md", f"# Hidden\n\n{c['hidden']} {token('hidden')} never indexed\n")
    fx.write(".hidden/secret.txt", f"hidden attachment {c['hidden']}\n")
    fx.write("node_modules/pkg/readme.md", f"# Dependency\n\n{c['hidden']} {token('hidden')} excluded\n")
    fx.write("node_modules/pkg/data.txt", f"excluded data {c['hidden']}\n")
    fx.write(".obsidian/app.json", "{}\n")
    (fx.vault / "attachments" / "sub").mkdir(parents=True)
    (fx.vault / "attachments" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + c["attachment"].encode())
    fx.write("attachments/readme.txt", f"attachment text {c['attachment']}\n")
    (fx.vault / "attachments" / "blob.unknownext").write_bytes(b"\x00\x01\x02" + c["attachment"].encode())
    fx.write("attachments/sub/nested.txt", f"nested attachment {c['attachment']}\n")
    fx.write(relpath_attachment(c), f"an attachment whose name is a canary {c['attachment']}\n")
    for rel, size in SIZES.items():
        with open(fx.vault / rel, "wb") as handle:  # sparse: the size costs no disk
            handle.truncate(size)
    plant_escapes(root, fx.vault, f"# Outside\n\n{c['outside']} {token('outside')} must never be read\n",
                  ["outside/secret.txt", "outside/secret.md", "outside/sub/deeper.txt", "vault_evil/secret.txt"],
                  {"escape-file.txt": "../../outside/secret.txt", "escape-dir": "../../outside",
                   # into the sibling sharing the vault's name prefix (containment by a bare
                   # startswith, CVE-2025-53110's class)
                   "prefix-file.txt": "../../vault_evil/secret.txt", "prefix-dir": "../../vault_evil",
                   "inside.txt": "../attachments/readme.txt"})
    os.symlink("../../outside/secret.md", fx.vault / "notes" / "escape.md")
    return fx
