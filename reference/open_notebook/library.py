"""The loaded root: collections, one search index each, and verified reads of passages and
artifacts from disk.

Built once at start-up. Reads re-open the files, so what is served is what is stored now, and
each read is checked against the checksums recorded at start-up.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import errors, layout
from .embedding import Index
from .layout import Artifact, Collection, LayoutError, Notebook, Passage

# Wire identifiers (docs/reference-open-notebook.md, "Identifiers").
SOURCE_ID = re.compile(r"([a-z0-9-]{1,64}):([a-z0-9-]{1,64}):([0-9]{1,5}):([0-9]{1,6})")
ARTIFACT_ID = re.compile(r"([a-z0-9-]{1,64}):([a-z0-9-]{1,64}):([a-z0-9-]{1,64})")
SEGMENTATION_TOOL = "passage_segmentation"
PASSAGE_CHECKSUM_COVERS = "passage.exact_text (UTF-8 bytes)"
ARTIFACT_CHECKSUM_COVERS = "the exact bytes of the artifact's contents file"


def source_id(collection_id: str, passage: Passage) -> str:
    return f"{collection_id}:{passage.notebook_id}:{passage.page}:{passage.ordinal}"


def artifact_id(collection_id: str, artifact: Artifact) -> str:
    return f"{collection_id}:{artifact.set_id}:{artifact.artifact_id}"


def preview(text: str, limit: int) -> str:
    """A prefix of at most half the passage and at most limit - 1 characters, cut at a space
    when one is near, then an ellipsis: never the full text, at most `limit` characters."""
    size = min(limit - 1, len(text) // 2)
    cut = text[:size]
    space = cut.rfind(" ")
    if size < len(text) and not text[size].isspace() and space > size // 2:
        cut = cut[:space]
    return cut.rstrip() + "\u2026"


@dataclass(frozen=True)
class PassageView:
    text: str
    before: str
    after: str
    verified: bool


class Library:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.collections: dict[str, Collection] = layout.load_root(root)
        self.built_at = int(time.time())
        self.passages: dict[str, list[Passage]] = {}
        self.indexes: dict[str, Index] = {}
        self.sources: dict[str, tuple[str, Passage]] = {}
        for cid, collection in self.collections.items():
            passages = [p for nb in collection.notebooks.values() for p in nb.passages]
            self.passages[cid] = passages
            self.indexes[cid] = Index([p.text for p in passages])  # passages are in tie order
            for passage in passages:
                self.sources[source_id(cid, passage)] = (cid, passage)

    def counts(self) -> dict[str, int]:
        return {"collections": len(self.collections),
                "notebooks": sum(len(c.notebooks) for c in self.collections.values()),
                "passages": len(self.sources),
                "artifacts": sum(c.artifact_count() for c in self.collections.values()),
                "artifacts_failing_checksum": sum(not a.intact_at_start for c in self.collections.values()
                                                  for s in c.artifact_sets.values() for a in s.artifacts.values())}

    # -- lookups that apply the collection boundary ------------------------------------------
    def source(self, active: str, requested: str) -> tuple[Notebook, Passage]:
        if not SOURCE_ID.fullmatch(requested):
            raise errors.source_not_found(None, "malformed")  # never echo what is not an id
        found = self.sources.get(requested)
        if found is None:
            raise errors.source_not_found(requested)
        cid, passage = found
        if cid != active:
            raise errors.source_outside_collection(requested)
        return self.collections[cid].notebooks[passage.notebook_id], passage

    def artifact(self, active: str, requested: str) -> Artifact:
        match = ARTIFACT_ID.fullmatch(requested)
        if not match or match.group(1) != active:
            raise errors.artifact_not_found()
        artifact_set = self.collections[active].artifact_sets.get(match.group(2))
        found = artifact_set.artifacts.get(match.group(3)) if artifact_set else None
        if found is None:
            raise errors.artifact_not_found()
        return found

    # -- verified reads ----------------------------------------------------------------------
    def read_passage(self, notebook: Notebook, passage: Passage, context_chars: int) -> PassageView:
        """The passage as stored now, its bounded context (within its page) and whether its
        text still has the checksum recorded at start-up."""
        try:
            data = (self.root / notebook.rel_path).read_bytes()
        except OSError as exc:
            raise errors.source_not_found(None, "unavailable") from exc
        if layout.sha256_hex(data) == notebook.file_sha256:
            text, page, current = data.decode("utf-8"), notebook.page(passage.page), passage
        else:  # changed since start-up: find the same page and ordinal again
            try:
                text = layout.decode_text(data, notebook.rel_path)
                _front, pages, passages = layout.parse_notebook(text, notebook.notebook_id, notebook.rel_path)
            except LayoutError as exc:
                raise errors.ToolError("upstream_failure", "The notebook no longer follows the layout.",
                                       recovery="Restore the notebook file", context={"reason": "layout"}) from exc
            current = next((p for p in passages if (p.page, p.ordinal) == (passage.page, passage.ordinal)), None)
            if current is None:
                raise errors.source_not_found(None, "changed")
            page = pages[passage.page - 1]
        return PassageView(current.text,
                           text[max(page.start, current.start - context_chars):current.start],
                           text[current.end:min(page.end, current.end + context_chars)],
                           current.sha256 == passage.sha256)

    def read_artifact(self, artifact: Artifact) -> str | dict[str, Any]:
        """The contents, only when the bytes on disk still have the manifest's checksum."""
        try:
            data = (self.root / artifact.rel_path).read_bytes()
        except OSError as exc:
            raise errors.artifact_tampered() from exc
        if not artifact.intact_at_start or layout.sha256_hex(data) != artifact.sha256:
            raise errors.artifact_tampered()
        return layout.contents_of(artifact, data)


def is_whole_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and float(value).is_integer()
