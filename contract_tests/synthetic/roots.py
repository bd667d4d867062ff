"""The docs and code roots fixture for the retrieval-tools profile.

Every file is declared here with whether a conforming server may show it, so tests derive
expected search results and listings from this table instead of re-implementing gitignore.

Layout (policies/path-attacks.yaml relies on the links/, outside/ and *_evil/ names):
  <root>/docs, <root>/code     the two roots
  <root>/outside, <root>/vault_evil, <root>/docs_evil, <root>/code_evil   never readable
  <root>/<repo>/links/prefix-file.md -> <root>/<repo>_evil/secret.md, links/prefix-dir ->
  <root>/<repo>_evil: links into the sibling sharing the root's name prefix, which a
  containment check by `startswith(root)` without a separator lets through (CVE-2025-53110)

Fixtures are split by concern, so that one defect cannot spoil the check of another: the
plain roots (`traps="none"`) hold no symlink at all, and carry the search order, limits,
truncation, gitignore and listing checks; `traps="all"` adds symlinks out of the roots and into
the other root (file and directory links) for the path attacks; `traps="files"` adds only
file links, so a server whose search breaks on directory links still shows whether search
follows a link out of its root.
"""

from __future__ import annotations

import os
import random
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract_tests.synthetic.adapter import DiskFixture, derived_disk_attacks, register

REPOS = ("docs", "code")
NEEDLE_COMMON = "needle-common"
NEEDLE_HIDDEN = "needle-hidden"
NEEDLE_BINARY = "needle-binary"
NEEDLE_MANY = "needle-many"
CANARY_CLASSES = ("content", "hidden", "outside", "path")


@dataclass(frozen=True)
class FileSpec:
    repo: str
    path: str
    data: bytes
    visible: bool = True   # may appear in search and list_dir
    binary: bool = False
    # Shown or hidden by a nested .gitignore (its patterns, its negation): seed checks accept
    # either; git's answer (`visible`) is the advisory RT-VIS-005's.
    nested: bool = False

    def lines(self) -> list[str]:
        if not self.data or self.binary:
            return []
        text = self.data.decode("utf-8")
        parts = text.split("\n")
        if text.endswith("\n"):
            parts.pop()
        return [p[:-1] if p.endswith("\r") else p for p in parts]


@register
@dataclass
class RootsFixture(DiskFixture):
    kind = "roots"
    root: Path
    canaries: dict[str, str]
    files: list[FileSpec] = field(default_factory=list)
    traps: str = "none"
    links: list[tuple[str, str]] = field(default_factory=list)  # (repo, root-relative link path)
    locked: list[str] = field(default_factory=list)  # unreadable entries (twin "locked")
    _twins: dict[str, "RootsFixture"] = field(default_factory=dict, repr=False)

    def repo_root(self, repo: str) -> Path:
        return self.root / repo

    def placeholders(self) -> dict[str, str]:
        return {"docs_root": str(self.root / "docs"), "code_root": str(self.root / "code"),
                "root": str(self.root)}

    @classmethod
    def build(cls, profile: Any, base: Path, settings: dict[str, Any]) -> "RootsFixture":
        return build_roots(base)

    # -- ContractFixture ----------------------------------------------------------------
    def items(self) -> list[str]:
        return [f"{f.repo}/{f.path}" for f in self.files]

    def write(self, relative: str, text: str) -> None:
        """Write (or rewrite) a file, and know it: a later listing of the shared fixture expects
        what is on disk, whichever test wrote it first."""
        repo, _, path = relative.partition("/")
        target = self.root / repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        target.write_bytes(data)
        known = next((f for f in self.files if f.repo == repo and f.path == path), None)
        self.files = [f for f in self.files if f is not known] + [
            FileSpec(repo, path, data, known.visible if known else True, known.binary if known else False,
                     known.nested if known else False)]

    def remove(self, relative: str) -> None:
        (self.root / relative).unlink()

    def attack_roots(self) -> list[str]:
        return list(REPOS)

    def attack_placeholders(self, root: str) -> dict[str, str]:
        return {"vault": str(self.repo_root(root)), "root": str(self.root)}

    def derived_attacks(self, root: str) -> list[dict[str, Any]]:
        other = "code" if root == "docs" else "docs"
        inside = {"docs": ("README.md", "guide"), "code": ("src/main.py", "src")}[root]
        siblings = {other: inside_file(other), f"{root}_evil": "secret.md", "outside": "secret.md"}
        # Links into the other root are RT-PATH-003's cases (retrieval_tools/test_security.py).
        other_root = os.path.realpath(self.repo_root(other))
        links = [link for repo, link in self.links if repo == root
                 and not os.path.realpath(self.repo_root(root) / link).startswith(other_root + os.sep)]
        # Absolute paths into the root spelt loosely (`//`, `./`, a trailing slash), for the leak
        # sweep: a server may echo them normalised, still the caller's own input (RT-OUT-002).
        # Category absolute-inside: seed 003 refuses paths outside the root, so the path sweep
        # does not require these to fail.
        loose = [{"id": f"derived-absolute-loose-{n}-{root}", "category": "absolute-inside", "expect": "error",
                  "path": path} for n, path in enumerate([f"{self.repo_root(root)}//{inside[0]}",
                                                          f"{self.repo_root(root)}/./{inside[1]}/"], 1)]
        return derived_disk_attacks(self.repo_root(root), root, inside[0], inside[1], siblings, links) + \
            directory_link_attacks(self.repo_root(root), root, links) + loose

    def close(self) -> None:
        for twin in self._twins.values():
            twin.close()
        for rel in self.locked:  # let the temporary tree be removed
            (self.root / rel).chmod(0o700)

    def twin(self, traps: str) -> "RootsFixture":
        """The same roots with symlink traps (built once, beside this fixture)."""
        if traps == self.traps:
            return self
        if traps not in self._twins:
            self._twins[traps] = build_roots(self.root.parent, traps=traps, canaries=self.canaries)
        return self._twins[traps]

    def visible_text_files(self, repo: str | None = None) -> list[FileSpec]:
        return [f for f in self.files if f.visible and not f.binary and (repo is None or f.repo == repo)]

    def expected_matches(self, query: str, repo: str = "both", order=None) -> list[tuple[str, str, int]]:
        """(repo, path, line) of every visible matching line: by repo (docs, code), then path
        (sorted with `order`, a sort key; code point by default), then line."""
        repos = REPOS if repo == "both" else (repo,)
        out = []
        for name in repos:
            for spec in sorted(self.visible_text_files(name), key=lambda f: (order or str)(f.path)):
                out += [(name, spec.path, n) for n, line in enumerate(spec.lines(), 1) if query in line]
        return out

    def nested_paths(self, repo: str) -> set[str]:
        """Files a nested .gitignore (or its negation) decides on."""
        return {f.path for f in self.files if f.repo == repo and f.nested}

    def visible_entries(self, repo: str, directory: str = "") -> list[tuple[str, str]]:
        """(name, type) of the visible entries directly inside `directory`."""
        prefix = f"{directory}/" if directory else ""
        entries: dict[str, str] = {}
        for spec in self.files:
            if spec.repo != repo or not spec.visible or not spec.path.startswith(prefix):
                continue
            rest = spec.path[len(prefix):]
            head, _, tail = rest.partition("/")
            entries[head] = "dir" if tail else "file"
        return sorted(entries.items())

    def why_invisible(self, repo: str, path: str) -> str | None:
        """'hidden' (a dot segment), 'ignored' (a root .gitignore rule covers it), 'nested' (only
        a nested .gitignore does), or None."""
        if any(part.startswith(".") for part in path.split("/")):
            return "hidden"
        under = [f for f in self.files if f.repo == repo and (f.path == path or f.path.startswith(path + "/"))]
        if not under or any(f.visible for f in under):
            return None
        return "nested" if all(f.nested for f in under) else "ignored"

    def add(self, repo: str, path: str, text: str | bytes, *, visible: bool = True, binary: bool = False,
            nested: bool = False) -> None:
        data = text if isinstance(text, bytes) else text.encode("utf-8")
        target = self.root / repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.files.append(FileSpec(repo, path, data, visible, binary, nested))


def directory_link_attacks(root: Path, root_name: str, links: list[str]) -> list[dict[str, Any]]:
    """Each link to a directory outside the root, named itself (derived_disk_attacks names a file
    through it): list_dir must not list what it points at."""
    return [{"id": f"derived-symlink-dir-{link.replace('/', '-')}-{root_name}", "category": "symlink",
             "path": link, "expect": "error", "target": os.readlink(root / link)}
            for link in links if (root / link).is_dir()]


def inside_file(repo: str) -> str:
    return {"docs": "README.md", "code": "src/main.py"}[repo]


def build_roots(base: Path, traps: str = "none", canaries: dict[str, str] | None = None) -> RootsFixture:
    c = canaries or {cls: f"rc{cls}{secrets.token_hex(6)}" for cls in CANARY_CLASSES}
    suffix = "" if traps == "none" else f"-{traps}"
    fx = RootsFixture(root=base / f"rc-roots-{c['path']}{suffix}", canaries=c, traps=traps)
    body, hidden = c["content"], c["hidden"]
    fx.add("docs", "README.md", f"# Docs\n\nWelcome {body}.\nsee {NEEDLE_COMMON} here\n")
    fx.add("docs", "guide/intro.md", f"# Intro\n\n{body}\nfirst {NEEDLE_COMMON}\nplain\nsecond {NEEDLE_COMMON}\n")
    fx.add("docs", "guide/advanced.md", f"# Advanced\r\n\r\n{NEEDLE_COMMON} with CRLF {body}\r\n")
    fx.add("docs", "guide/draft-keep.md", f"kept draft {NEEDLE_COMMON} {body}\n", nested=True)
    fx.add("docs", "guide/draft-1.md", f"ignored draft {NEEDLE_HIDDEN} {hidden}\n", visible=False, nested=True)
    fx.add("docs", "guide/.gitignore", "draft-*.md\n!draft-keep.md\n", visible=False)
    fx.add("docs", "api/reference.md", f"# API\n\n{body}\n" + "".join(f"row {i}\n" for i in range(40)))
    fx.add("docs", "B-upper.md", f"upper {NEEDLE_COMMON}\n{body}\n")
    fx.add("docs", "a-lower.md", f"lower {NEEDLE_COMMON}\n{body}\n")
    fx.add("docs", "a10.md", f"ten {NEEDLE_COMMON}\n{body}\n")
    fx.add("docs", "a2.md", f"two {NEEDLE_COMMON}\n{body}\n")
    fx.add("docs", ".hidden.md", f"hidden file {NEEDLE_HIDDEN} {hidden}\n", visible=False)
    fx.add("docs", ".secret/notes.md", f"hidden dir {NEEDLE_HIDDEN} {hidden}\n", visible=False)
    fx.add("docs", ".gitignore", "build/\n*.log\n", visible=False)
    fx.add("docs", "build/out.md", f"ignored build {NEEDLE_HIDDEN} {hidden}\n", visible=False)
    fx.add("docs", "app.log", f"ignored log {NEEDLE_HIDDEN} {hidden}\n", visible=False)
    fx.add("docs", "image.png", b"\x89PNG\r\n\x1a\n\x00\x00" + NEEDLE_BINARY.encode() + b"\x00\xff", binary=True)
    fx.add("docs", "empty.md", "")
    fx.add("docs", "lines.md", "".join(f"line {i}\n" for i in range(1, 31)))  # exact lines: no canary
    fx.add("docs", "long-line.md", "x" * 300 + f" {NEEDLE_COMMON} " + "y" * 300 + f"\n{body}\n")
    fx.add("code", "src/main.py", f"def main():\n    return '{NEEDLE_COMMON}'  # {body}\n")
    fx.add("code", "src/util.py", f"# {body}\nVALUE = 1\n")
    fx.add("code", "tests/test_main.py", f"def test_main():\n    assert '{NEEDLE_COMMON}'  # {body}\n")
    fx.add("code", ".env", f"SECRET={hidden} {NEEDLE_HIDDEN}\n", visible=False)
    fx.add("code", ".gitignore", "node_modules/\n", visible=False)
    fx.add("code", "node_modules/pkg/index.js", f"// {NEEDLE_HIDDEN} {hidden}\n", visible=False)
    fx.add("code", "data.bin", b"\x00\x01" + NEEDLE_BINARY.encode() + b"\x00", binary=True)
    fx.add("code", "many.txt", "".join(f"{NEEDLE_MANY} {i}\n" for i in range(250)) + f"{body}\n")

    for rel in ("outside/secret.md", "outside/sub/deeper.md", "vault_evil/secret.md",
                "docs_evil/secret.md", "code_evil/secret.md"):
        target = fx.root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"outside {c['outside']} {NEEDLE_COMMON}\n", encoding="utf-8")
    if traps == "locked":
        # Entries a server cannot read (when it runs without CAP_DAC_OVERRIDE: transport/privileges.py).
        fx.add("docs", "locked/secret.md", f"locked {NEEDLE_COMMON} {c['hidden']}\n", visible=False)
        fx.add("docs", "locked-dir/inside.md", f"locked dir {NEEDLE_COMMON} {c['hidden']}\n", visible=False)
        (fx.root / "docs" / "locked" / "secret.md").chmod(0)
        (fx.root / "docs" / "locked-dir").chmod(0)
        fx.locked = ["docs/locked/secret.md", "docs/locked-dir"]
        return fx
    if traps == "none":
        return fx
    for repo in REPOS:
        links = fx.root / repo / "links"
        links.mkdir()
        os.symlink("../../outside/secret.md", links / "escape-file.md")
        os.symlink(f"../../{repo}_evil/secret.md", links / "prefix-file.md")
        fx.links += [(repo, "links/escape-file.md"), (repo, "links/prefix-file.md")]
        if traps == "all":
            os.symlink("../../outside", links / "escape-dir", target_is_directory=True)
            os.symlink(f"../../{repo}_evil", links / "prefix-dir", target_is_directory=True)
            fx.links += [(repo, "links/escape-dir"), (repo, "links/prefix-dir")]
    os.symlink("../../code/src/main.py", fx.root / "docs" / "links" / "to-code.md")
    os.symlink("../../docs/README.md", fx.root / "code" / "links" / "to-docs.md")
    fx.links += [("docs", "links/to-code.md"), ("code", "links/to-docs.md")]
    return fx


# The word salad of the performance corpus (RT-PERF-001 and benchmarks/retrieval_tools_search.py).
WORDS = ("alpha beta gamma delta epsilon zeta theta iota kappa lambda omicron sigma "
         "config handler request response buffer index parser module import return").split()


def build_corpus(base: Path, lines: int, seed: int = 7) -> RootsFixture:
    """`lines` lines of word salad over both roots; rare and common terms at known rates. Each
    line is one of 4,096 salads drawn once (a million lines drawn word by word took seconds)."""
    rng = random.Random(seed)
    salads = [" ".join(rng.choices(WORDS, k=8)) for _ in range(4096)]
    fx = RootsFixture(root=base, canaries={})
    per_file, written = 500, 0
    n = 0
    while written < lines:
        repo = "docs" if n % 2 == 0 else "code"
        count = min(per_file, lines - written)
        body = rng.choices(salads, k=count)
        for k in range(written + (-written % 10), written + count, 10):
            body[k - written] += " commonterm"
        for k in range(written + (-written % 333_331), written + count, 333_331):
            body[k - written] += " rareterm"
        path = base / repo / f"dir{n % 50:02d}" / f"file{n:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(body) + "\n")
        written += count
        n += 1
    return fx
