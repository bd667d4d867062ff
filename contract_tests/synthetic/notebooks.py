"""The notebooks fixture (open-notebook profile): synthetic collections in the profile's layout
(schemas/open-notebook/, docs/profiles/open-notebook.md), written by notebook_generator.

Layout of one fixture:
  <root>/notebooks/   the collection root the server reads ({notebooks})
  <root>/store/       empty, for an implementation with its own storage: its declared load
                      command imports <root>/notebooks into it before any server starts ({store})

The collections have roles, so that what a session may see is known:
  active   coastal-survey   the collection most checks enter
  other    orchard-journal  entered by the isolation checks (replacement, other sessions)
  sealed   workshop-logs    never entered by any check: its canaries must never come back

Canary classes: `body`, `title`, `artifact` are the sealed collection's (never fine in any
output); `active_*` and `other_*` are the other two collections' (fine in results of a session
that entered them, never in logs); `path` is part of the fixture directory's own name, so an
absolute path in any output shows. The suite never sends a canary token in a request: the
queries that probe other collections (CROSS_QUERIES) match the canary passages by their other
words.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract_tests.synthetic.adapter import DiskFixture, FixtureSetupError, register
from contract_tests.synthetic.notebook_generator import ArtifactInfo, CollectionInfo, GeneratedRoot, NotebookInfo, build
from contract_tests.transport.process import private_environment

ROLES = {"active": "coastal-survey", "other": "orchard-journal", "sealed": "workshop-logs"}
# Words of the canary passage ("Margin code <token> was copied from the <word> cover.") and of
# the title heading ("# Ledger <token>") every collection holds: a search that crosses
# collections brings another collection's canary back with them.
CROSS_QUERIES = ("Margin code was copied from the cover", "Ledger")
# A search made of common words matches nearly every paragraph: more than the 50-result cap.
BROAD_QUERY = ("the a of and to in on with from by near after before under over each every some this that "
               "was were had noted logged observed measured checked recorded again")
SEED = 4
NOTEBOOKS = 10  # per collection: enough passages (about 80) for the 50-result cap to bite


@register
@dataclass
class NotebooksFixture(DiskFixture):
    kind = "notebooks"
    root: Path
    canaries: dict[str, str]
    generated: GeneratedRoot
    stream_timeout_s: int = 300
    imported: bool = False  # a load command imported the layout: the server reads its own store
    settings: dict[str, Any] = field(default_factory=dict)  # what it was built with (the load command)

    @property
    def notebooks(self) -> Path:
        return self.root / "notebooks"

    @property
    def store(self) -> Path:
        return self.root / "store"

    @classmethod
    def build(cls, profile: Any, base: Path, settings: dict[str, Any]) -> "NotebooksFixture":
        fixture = build_notebooks(base, int(profile.limits.get("stream_timeout_s", 300)), settings.get("commands"))
        fixture.settings = dict(settings)
        return fixture

    def placeholders(self) -> dict[str, str]:
        return {"notebooks": str(self.notebooks), "root": str(self.root), "store": str(self.store),
                "stream_timeout_s": str(self.stream_timeout_s)}

    # -- ContractFixture ----------------------------------------------------------------
    def call_values(self) -> dict[str, str]:
        """{active}, {other}, {sealed}: the collection ids by role; {probe_text}: the text of the
        active collection's probe passage."""
        return {**ROLES, "probe_text": self.collection("active").passage("probe").exact_text}

    def items(self) -> list[str]:
        """The sweep's queries: the active collection's notable passages (all but the one that
        holds its canary), then the queries that would reach into other collections."""
        active = self.collection("active")
        return [p.exact_text for p in active.passages if p.kind != "canary"] + list(CROSS_QUERIES)

    def write(self, relative: str, text: str) -> None:
        target = self.notebooks / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))

    def remove(self, relative: str) -> None:
        (self.notebooks / relative).unlink()

    def attack_roots(self) -> list[str]:
        return []  # no tool takes a path

    def attack_placeholders(self, root: str) -> dict[str, str]:
        return self.placeholders()

    # -- what the checks read ------------------------------------------------------------
    def collection(self, role: str) -> CollectionInfo:
        return self.generated.collections[ROLES[role]]

    def notebook(self, role: str, notebook_id: str) -> NotebookInfo:
        return self.collection(role).notebooks[notebook_id]

    def manifest(self, role: str, set_id: str) -> dict[str, Any]:
        cid = ROLES[role]
        return json.loads((self.notebooks / cid / "artifacts" / set_id / "set.json").read_text(encoding="utf-8"))

    def collection_meta(self, collection_id: str) -> dict[str, Any]:
        return json.loads((self.notebooks / collection_id / "collection.json").read_text(encoding="utf-8"))

    def payload(self, artifact: ArtifactInfo) -> str | dict[str, Any]:
        """What retrieve_artifact's `contents` must be: a Markdown file's text, a JSON file's object."""
        text = (self.notebooks / artifact.contents_path).read_text(encoding="utf-8")
        return json.loads(text) if artifact.media_type == "application/json" else text

    def tamper(self, relative: str, data: bytes) -> None:
        """Change a file after start-up, keeping its size class and its modification time, so
        only a checksum can tell."""
        target = self.notebooks / relative
        stat = target.stat()
        target.write_bytes(data)
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    def tokens(self, *roles: str) -> dict[str, str]:
        """Canary class -> token for the collections of these roles (sealed: body, title, artifact)."""
        out = {}
        for role in roles:
            prefix = "" if role == "sealed" else f"{role}_"
            out.update({prefix + kind: token for kind, token in self.collection(role).canaries.items()})
        return out


def build_notebooks(base: Path, stream_timeout_s: int = 300, commands: Any = None) -> NotebooksFixture:
    """The fixture; with `commands` (target.commands.Commands) giving a load command, what that
    command imported from it into the implementation's own store."""
    path_token = f"rcpath{secrets.token_hex(6)}"
    root = base / f"rc-notebooks-{path_token}"
    generated = build(root / "notebooks", seed=SEED, collections=len(ROLES), notebooks=NOTEBOOKS)
    (root / "store").mkdir()
    fixture = NotebooksFixture(root=root, canaries={}, generated=generated, stream_timeout_s=stream_timeout_s)
    fixture.canaries = {**fixture.tokens("sealed", "active", "other"), "path": path_token}
    if commands is not None and commands.given("load"):
        run_load_command(fixture, commands)
        fixture.imported = True
    return fixture


def run_load_command(fixture: NotebooksFixture, commands: Any) -> None:
    """Run the implementation's declared load command once, before any server starts on this
    fixture, with the fixture's placeholders; it must exit 0 within --command-timeout."""
    home = fixture.root.parent / f"{fixture.root.name}-load-home"
    proc = commands.run("load", fixture.placeholders(), env=private_environment(home), cwd=home)
    if proc.returncode != 0:
        tail = (proc.stderr + proc.stdout).splitlines()[-20:]
        raise FixtureSetupError(f"the declared load command exited with status {proc.returncode} "
                                "(its output is shown below as the server's stderr)", command=commands.template("load"),
                                exit_status=proc.returncode, stderr_tail=tail)
