"""Synthetic Open Notebook collections in the profile's layout, with an oracle for tests.

`build(root, seed=...)` writes several collections under `root` (the layout is profile data:
schemas/open-notebook/, docs/profiles/open-notebook.md) and returns a `GeneratedRoot`
describing what it wrote: paths, collection ids, every notebook with its pages' text, every
source id the reference derives, verbatim passages with a query that finds each, artifacts
with their checksums, and canary tokens. Everything is a function of `seed` except the
canaries, which are random per build unless `canary_salt` is given. Pure Python; it imports no
server. The suite's `notebooks` fixture kind (synthetic/notebooks.py) builds on it, and so do the
reference's own tests and benchmark.

The generator tracks each block it writes (page, ordinal, exact text) itself, so the oracle
does not depend on any server's parser; a self-test checks it agrees with the reference's.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

LAYOUT_VERSION = 1
EPOCH_2023 = 1_672_531_200  # 2023-01-01T00:00:00Z
DAY = 86_400
CANARY_KINDS = ("body", "title", "artifact")
BENCH_COLLECTION = "bench-archive"
LONG_PARAGRAPH = 620  # characters: over the 500-character context bound on both sides

THEMES: list[tuple[str, str, list[str], str]] = [  # (collection_id, title, domain_tags, vocabulary)
    ("coastal-survey", "Coastal survey notebooks", ["ecology", "fieldwork"],
     "tide pool kelp barnacle limpet anemone shoreline estuary salinity sediment dune heron gull "
     "plover mussel current swell rockweed crab inlet lagoon quadrat transect low-water spray "
     "periwinkle urchin sandbar cove headland drift"),
    ("orchard-journal", "Orchard journal", ["horticulture", "seasons"],
     "apple pear quince blossom graft rootstock pruning orchard ladder harvest cider bud frost "
     "pollinator beehive compost mulch espalier scion canker russet bramble hedgerow windfall "
     "thinning sapling trellis loam cellar"),
    ("workshop-logs", "Workshop logbooks", ["engineering", "repair"],
     "lathe bearing spindle gasket torque caliper solder bracket chassis flywheel clutch "
     "gearbox lubricant shim tolerance weld drill chuck fixture jig bench vice rivet sprocket "
     "coupling valve piston crank"),
    ("river-almanac", "River almanac", ["hydrology"],
     "river weir meander floodplain gauge discharge silt ford eddy oxbow willow alder "
     "kingfisher otter sluice millrace bank riffle spate ferry towpath lock culvert"),
]
BENCH_THEME = (BENCH_COLLECTION, "Benchmark archive", ["benchmark"],
               "ledger survey harvest bearing river orchard tide gauge lathe frost current valve "
               "kelp quince weir spindle")
COMMON = ("the a of and to in on with from by near after before under over each every some "
          "this that was were had noted logged observed measured checked recorded again").split()
NAME_SYLLABLES = "ka lo ven tra mi sel or dun ash bel cor fen gar hol ist jor".split()
UNICODE_PARAGRAPH = ("Relevé à l'aube: marée haute, côte rocheuse, 潮だまり 観察 🌊 — "
                     "naïve façade, Ærø, Øresund, Straße, ﬁeld ligature.")


@dataclass
class PassageInfo:
    source_id: str
    collection_id: str
    notebook_id: str
    page: int
    ordinal: int
    exact_text: str
    notebook_path: str  # relative to the root
    kind: str  # probe | long_context | canary | unicode | multiline | list | fence
    query: str | None = None  # a query under which this passage ranks first in the reference


@dataclass
class ArtifactInfo:
    artifact_id: str  # the wire id, '<collection_id>:<artifact_set_id>:<local id>'
    collection_id: str
    artifact_set_id: str
    local_id: str
    artifact_type: str
    status: str
    synthesized: bool
    media_type: str
    contents_path: str  # relative to the root
    sha256: str
    source_notebooks: list[str]


@dataclass
class NotebookInfo:
    notebook_id: str
    path: str  # relative to the root
    front: dict[str, Any]  # the front matter as written
    text: str  # the whole file
    page_texts: list[str]  # each page's content: after its marker line, up to the next one

    @property
    def title(self) -> str:
        return self.front["title"]

    def page_timestamp(self, page: int) -> int | None:
        return self.front["pages"][page - 1]["timestamp"]


@dataclass
class CollectionInfo:
    collection_id: str
    title: str
    path: str
    notebook_ids: list[str] = field(default_factory=list)
    notebook_paths: list[str] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)
    passages: list[PassageInfo] = field(default_factory=list)  # the notable ones, not all
    canaries: dict[str, str] = field(default_factory=dict)  # kind -> token
    artifacts: list[ArtifactInfo] = field(default_factory=list)
    artifact_set_ids: list[str] = field(default_factory=list)
    notebooks: dict[str, NotebookInfo] = field(default_factory=dict)

    def passage(self, kind: str) -> PassageInfo:
        return next(p for p in self.passages if p.kind == kind)


@dataclass
class GeneratedRoot:
    root: Path
    seed: int
    collections: dict[str, CollectionInfo]

    @property
    def collection_ids(self) -> list[str]:
        return list(self.collections)

    def canaries(self, collection_id: str | None = None) -> list[str]:
        """Every canary token, or those planted in one collection."""
        chosen = [self.collections[collection_id]] if collection_id else self.collections.values()
        return [token for c in chosen for token in c.canaries.values()]

    def to_dict(self) -> dict[str, Any]:
        return {"root": str(self.root), "seed": self.seed,
                "collections": {cid: asdict(c) for cid, c in self.collections.items()}}


def canary_token(kind: str, collection_id: str, salt: str | None) -> str:
    """rc<kind> + 16 lower-case hex characters: random, or derived from `salt` when given."""
    if salt is None:
        return f"rc{kind}{secrets.token_hex(8)}"
    return f"rc{kind}{hashlib.sha256(f'{salt}:{collection_id}:{kind}'.encode()).hexdigest()[:16]}"


def iso_day(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%d")


class _Words:
    """Deterministic word salad over one theme's vocabulary."""

    def __init__(self, rng: random.Random, vocabulary: str) -> None:
        self.rng = rng
        self.theme = vocabulary.split()
        self.names: set[str] = set()

    def sentence(self, low: int = 8, high: int = 14) -> str:
        words = [self.rng.choice(self.theme if self.rng.random() < 0.6 else COMMON)
                 for _ in range(self.rng.randint(low, high))]
        return words[0].capitalize() + " " + " ".join(words[1:]) + "."

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    def long_paragraph(self, minimum: int) -> str:
        text = self.sentence()
        while len(text) < minimum:
            text += " " + self.sentence()
        return text

    def name(self) -> str:
        """A made-up proper name, unique within this generator."""
        while True:
            candidate = "".join(self.rng.choice(NAME_SYLLABLES) for _ in range(3)).capitalize()
            if candidate not in self.names:
                self.names.add(candidate)
                return candidate

    def wrapped(self, text: str, width: int = 72) -> str:
        """Hard-wrap at spaces (still one Markdown paragraph: no line starts a block)."""
        lines, current = [], ""
        for word in text.split(" "):
            if current and len(current) + 1 + len(word) > width:
                lines.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
        return "\n".join(lines + [current])


class _NotebookWriter:
    """Collects a notebook's pages and blocks, and knows each block's page and ordinal."""

    def __init__(self, collection_id: str, notebook_id: str, rel_path: str) -> None:
        self.collection_id, self.notebook_id, self.rel_path = collection_id, notebook_id, rel_path
        self.pages: list[list[str]] = []
        self.source_ids: list[str] = []

    def page(self) -> None:
        self.pages.append([])

    def block(self, text: str, kind: str = "plain", query: str | None = None) -> PassageInfo:
        self.pages[-1].append(text)
        page, ordinal = len(self.pages), len(self.pages[-1])
        source_id = f"{self.collection_id}:{self.notebook_id}:{page}:{ordinal}"
        self.source_ids.append(source_id)
        return PassageInfo(source_id, self.collection_id, self.notebook_id, page, ordinal, text,
                           self.rel_path, kind, query)

    def render(self, front: dict[str, Any]) -> tuple[str, list[str]]:
        """The file's text and each page's content (what follows its marker line, up to the
        line break before the next marker)."""
        out = ["---\n", yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000), "---\n"]
        pages = []
        for number, blocks in enumerate(self.pages, 1):
            out.append(f"\n<!-- page {number} -->\n")
            pages.append("".join(f"\n{block}\n" for block in blocks))
            out.append(pages[-1])
        return "".join(out), pages


def _write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def _json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _notebook(info: CollectionInfo, words: _Words, number: int, created: int, canaries: dict[str, str],
              root: Path) -> dict[str, Any]:
    """Write notebook `number` (1-based) of a collection; notable passages go into `info`."""
    cid, rng = info.collection_id, words.rng
    notebook_id = f"nb-{number:04d}"
    rel_path = f"{cid}/notebooks/{notebook_id}.md"
    writer = _NotebookWriter(cid, notebook_id, rel_path)
    title = f"{words.name()} {rng.choice(words.theme)} notes"
    if number == 2:
        title = f"Ledger {canaries['title']}"
    pages = 2 + rng.randint(0, 2)
    for page in range(1, pages + 1):
        writer.page()
        if page == 1:
            writer.block(f"# {title}")
        writer.block(words.paragraph(rng.randint(2, 4)))
        if number == 1 and page == 1:  # three probes, each findable by its own sentence
            for _ in range(3):
                text = f"Near {words.name()} the {rng.choice(words.theme)} {words.sentence(6, 9)[:-1].lower()}."
                info.passages.append(writer.block(text, "probe", query=text))
        if number == 1 and page == 2:
            writer.block(words.long_paragraph(LONG_PARAGRAPH))
            text = f"At {words.name()} the {rng.choice(words.theme)} {words.sentence(6, 9)[:-1].lower()}."
            info.passages.append(writer.block(text, "long_context", query=text))
            writer.block(words.long_paragraph(LONG_PARAGRAPH))
        if number == 2 and page == 1:
            text = f"Margin code {canaries['body']} was copied from the {rng.choice(words.theme)} cover."
            info.passages.append(writer.block(text, "canary", query=canaries["body"]))
        if number == 3 and page == 1:
            info.passages.append(writer.block(UNICODE_PARAGRAPH, "unicode", query=UNICODE_PARAGRAPH))
            text = words.wrapped(f"Across {words.name()} " + words.paragraph(4))
            info.passages.append(writer.block(text, "multiline", query=text))
        if number == 3 and page == 2:
            items = "\n".join(f"- {words.sentence(4, 7)}" for _ in range(3))
            info.passages.append(writer.block(items, "list", query=items))
            fence = "```text\n" + words.sentence() + "\n\n" + words.sentence() + "\n```"
            info.passages.append(writer.block(fence, "fence", query=fence))
        writer.block(words.paragraph(rng.randint(1, 3)))
    stamps = [created + (page - 1) * DAY for page in range(1, pages + 1)]
    front = {
        "notebook_id": notebook_id,
        "title": title,
        "author": None if number % 4 == 0 else f"Synthetic Author {1 + number % 5}",
        "created_at": created,
        "modified_at": stamps[-1] + 3600,
        "export_method": "markdown-export",
        "exported_at": stamps[-1] + 7200,
        "tags": [info.collection_id.split("-")[0]],
        # One undated page per collection exercises `timestamp: null`.
        "pages": [{"page": p, "timestamp": None if (number == 1 and p == pages) else stamps[p - 1]}
                  for p in range(1, pages + 1)],
    }
    text, page_texts = writer.render(front)
    _write(root / rel_path, text)
    info.notebooks[notebook_id] = NotebookInfo(notebook_id, rel_path, front, text, page_texts)
    info.notebook_ids.append(notebook_id)
    info.notebook_paths.append(rel_path)
    info.source_ids.extend(writer.source_ids)
    return front


def _artifact_sets(info: CollectionInfo, fronts: list[dict[str, Any]], words: _Words,
                   canaries: dict[str, str], created: int, root: Path) -> None:
    cid = info.collection_id
    first = [f["notebook_id"] for f in fronts[:3]]
    all_ids = [f["notebook_id"] for f in fronts]
    catalogue = "# Catalogue\n\n" + "\n".join(f"- {f['notebook_id']}: {f['title']}" for f in fronts) + "\n"
    summaries = {nb: f"# Summary of {nb}\n\n{words.paragraph(2)}\n" for nb in first}
    summaries[first[0]] += f"\nReviewer mark {canaries['artifact']}.\n"
    terms = {"terms": sorted(set(words.theme[:12])), "notebooks": first}
    themes = f"# Themes across the collection\n\n{words.paragraph(3)}\n"
    sets = [  # (set id, type, status, [(local id, file, media type, text, sources, steps)], staleness)
        ("catalogue", "index", "canonical",
         [("catalogue", "catalogue.md", "text/markdown", catalogue, all_ids, [("human_export", {"format": "markdown"})])],
         "unknown"),
        ("summaries", "summary", "offered",
         [(f"summary-{nb}", f"summary-{nb}.md", "text/markdown", text, [nb],
           [("passage_selection", {"pages": "all"}), ("extractive_summarizer", {"max_sentences": 2})])
          for nb, text in summaries.items()], "fresh"),
        ("term-extractions", "extraction", "offered",
         [("terms", "terms.json", "application/json", _json_text(terms), first,
           [("tokenizer", {"lowercase": True}), ("term_counter", {"top": 12})])], "fresh"),
        ("themes", "synthesis", "offered",
         [("themes", "themes.md", "text/markdown", themes, all_ids[:5],
           [("passage_selection", {"pages": "first"}), ("theme_clusterer", {"clusters": 3}),
            ("template_writer", {"template": "themes"})])], "stale"),
    ]
    for offset, (set_id, artifact_type, status, artifacts, staleness) in enumerate(sets):
        set_created = created + offset * 3600
        synthesized = status == "offered"
        entries, sources = [], []
        for local_id, file_name, media_type, text, source_notebooks, steps in artifacts:
            rel_path = f"{cid}/artifacts/{set_id}/{file_name}"
            digest = _write(root / rel_path, text)
            sources += [s for s in source_notebooks if s not in sources]
            entries.append({
                "artifact_id": local_id, "contents_file": file_name, "media_type": media_type, "sha256": digest,
                "provenance": {
                    "source_notebooks": source_notebooks,
                    "transformation_steps": [{"step_order": n, "tool": tool, "timestamp": set_created - 600 + n * 60,
                                              "parameters": params} for n, (tool, params) in enumerate(steps, 1)],
                    "created_at": set_created,
                    "created_by": "synthesis_pipeline" if synthesized else "human_export",
                },
                "synthesis_metadata": {
                    "synthesized": synthesized,
                    "confidence_note": ("Machine-derived from the source notebooks; wording is not the authors'."
                                        if synthesized else "Human export; no synthesis."),
                    "last_refreshed": set_created if synthesized else None,
                    "staleness_indicator": staleness,
                },
            })
            info.artifacts.append(ArtifactInfo(f"{cid}:{set_id}:{local_id}", cid, set_id, local_id, artifact_type,
                                               status, synthesized, media_type, rel_path, digest, source_notebooks))
        manifest = {"layout_version": LAYOUT_VERSION, "artifact_set_id": set_id, "artifact_type": artifact_type,
                    "status": status, "created_at": set_created, "source_notebooks": sources, "artifacts": entries}
        _write(root / f"{cid}/artifacts/{set_id}/set.json", _json_text(manifest))
        info.artifact_set_ids.append(set_id)


def _collection(root: Path, theme: tuple[str, str, list[str], str], index: int, notebooks: int, seed: int,
                canary_salt: str | None) -> CollectionInfo:
    cid, title, tags, vocabulary = theme
    rng = random.Random(f"{seed}:{cid}")
    words = _Words(rng, vocabulary)
    info = CollectionInfo(cid, title, cid)
    info.canaries = {kind: canary_token(kind, cid, canary_salt) for kind in CANARY_KINDS}
    start = EPOCH_2023 + index * 30 * DAY
    fronts = [_notebook(info, words, number, start + (number - 1) * 2 * DAY + rng.randint(0, 3600),
                        info.canaries, root) for number in range(1, notebooks + 1)]
    dated = [p["timestamp"] for f in fronts for p in f["pages"] if p["timestamp"] is not None]
    last = max(f["modified_at"] for f in fronts)
    _artifact_sets(info, fronts, words, info.canaries, last + DAY, root)
    meta = {"layout_version": LAYOUT_VERSION, "collection_id": cid, "title": title,
            "description": f"Synthetic {title.lower()} for the open-notebook profile.",
            "date_range": {"start": iso_day(min(dated)), "end": iso_day(max(dated))},
            "domain_tags": tags, "last_modified": last + DAY + 4 * 3600}
    _write(root / cid / "collection.json", _json_text(meta))
    return info


def build(root: Path | str, *, seed: int = 0, collections: int = 3, notebooks: int = 6,
          bench_notebooks: int = 0, canary_salt: str | None = None) -> GeneratedRoot:
    """Write `collections` themed collections of `notebooks` notebooks each (and, when
    `bench_notebooks` > 0, one more collection, 'bench-archive', of that many) under `root`,
    which must be absent or empty. Returns the oracle."""
    if not 1 <= collections <= len(THEMES):
        raise ValueError(f"collections must be 1..{len(THEMES)}")
    if notebooks < 3 or (bench_notebooks and bench_notebooks < 3):
        raise ValueError("a collection needs at least 3 notebooks (the notable passages live in 1-3)")
    root = Path(root)
    if root.exists() and any(root.iterdir()):
        raise FileExistsError("the fixture root must be absent or empty")
    root.mkdir(parents=True, exist_ok=True)
    themes = [(t, notebooks) for t in THEMES[:collections]]
    if bench_notebooks:
        themes.append((BENCH_THEME, bench_notebooks))
    built = {theme[0]: _collection(root, theme, index, count, seed, canary_salt)
             for index, (theme, count) in enumerate(themes)}
    return GeneratedRoot(root, seed, built)
