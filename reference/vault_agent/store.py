"""The embedded index: one SQLite file per vault with notes, chunk entries, an FTS5 table
(BM25) and, when a model is configured, a sqlite-vec table of unit vectors.

Writers (the `index`/`reindex` commands, POST /index and /reindex, the serve bootstrap) take
`index.lock` (lock.py) with flock and write their phase ("pending", then "updating") into
it; readers test the lock without ever creating a file. A full build goes to
index.tmp.sqlite and is swapped in with os.replace; an incremental update is one
transaction. Readers keep using the last committed index meanwhile (WAL).
"""

from __future__ import annotations

import json
import os
import struct
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import db
from .config import Settings, vault_identity
from .embedding import Model, embedding_text
from .errors import VaultError, warning
from .lock import WriterLock
from .markdown import MAX_CHUNK, TARGET_CHUNK, ParsedNote, parse_note
from .safety import DEFAULT_EXCLUDES, NOTE_SUFFIXES, Entry, Rules, walk_notes

SCHEMA_VERSION = "2"  # Phase 1 indexing.md#index-storage
MAX_INDEXED_NOTE = 2 * 1024 * 1024  # larger notes are registered without chunks
TITLE_PREFIX = 64 * 1024  # what is read of such a note to find its title
TMP_NAME = "index.tmp.sqlite"

SCHEMA = """
CREATE TABLE manifest(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notes(id TEXT PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL, title TEXT NOT NULL, metadata TEXT NOT NULL,
  attachment_count INTEGER NOT NULL, chunk_count INTEGER NOT NULL);
CREATE TABLE entries(rowid INTEGER PRIMARY KEY, note_id TEXT NOT NULL, idx INTEGER,
  heading TEXT, heading_path TEXT NOT NULL, content TEXT NOT NULL);
CREATE INDEX entries_note ON entries(note_id, idx);
CREATE TABLE skipped(path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5(title, aliases, tags, headings, body, tokenize='unicode61');
"""


def note_id(rel: str) -> str:
    import hashlib

    return hashlib.sha256(rel.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def fingerprint(settings: Settings, model: Model | None) -> dict[str, str]:
    """What the index depends on (indexing.md#vault-identity-and-index-location)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "vault_identity": vault_identity(settings.vault_root),  # type: ignore[arg-type]
        "excludes": json.dumps([*DEFAULT_EXCLUDES, *settings["vault.exclude"]]),
        "chunking": f"{TARGET_CHUNK}/{MAX_CHUNK}/{MAX_INDEXED_NOTE}/{','.join(NOTE_SUFFIXES)}",
        "embedding_model": model.identity if model else "",
        "embedding_dimension": str(model.dimension) if model else "",
    }


def incompatibilities(manifest: dict[str, str], wanted: dict[str, str], *, model_known: bool) -> list[str]:
    """Reindex reasons (incremental-indexing.md#error-codes). Turning embeddings off keeps the
    index usable (lexical only); any other change of the embedding model is incompatible."""
    if manifest.get("schema_version") != SCHEMA_VERSION:
        return ["INDEX_SCHEMA_INCOMPATIBLE"]
    reasons = []
    if manifest.get("vault_identity") != wanted["vault_identity"]:
        reasons.append("INDEX_VAULT_IDENTITY_CHANGED")
    if manifest.get("excludes") != wanted["excludes"]:
        reasons.append("INDEX_EXCLUDES_CHANGED")
    if manifest.get("chunking") != wanted["chunking"]:
        reasons.append("INDEX_CHUNKING_CHANGED")
    if model_known and wanted["embedding_model"] and manifest.get("embedding_model") != wanted["embedding_model"]:
        built_dim = manifest.get("embedding_dimension", "")
        reasons.append("INDEX_EMBEDDING_DIMENSION_MISMATCH" if built_dim and built_dim != wanted["embedding_dimension"]
                       else "INDEX_EMBEDDINGS_STALE")
    return reasons


def pack(vector: list[float]) -> bytes:
    return struct.pack(f"{len(vector)}f", *vector)


# -- reading -----------------------------------------------------------------------------------
class IndexReader:
    """Per-thread read-only connections to one index file, reopened when a rebuild swapped a
    new file in (its inode changes)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._local = threading.local()

    def exists(self) -> bool:
        return self.path is not None and self.path.is_file()

    def conn(self):
        """(connection, sqlite-vec loaded) or raise INDEX_NOT_FOUND."""
        try:
            inode = os.stat(self.path).st_ino  # type: ignore[arg-type]
        except (OSError, TypeError):
            raise VaultError("INDEX_NOT_FOUND") from None
        cached = getattr(self._local, "cached", None)
        if cached is not None and cached[0] == inode:
            return cached[1], cached[2]
        if cached is not None:
            cached[1].close()
        try:
            conn, vec = db.connect(str(self.path), readonly=True)
        except db.DatabaseError:
            raise VaultError("INDEX_NOT_FOUND") from None
        self._local.cached = (inode, conn, vec)
        return conn, vec

    def manifest(self) -> dict[str, str] | None:
        """None when no index file exists; {} when it is unreadable (treated as incompatible)."""
        if not self.exists():
            return None
        try:
            conn, _vec = self.conn()
            tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE name IN "
                                  "('manifest', 'notes', 'entries', 'fts', 'skipped')").fetchone()[0]
            if tables != 5:
                return {}  # not an index this schema version can read: incompatible
            return dict(conn.execute("SELECT key, value FROM manifest").fetchall())
        except (VaultError, db.DatabaseError):
            return {}

    def note_records(self) -> dict[str, tuple[int, int]]:
        """Every discoverable Markdown file the last update saw: notes and skipped files."""
        conn, _ = self.conn()
        return {path: (size, mtime) for path, size, mtime in conn.execute(
            "SELECT path, size, mtime_ns FROM notes UNION ALL SELECT path, size, mtime_ns FROM skipped")}


# -- writing -----------------------------------------------------------------------------------
@dataclass
class Summary:
    mode: str
    notes_indexed: int = 0
    chunks_indexed: int = 0
    notes_skipped: int = 0
    warnings: list[dict[str, Any]] = field(default_factory=list)
    embeddings: bool = False

    def data(self) -> dict[str, Any]:
        return {"mode": self.mode, "notesIndexed": self.notes_indexed, "chunksIndexed": self.chunks_indexed,
                "notesSkipped": self.notes_skipped, "warningCount": len(self.warnings)}


def _read_note(rules: Rules, entry: Entry) -> tuple[ParsedNote | None, str | None]:
    """(parsed note, warning code). Too-large notes are registered from a prefix, unchunked."""
    path = rules.root / entry.rel
    large = entry.size > MAX_INDEXED_NOTE
    try:
        with open(path, "rb") as fh:
            raw = fh.read(TITLE_PREFIX if large else entry.size + 1)
    except OSError:
        return None, "FILE_NOT_UTF8"
    if b"\x00" in raw:
        return None, "FILE_BINARY"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        if not large:
            return None, "FILE_NOT_UTF8"
        text = raw.decode("utf-8", "ignore")
    stem = entry.rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    parsed = parse_note(text, stem, chunked=not large)
    if large:
        return parsed, "FILE_TOO_LARGE_FOR_INDEXING"
    return parsed, "FRONTMATTER_PARSE_FAILED" if parsed.frontmatter_failed else None


def _insert_note(conn, entry: Entry, parsed: ParsedNote, model: Model | None, vec: bool) -> int:
    nid = note_id(entry.rel)
    clash = conn.execute("SELECT path FROM notes WHERE id = ?", (nid,)).fetchone()
    if clash and clash[0] != entry.rel:
        raise VaultError("INTERNAL_ERROR")  # ID_COLLISION: two paths with one SHA-256 prefix
    meta = parsed.metadata
    conn.execute("INSERT INTO notes VALUES (?,?,?,?,?,?,?,?)",
                 (nid, entry.rel, entry.size, entry.mtime_ns, parsed.title, json.dumps(meta),
                  parsed.attachment_count, len(parsed.chunks)))
    aliases, tags = " ".join(meta["aliases"]), " ".join(meta["tags"])
    rows = [(i, c.heading, c.heading_path, c.content) for i, c in enumerate(parsed.chunks)] or [(None, None, [], "")]
    for idx, heading, path, content in rows:
        # Note-type entries (idx NULL) make chunkless notes findable by title, path and metadata.
        body = content if idx is not None else entry.rel.replace("/", " ")
        cur = conn.execute("INSERT INTO entries(note_id, idx, heading, heading_path, content) VALUES (?,?,?,?,?)",
                           (nid, idx, heading, json.dumps(path), content))
        rowid = cur.lastrowid
        conn.execute("INSERT INTO fts(rowid, title, aliases, tags, headings, body) VALUES (?,?,?,?,?,?)",
                     (rowid, parsed.title, aliases, tags, " ".join(path), body))
        if model is not None and vec and idx is not None:
            vector = model.embed(embedding_text(parsed.title, path, content))
            if vector is not None:
                conn.execute("INSERT INTO vec(rowid, embedding) VALUES (?, ?)", (rowid, pack(vector)))
    return len(parsed.chunks)


def _delete_note(conn, nid: str, vec: bool) -> None:
    rowids = [r for (r,) in conn.execute("SELECT rowid FROM entries WHERE note_id = ?", (nid,))]
    for rowid in rowids:
        conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
        if vec:
            conn.execute("DELETE FROM vec WHERE rowid = ?", (rowid,))
    conn.execute("DELETE FROM entries WHERE note_id = ?", (nid,))
    conn.execute("DELETE FROM notes WHERE id = ?", (nid,))


def _has_table(conn, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def build(settings: Settings, rules: Rules, index_path: Path, model: Model | None, *, full: bool,
          require_embeddings: bool, embedding_failed: bool = False) -> Summary:
    """Run one writer: incremental when a compatible index exists and `full` is false."""
    index_dir = index_path.parent
    lock = WriterLock(index_dir)
    try:
        lock.phase("pending")
        wanted = fingerprint(settings, model)
        existing = IndexReader(index_path).manifest()
        incremental = not full and bool(existing) and not incompatibilities(existing, wanted, model_known=True)
        entries = list(walk_notes(rules))
        lock.hold("pending")
        lock.phase("updating")
        if incremental:
            summary = _incremental(index_path, rules, entries, model, wanted, lock)
        else:
            summary = _full(index_path, rules, entries, model, wanted, lock)
        if embedding_failed:
            summary.warnings.append(warning("EMBEDDING_FAILED"))
        return summary
    finally:
        lock.release()


def _write_manifest(conn, wanted: dict[str, str], *, built: bool) -> None:
    stamp = now_iso()
    values = {**wanted, "last_update_at": stamp}
    if built:
        values["built_at"] = stamp
    conn.executemany("INSERT OR REPLACE INTO manifest VALUES (?, ?)", list(values.items()))


def _full(index_path: Path, rules: Rules, entries: list[Entry], model: Model | None, wanted: dict[str, str],
          lock: WriterLock) -> Summary:
    tmp = index_path.parent / TMP_NAME
    for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        leftover.unlink(missing_ok=True)
    summary = Summary("full")
    conn, vec = db.connect(str(tmp), readonly=False)
    try:
        conn.executescript(SCHEMA)
        use_model = model if vec else None
        if use_model is not None:
            conn.execute(f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{use_model.dimension}] distance_metric=cosine)")
        else:
            wanted = {**wanted, "embedding_model": "", "embedding_dimension": ""}
        summary.embeddings = use_model is not None
        conn.execute("BEGIN")
        for entry in entries:
            parsed, problem = _read_note(rules, entry)
            if problem:
                summary.warnings.append(warning(problem, path=entry.rel, size=entry.size))
            if parsed is None:
                summary.notes_skipped += 1
                conn.execute("INSERT INTO skipped VALUES (?,?,?)", (entry.rel, entry.size, entry.mtime_ns))
                continue
            summary.chunks_indexed += _insert_note(conn, entry, parsed, use_model, vec)
            summary.notes_indexed += 1
        _write_manifest(conn, wanted, built=True)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except BaseException:
        conn.close()
        tmp.unlink(missing_ok=True)
        raise
    conn.close()
    _hold_then(lock, lambda: os.replace(tmp, index_path))
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    return summary


def _hold_then(lock: WriterLock, commit) -> None:
    """The `updating` hold point sits just before the new state becomes visible."""
    lock.hold("updating")
    commit()


def _incremental(index_path: Path, rules: Rules, entries: list[Entry], model: Model | None,
                 wanted: dict[str, str], lock: WriterLock) -> Summary:
    summary = Summary("incremental")
    conn, vec = db.connect(str(index_path), readonly=False)
    try:
        vec = vec and _has_table(conn, "vec")
        use_model = model if vec else None
        summary.embeddings = use_model is not None
        known = {path: (nid, size, mtime) for nid, path, size, mtime in
                 conn.execute("SELECT id, path, size, mtime_ns FROM notes")}
        skipped = {path: (size, mtime) for path, size, mtime in conn.execute("SELECT path, size, mtime_ns FROM skipped")}
        seen = set()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM skipped")
        for entry in entries:
            seen.add(entry.rel)
            old = known.get(entry.rel)
            if (old is not None and (old[1], old[2]) == (entry.size, entry.mtime_ns)) \
                    or skipped.get(entry.rel) == (entry.size, entry.mtime_ns):
                if entry.rel in skipped:
                    conn.execute("INSERT INTO skipped VALUES (?,?,?)", (entry.rel, entry.size, entry.mtime_ns))
                summary.notes_skipped += 1
                continue
            if old is not None:
                _delete_note(conn, old[0], vec)
            parsed, problem = _read_note(rules, entry)
            if problem:
                summary.warnings.append(warning(problem, path=entry.rel, size=entry.size))
            if parsed is None:
                summary.notes_skipped += 1
                conn.execute("INSERT INTO skipped VALUES (?,?,?)", (entry.rel, entry.size, entry.mtime_ns))
                continue
            summary.chunks_indexed += _insert_note(conn, entry, parsed, use_model, vec)
            summary.notes_indexed += 1
        for path, (nid, _size, _mtime) in known.items():
            if path not in seen:
                _delete_note(conn, nid, vec)
        keep = dict(wanted)
        if use_model is None:
            keep.update(embedding_model="", embedding_dimension="")
        _write_manifest(conn, keep, built=False)
        _hold_then(lock, lambda: conn.execute("COMMIT"))
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
    return summary
