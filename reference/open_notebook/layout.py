"""Reading the open-notebook collection layout (schemas/open-notebook/, described in
docs/reference-open-notebook.md): collections, notebooks cut into pages and passages, and
artifact sets with their checksums.

Server-free, so the generator's tests use it too. Every problem is one LayoutError naming
the file relative to the root and the failing field, never a value read from the file.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from markdown_it import MarkdownIt

KINDS = ("collection", "notebook", "artifact-set")
COLLECTION_FILE = "collection.json"
NOTEBOOK_DIR = "notebooks"
ARTIFACT_DIR = "artifacts"
SET_FILE = "set.json"
# A page opens with a line of exactly this form (whitespace inside the comment is free).
PAGE_MARKER = re.compile(r"<!--\s*page\s+([0-9]{1,5})\s*-->")
FRONT_MATTER_FENCE = "---"
_MARKDOWN = MarkdownIt("commonmark")
# libyaml's safe loader when PyYAML was built with it (several times faster), else PyYAML's.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class LayoutError(Exception):
    """The root does not follow the layout; str() is one line without file contents."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _schema_dir() -> Path:
    here = Path(__file__).resolve().parent
    for candidate in (here.parents[1] / "schemas",  # source checkout
                      here.parents[1] / "contract_tests" / "_contracts" / "schemas"):  # wheel
        if (candidate / "open-notebook").is_dir():
            return candidate / "open-notebook"
    raise FileNotFoundError("schemas/open-notebook not found")


@cache
def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one file kind: 'collection', 'notebook' (front matter), 'artifact-set'."""
    if kind not in KINDS:
        raise ValueError(f"unknown file kind {kind}")
    return json.loads((_schema_dir() / f"{kind}.schema.json").read_text(encoding="utf-8"))


@cache
def validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator(schema(kind))


def check(kind: str, data: Any, where: str) -> None:
    """Validate against the kind's schema; the error names the field and keyword, not the value."""
    errors = sorted(validator(kind).iter_errors(data), key=lambda e: (list(e.absolute_path), e.validator))
    if errors:
        first = errors[0]
        at = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.absolute_path)
        raise LayoutError(where, f"{at} fails the {kind} schema ({first.validator})")


# -- notebooks -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Page:
    number: int
    timestamp: int | None
    start: int  # character offsets into the notebook file's text: the page's content span
    end: int


@dataclass(frozen=True)
class Passage:
    """One top-level Markdown block of a page, verbatim (trailing whitespace dropped)."""

    notebook_id: str
    page: int
    ordinal: int  # 1-based within the page
    start: int
    end: int
    text: str
    sha256: str


@dataclass
class Notebook:
    notebook_id: str
    rel_path: str
    front: dict[str, Any]
    pages: list[Page]
    passages: list[Passage]
    file_sha256: str

    @property
    def title(self) -> str:
        return self.front["title"]

    def page(self, number: int) -> Page:
        return self.pages[number - 1]


def decode_text(data: bytes, where: str) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        raise LayoutError(where, "starts with a byte order mark")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LayoutError(where, "is not valid UTF-8") from exc
    if "\r" in text or "\x00" in text:
        raise LayoutError(where, "contains CR or NUL characters (LF line ends only)")
    return text


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any], int]:
    """The YAML front matter and the offset where the body starts."""
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end] != FRONT_MATTER_FENCE:
        raise LayoutError(where, "does not start with a '---' front matter line")
    offset = first_end + 1
    while offset <= len(text):
        line_end = text.find("\n", offset)
        line_end = len(text) if line_end < 0 else line_end
        if text[offset:line_end] == FRONT_MATTER_FENCE:
            try:
                front = yaml.load(text[first_end + 1:offset], Loader=_YAML_LOADER)
            except yaml.YAMLError as exc:
                raise LayoutError(where, "front matter is not valid YAML") from exc
            return front, min(line_end + 1, len(text))
        offset = line_end + 1
    raise LayoutError(where, "front matter has no closing '---' line")


def _line_starts(body: str) -> list[int]:
    starts = [0]
    for line in body.split("\n")[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return starts


def parse_notebook(text: str, notebook_id: str, where: str) -> tuple[dict[str, Any], list[Page], list[Passage]]:
    """Front matter (schema-checked), pages and passages of one notebook file's text."""
    front, body_offset = split_front_matter(text, where)
    check("notebook", front, where)
    if front["notebook_id"] != notebook_id:
        raise LayoutError(where, "notebook_id differs from the file name")
    declared = front["pages"]
    if [p["page"] for p in declared] != list(range(1, len(declared) + 1)):
        raise LayoutError(where, "pages must be numbered 1, 2, ... in order")
    body = text[body_offset:]
    starts = _line_starts(body)

    def at(line: int) -> int:
        return body_offset + (starts[line] if line < len(starts) else len(body))

    markers: list[tuple[int, int, int]] = []  # (page number, marker line start, content start)
    blocks: list[tuple[int, int]] = []  # (first line, end line) of content blocks
    for token in _MARKDOWN.parse(body):
        if token.level != 0 or token.map is None or token.nesting == -1 or token.type == "hr":
            continue
        first, end = token.map
        marker = PAGE_MARKER.fullmatch(token.content.strip()) if token.type == "html_block" else None
        if marker:
            markers.append((int(marker.group(1)), at(first), at(end)))
        else:
            blocks.append((first, end))
    if [m[0] for m in markers] != list(range(1, len(declared) + 1)):
        raise LayoutError(where, "page markers must be '<!-- page N -->' for each declared page, in order")
    pages = [Page(number, declared[number - 1]["timestamp"], content_start,
                  markers[number][1] if number < len(markers) else len(text))
             for number, _marker_start, content_start in markers]
    passages: list[Passage] = []
    ordinals: dict[int, int] = {}
    for first, end in blocks:
        start = at(first)
        block = text[start:at(end)].rstrip(" \t\n")
        if not block:
            continue
        page = next((p for p in pages if p.start <= start < p.end), None)
        if page is None:
            raise LayoutError(where, "content before the first page marker")
        ordinals[page.number] = ordinals.get(page.number, 0) + 1
        passages.append(Passage(notebook_id, page.number, ordinals[page.number], start, start + len(block),
                                block, sha256_hex(block.encode("utf-8"))))
    return front, pages, passages


def read_notebook(root: Path, rel_path: str) -> Notebook:
    path = _plain_file(root, rel_path)
    data = path.read_bytes()
    notebook_id = path.name[:-len(".md")]
    front, pages, passages = parse_notebook(decode_text(data, rel_path), notebook_id, rel_path)
    return Notebook(notebook_id, rel_path, front, pages, passages, sha256_hex(data))


# -- artifacts -----------------------------------------------------------------------------
@dataclass
class Artifact:
    artifact_id: str  # local to its set
    set_id: str
    rel_path: str
    media_type: str
    sha256: str
    provenance: dict[str, Any]
    synthesis_metadata: dict[str, Any]
    intact_at_start: bool  # the file's bytes matched sha256 when the root was loaded


@dataclass
class ArtifactSet:
    manifest: dict[str, Any]
    artifacts: dict[str, Artifact]

    @property
    def set_id(self) -> str:
        return self.manifest["artifact_set_id"]


def contents_of(artifact: Artifact, data: bytes) -> str | dict[str, Any]:
    """An artifact file's payload: Markdown as its exact text, JSON as its object."""
    text = decode_text(data, artifact.rel_path)
    if artifact.media_type == "text/markdown":
        return text
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise LayoutError(artifact.rel_path, "is not valid JSON") from exc
    if not isinstance(value, dict):
        raise LayoutError(artifact.rel_path, "must hold one JSON object")
    return value


def read_artifact_set(root: Path, rel_dir: str, notebook_ids: set[str]) -> ArtifactSet:
    where = f"{rel_dir}/{SET_FILE}"
    manifest = _read_json(root, where)
    check("artifact-set", manifest, where)
    if manifest["artifact_set_id"] != rel_dir.rsplit("/", 1)[-1]:
        raise LayoutError(where, "artifact_set_id differs from the directory name")
    referenced = set(manifest["source_notebooks"])
    artifacts: dict[str, Artifact] = {}
    for index, entry in enumerate(manifest["artifacts"]):
        if entry["artifact_id"] in artifacts:
            raise LayoutError(where, f"$.artifacts[{index}].artifact_id is not unique in the set")
        steps = entry["provenance"]["transformation_steps"]
        if [s["step_order"] for s in steps] != list(range(1, len(steps) + 1)):
            raise LayoutError(where, f"$.artifacts[{index}] transformation steps must be ordered 1, 2, ...")
        referenced |= set(entry["provenance"]["source_notebooks"])
        rel_path = f"{rel_dir}/{entry['contents_file']}"
        data = _plain_file(root, rel_path).read_bytes()
        artifact = Artifact(entry["artifact_id"], manifest["artifact_set_id"], rel_path, entry["media_type"],
                            entry["sha256"], entry["provenance"], entry["synthesis_metadata"],
                            sha256_hex(data) == entry["sha256"])
        if artifact.intact_at_start:
            contents_of(artifact, data)  # a vouched-for file must also parse
        artifacts[artifact.artifact_id] = artifact
    if not referenced <= notebook_ids:
        raise LayoutError(where, "names a source notebook that is not in the collection")
    return ArtifactSet(manifest, artifacts)


# -- collections ---------------------------------------------------------------------------
@dataclass
class Collection:
    collection_id: str
    meta: dict[str, Any]
    notebooks: dict[str, Notebook] = field(default_factory=dict)
    artifact_sets: dict[str, ArtifactSet] = field(default_factory=dict)

    def artifact_count(self) -> int:
        return sum(len(s.artifacts) for s in self.artifact_sets.values())


def read_collection(root: Path, collection_id: str) -> Collection:
    where = f"{collection_id}/{COLLECTION_FILE}"
    meta = _read_json(root, where)
    check("collection", meta, where)
    if meta["collection_id"] != collection_id:
        raise LayoutError(where, "collection_id differs from the directory name")
    collection = Collection(collection_id, meta)
    notebooks = [read_notebook(root, f"{collection_id}/{NOTEBOOK_DIR}/{name}")
                 for name in _entries(root, f"{collection_id}/{NOTEBOOK_DIR}", want_dirs=False) if name.endswith(".md")]
    collection.notebooks = {nb.notebook_id: nb for nb in sorted(notebooks, key=lambda nb: nb.notebook_id)}
    for name in _entries(root, f"{collection_id}/{ARTIFACT_DIR}", want_dirs=True):
        artifact_set = read_artifact_set(root, f"{collection_id}/{ARTIFACT_DIR}/{name}", set(collection.notebooks))
        collection.artifact_sets[artifact_set.set_id] = artifact_set
    return collection


def load_root(root: Path) -> dict[str, Collection]:
    """Every collection under `root` (a directory holding collection.json), by id, sorted."""
    root = Path(root)
    if not root.is_dir():
        raise LayoutError(".", "the notebooks root is not a directory")
    return {name: read_collection(root, name) for name in _entries(root, "", want_dirs=True)
            if (root / name / COLLECTION_FILE).exists() or (root / name / COLLECTION_FILE).is_symlink()}


def _entries(root: Path, rel_dir: str, *, want_dirs: bool) -> list[str]:
    """Sorted names of the visible directories (or files) in rel_dir; none if it is absent.

    A symbolic link anywhere in the layout is an error: following one could leave the root.
    """
    directory = root / rel_dir if rel_dir else root
    if directory.is_symlink():
        raise LayoutError(rel_dir, "is a symbolic link")
    if not directory.is_dir():
        return []
    names = []
    for entry in sorted(directory.iterdir(), key=lambda p: p.name):
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            raise LayoutError(f"{rel_dir}/{entry.name}".lstrip("/"), "is a symbolic link")
        if entry.is_dir() == want_dirs:
            names.append(entry.name)
    return names


def _plain_file(root: Path, rel_path: str) -> Path:
    path = root / rel_path
    if path.is_symlink():
        raise LayoutError(rel_path, "is a symbolic link")
    if not path.is_file():
        raise LayoutError(rel_path, "is missing or not a regular file")
    return path


def _read_json(root: Path, rel_path: str) -> Any:
    data = _plain_file(root, rel_path).read_bytes()
    try:
        return json.loads(decode_text(data, rel_path))
    except ValueError as exc:
        raise LayoutError(rel_path, "is not valid JSON") from exc
