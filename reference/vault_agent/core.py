"""The core operations both transports call: search, related, get_note, get_chunk,
get_attachment, health, status, index. Each returns a Reply (the HTTP `data` payload and the
envelope's warnings) or raises VaultError; HTTP wraps the reply in {data, warnings}, MCP
returns {**data, warnings}, so both carry the same fields by construction.
"""

from __future__ import annotations

import base64
import json
import math
import mimetypes
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import db, validate
from .config import Settings, index_file
from .embedding import Model, ModelUnavailable, load_model
from .errors import VaultError, warning
from .lock import writer_phase
from .markdown import parse_note
from .ranking import TOKEN, Ranker
from .reply import Reply  # re-exported: the transports import it from here
from .safety import Rules, resolve_attachment, resolve_note_file, walk_notes
from .store import IndexReader, build, fingerprint, incompatibilities, note_id

VERSION = "0.1.0"
NOTE_LIMIT = 200 * 1024  # retrieval.md#explicit-retrieval-size-limits
ATTACHMENT_LIMIT = 10 * 1024 * 1024
MCP_PAYLOAD_CAP = 50 * 1024 * 1024  # Phase 3 requirements, binary content handling
SNIPPET_MAX = 240
RELATED_TEXT_CAP = 4000
NOTE_TYPE = "text/markdown; charset=utf-8"
FRESHNESS_WARNING = {"stale": "INDEX_STALE", "pending": "INDEX_PENDING", "updating": "INDEX_UPDATING",
                     "unknown": "INDEX_FRESHNESS_UNKNOWN", "incompatible": "INDEX_INCOMPATIBLE"}


@dataclass
class State:
    """What a request needs to know about the index (status-api.md#freshness-states)."""

    exists: bool
    freshness: str
    reasons: list[str]
    embedding_state: str  # disabled | ready | unavailable | incompatible
    model: Model | None  # set only when embedding queries can run
    changes: int = 0
    last_update: str | None = None


class Core(Ranker):
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root: Path | None = settings.vault_root
        self.index_path = index_file(settings)
        self.reader = IndexReader(self.index_path)
        self.rules = Rules.make(self.root, settings["vault.exclude"], self.index_path.parent) if self.root else None
        self._model: tuple[tuple[int, int], Model | None] | None = None

    # -- state -----------------------------------------------------------------------------------
    def _rules(self) -> Rules:
        if self.rules is None:
            raise VaultError("VAULT_NOT_CONFIGURED")
        return self.rules

    def model(self) -> Model | None:
        """The configured model if it loads (cached by the file's size and mtime)."""
        path = self.settings["embedding.model"]
        if not self.settings["embedding.enabled"] or path is None:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        key = (st.st_size, st.st_mtime_ns)
        if self._model is None or self._model[0] != key:
            try:
                self._model = (key, load_model(Path(path)))
            except ModelUnavailable:
                self._model = (key, None)
        return self._model[1]

    def state(self, *, scan: bool = True) -> State:
        """Freshness by priority incompatible > updating/pending > unknown > stale > fresh.
        `scan` compares every discoverable note with the index (search, related, status);
        without it the caller checks the one note it resolves (get_note and get_chunk warn
        only when their own lookup may be affected)."""
        rules = self._rules()
        enabled = bool(self.settings["embedding.enabled"])
        model = self.model() if enabled else None
        ready = model is not None and db.vec_available()
        manifest = self.reader.manifest()
        if manifest is None:
            return State(False, "unknown", ["INDEX_NOT_FOUND"], "unavailable" if enabled and not ready
                         else ("ready" if ready else "disabled"), None)
        wanted = fingerprint(self.settings, model if ready else None)
        reasons = incompatibilities(manifest, wanted, model_known=ready)
        last = manifest.get("last_update_at")
        embedding_reason = {"INDEX_EMBEDDINGS_STALE", "INDEX_EMBEDDING_DIMENSION_MISMATCH"} & set(reasons)
        emb_state = ("incompatible" if embedding_reason else "ready" if ready else "unavailable") if enabled else "disabled"
        if reasons:
            return State(True, "incompatible", reasons, emb_state, None, last_update=last)
        usable = model if ready and manifest.get("embedding_model") == model.identity else None
        if enabled and usable is None and emb_state == "ready":
            emb_state = "unavailable"
        phase = writer_phase(self.index_path.parent)
        if phase:
            return State(True, phase, [], emb_state, usable, last_update=last)
        if not os.path.isdir(rules.root):
            return State(True, "unknown", [], emb_state, usable, last_update=last)
        changes = 0
        if scan:
            records = self.reader.note_records()
            for entry in walk_notes(rules):
                if records.pop(entry.rel, None) != (entry.size, entry.mtime_ns):
                    changes += 1
            changes += len(records)
        return State(True, "stale" if changes else "fresh", [], emb_state, usable, changes, last)

    @staticmethod
    def freshness_warnings(state: State) -> list[dict[str, Any]]:
        code = FRESHNESS_WARNING.get(state.freshness)
        if code is None:
            return []
        return [warning(code, freshness=state.freshness, count=state.changes or None)]

    def _queryable(self, state: State) -> None:
        if not state.exists:
            raise VaultError("INDEX_NOT_FOUND")
        if state.freshness == "incompatible":
            raise VaultError("INDEX_INCOMPATIBLE", reason=state.reasons[0] if state.reasons else None)

    def _mode(self, requested: str | None, state: State, default: str) -> tuple[str, list[dict[str, Any]]]:
        """(used mode, warnings) per retrieval.md#search-api and #related-api."""
        available = state.model is not None
        configured = bool(self.settings["embedding.enabled"])
        unavailable = [warning("EMBEDDING_UNAVAILABLE")]
        if requested is None:
            if available:
                return default, []
            return "lexical", unavailable if configured else []
        if requested == "lexical" or available:
            return requested, []
        if requested == "embedding":
            raise VaultError("EMBEDDING_UNAVAILABLE")
        return "lexical", unavailable

    # -- results of the ranking (ranking.py) -----------------------------------------------------
    def _results(self, conn, ranked: list[tuple[int, float]], reason: str, terms: list[str]) -> list[dict[str, Any]]:
        if not ranked:
            return []
        marks = ",".join("?" * len(ranked))
        rows = {row[0]: row for row in conn.execute(
            "SELECT e.rowid, e.note_id, e.idx, e.heading, e.heading_path, e.content, n.path, n.title, n.metadata, "
            f"n.attachment_count FROM entries e JOIN notes n ON n.id = e.note_id WHERE e.rowid IN ({marks})",
            [rowid for rowid, _ in ranked])}
        out = []
        for rowid, score in ranked:
            row = rows.get(rowid)
            if row is None:
                continue
            _rowid, nid, idx, heading, heading_path, content, path, title, metadata, attachments = row
            meta = {**json.loads(metadata), "attachmentCount": attachments}
            chunk = idx is not None
            out.append({
                "id": f"{nid}:{idx}" if chunk else nid, "type": "chunk" if chunk else "note", "noteId": nid,
                "chunkIndex": idx, "path": path, "title": title, "heading": heading if chunk else None,
                "headingPath": json.loads(heading_path) if chunk else [],
                "snippet": snippet(content, terms) if chunk else "", "score": round(score, 6),
                "reason": reason, "metadata": meta,
            })
        return out

    # -- operations ------------------------------------------------------------------------------
    def search(self, args: dict[str, Any]) -> Reply:
        query, requested, limit = validate.query(args), validate.mode(args), validate.limit(args)
        self._rules()
        state = self.state()
        self._queryable(state)
        used, warnings = self._mode(requested, state, "hybrid")
        conn, _vec = self.reader.conn()
        vector = state.model.embed(query) if state.model is not None and used != "lexical" else None
        ranked = self._rank(conn, used, query, vector, limit)
        results = self._results(conn, ranked, f"{used}_match", TOKEN.findall(query.casefold()))
        data = {"requestedMode": requested, "usedMode": used, "limit": limit, "freshness": state.freshness,
                "results": results}
        return Reply(data, warnings + self.freshness_warnings(state))

    def related(self, args: dict[str, Any]) -> Reply:
        kind, value, nid, idx = validate.related_input(args)
        requested, limit = validate.mode(args), validate.limit(args)
        self._rules()
        state = self.state()
        self._queryable(state)
        conn, _vec = self.reader.conn()
        note = conn.execute("SELECT title, metadata FROM notes WHERE id = ?", (nid,)).fetchone()
        if kind == "note":
            if note is None:
                raise VaultError("NOTE_NOT_FOUND")
            rows = conn.execute("SELECT rowid, content FROM entries WHERE note_id = ? ORDER BY idx", (nid,)).fetchall()
        else:
            row = conn.execute("SELECT rowid, content FROM entries WHERE note_id = ? AND idx = ?",
                               (nid, idx if idx is not None and idx < 2**62 else -1)).fetchone() if note else None
            if row is None:
                raise VaultError("CHUNK_NOT_FOUND")
            rows = [row]
        used, warnings = self._mode(requested, state, "embedding")
        meta = json.loads(note[1])
        text = " ".join([note[0], *meta["aliases"], *meta["tags"], *(content for _r, content in rows)])[:RELATED_TEXT_CAP]
        terms = [term for term, _n in Counter(t for t in TOKEN.findall(text.casefold()) if len(t) > 2).most_common(32)]
        vector = self._source_vector(conn, state.model, [r for r, _c in rows], text) if used != "lexical" else None
        skip_rows = {r for r, _c in rows}
        ranked = self._rank(conn, used, " ".join(terms), vector, limit, skip_note=nid if kind == "note" else None,
                            skip_rows=skip_rows, max_terms=32)
        ranked = [(rowid, score) for rowid, score in ranked if rowid not in skip_rows]
        if kind == "note":
            note_rows = {r for (r,) in conn.execute("SELECT rowid FROM entries WHERE note_id = ?", (nid,))}
            ranked = [(rowid, score) for rowid, score in ranked if rowid not in note_rows]
        results = self._results(conn, ranked, f"related_{used}", terms)
        data = {"input": {"type": kind, "id": value}, "requestedMode": requested, "usedMode": used, "limit": limit,
                "freshness": state.freshness, "results": results}
        return Reply(data, warnings + self.freshness_warnings(state))

    def _resolve_unindexed(self, nid: str) -> str:
        """Safe resolution while the index is incompatible: the note id is found by hashing the
        paths of the vault's discoverable notes, never by reading the incompatible index."""
        for entry in walk_notes(self._rules()):
            if note_id(entry.rel) == nid:
                return entry.rel
        raise VaultError("NOTE_NOT_FOUND")

    def _lookup(self, nid: str) -> tuple[State, str, str | None, dict[str, Any] | None]:
        """(state, vault-relative path, indexed title, indexed metadata) of a note id."""
        manifest_state = self.state(scan=False)
        if not manifest_state.exists:
            raise VaultError("INDEX_NOT_FOUND")
        if manifest_state.freshness == "incompatible":
            return manifest_state, self._resolve_unindexed(nid), None, None
        conn, _vec = self.reader.conn()
        row = conn.execute("SELECT path, size, mtime_ns, title, metadata FROM notes WHERE id = ?", (nid,)).fetchone()
        if row is None:
            raise VaultError("NOTE_NOT_FOUND")
        state = manifest_state
        if state.freshness == "fresh":
            try:
                st = os.stat(self._rules().root / row[0])
                changed = (st.st_size, st.st_mtime_ns) != (row[1], row[2])
            except OSError:
                changed = True
            if changed:
                state.freshness, state.changes = "stale", 1
        return state, row[0], row[3], json.loads(row[4])

    def get_note(self, args: dict[str, Any], *, cap: int | None = None) -> Reply:
        nid, allow_large = validate.note_id(args), validate.flag(args, "allowLarge")
        rules = self._rules()
        state, rel, title, meta = self._lookup(nid)
        path, st = resolve_note_file(rules, rel)
        if st.st_size > NOTE_LIMIT and not allow_large:
            raise VaultError("QUERY_TOO_LARGE", limit=NOTE_LIMIT, size=st.st_size)
        if cap is not None and 2 * st.st_size > cap:  # the text goes out twice (structured + text block)
            raise VaultError("QUERY_TOO_LARGE", limit=cap, size=st.st_size)
        with open(path, "rb") as fh:
            raw = fh.read(st.st_size)
        content = raw.decode("utf-8", "replace")
        if title is None or meta is None:
            parsed = parse_note(content, rel.rsplit("/", 1)[-1].rsplit(".", 1)[0], chunked=False)
            title, meta = parsed.title, parsed.metadata
        data = {"id": nid, "path": rel, "title": title, "metadata": meta, "content": content,
                "contentType": NOTE_TYPE, "size": len(raw), "freshness": state.freshness}
        return Reply(data, self.freshness_warnings(state))

    def get_chunk(self, args: dict[str, Any]) -> Reply:
        nid, idx = validate.note_id(args), validate.chunk_index(args)
        rules = self._rules()
        state, rel, title, meta = self._lookup(nid)
        root_real = os.path.realpath(rules.root)
        real = os.path.realpath(os.path.join(root_real, rel))
        if not (real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)):
            raise VaultError("PATH_OUTSIDE_VAULT")
        if title is None or meta is None:  # incompatible index: chunk the current file
            path, _st = resolve_note_file(rules, rel)
            text = path.read_bytes().decode("utf-8", "replace")
            parsed = parse_note(text, rel.rsplit("/", 1)[-1].rsplit(".", 1)[0])
            if idx >= len(parsed.chunks):
                raise VaultError("CHUNK_NOT_FOUND")
            chunk = parsed.chunks[idx]
            title, meta, heading, heading_path, content = (parsed.title, parsed.metadata, chunk.heading,
                                                           chunk.heading_path, chunk.content)
        else:
            conn, _vec = self.reader.conn()
            row = conn.execute("SELECT heading, heading_path, content FROM entries WHERE note_id = ? AND idx = ?",
                               (nid, idx if idx < 2**62 else -1)).fetchone()
            if row is None:
                raise VaultError("CHUNK_NOT_FOUND")
            heading, heading_path, content = row[0], json.loads(row[1]), row[2]
        data = {"id": f"{nid}:{idx}", "noteId": nid, "chunkIndex": idx, "path": rel, "title": title,
                "heading": heading, "headingPath": heading_path, "metadata": meta, "content": content,
                "contentType": NOTE_TYPE, "size": len(content.encode("utf-8")), "freshness": state.freshness}
        return Reply(data, self.freshness_warnings(state))

    def attachment(self, args: dict[str, Any]) -> tuple[dict[str, Any], Path, os.stat_result, bool, bool]:
        """(metadata, real path, stat, download, allowLarge) after every check but the size."""
        raw = args.get("vaultRelativePath")
        download, allow_large = validate.flag(args, "download"), validate.flag(args, "allowLarge")
        from .safety import check_relative

        check_relative(raw)
        rel, real, st = resolve_attachment(self._rules(), raw)
        name = rel.rsplit("/", 1)[-1]
        kind = mimetypes.guess_type(name, strict=False)[0] or "application/octet-stream"
        meta = {"path": rel, "fileName": name, "contentType": kind, "size": st.st_size,
                "downloadAvailable": st.st_size <= ATTACHMENT_LIMIT}
        return meta, real, st, download, allow_large

    @staticmethod
    def check_download(st: os.stat_result, allow_large: bool, cap: int | None) -> None:
        """Decided from the file size alone, before any byte is read."""
        if st.st_size > ATTACHMENT_LIMIT and not allow_large:
            raise VaultError("QUERY_TOO_LARGE", limit=ATTACHMENT_LIMIT, size=st.st_size)
        if cap is not None and 2 * (4 * math.ceil(st.st_size / 3)) + 64 * 1024 > cap:
            raise VaultError("QUERY_TOO_LARGE", limit=cap, size=st.st_size)

    def get_attachment(self, args: dict[str, Any], *, cap: int | None = MCP_PAYLOAD_CAP) -> Reply:
        """The MCP form: metadata, or metadata plus base64 content when download is set."""
        meta, real, st, download, allow_large = self.attachment(args)
        if not download:
            return Reply(meta)
        self.check_download(st, allow_large, cap)
        with open(real, "rb") as fh:
            raw = fh.read(st.st_size)
        return Reply({**meta, "size": len(raw), "content": base64.b64encode(raw).decode("ascii"), "encoding": "base64"})

    def health(self) -> Reply:
        state = self.state()
        degraded = (not state.exists or state.freshness in ("stale", "incompatible", "unknown")
                    or state.embedding_state in ("unavailable", "incompatible"))
        data = {"status": "degraded" if degraded else "ok", "version": VERSION,
                "index": {"available": state.exists and state.freshness != "incompatible",
                          "stale": state.freshness == "stale",
                          "embeddingAvailable": state.model is not None}}
        return Reply(data)

    def status(self, *, port: int) -> Reply:
        state = self.state()
        watch = self.settings.watch_enabled
        data = {
            "server": {"running": True, "host": self.settings.host, "port": port,
                       "apiKeyRequired": bool(self.settings.api_key) or not self.settings.loopback},
            "index": {"freshness": state.freshness, "lastSuccessfulUpdateAt": state.last_update,
                      "pendingChangeCount": state.changes,
                      "reindexRequired": bool(state.reasons), "reindexReasons": list(state.reasons),
                      "embeddingState": state.embedding_state},
            "watch": {"enabled": watch, "running": False, "lastEventAt": None, "pending": False, "lastError": None},
            "sync": {"enabled": False, "configured": False, "running": False, "pending": False,
                     "lastSuccessfulSyncAt": None, "consecutiveFailures": 0, "lastError": None},
        }
        warnings = self.freshness_warnings(state) + ([warning("WATCHER_UNAVAILABLE")] if watch else [])
        return Reply(data, warnings)

    def index(self, *, full: bool, require_embeddings: bool | None = None) -> Reply:
        """One writer run (the `index`/`reindex` commands, POST /index, /reindex, bootstrap)."""
        rules = self._rules()
        require = self.settings["embedding.require"] if require_embeddings is None else require_embeddings
        model, failed = None, False
        if self.settings["embedding.enabled"]:
            model = self.model()
            if model is None or not db.vec_available():
                if require:
                    raise VaultError("EMBEDDING_UNAVAILABLE")
                model, failed = None, True
        summary = build(self.settings, rules, self.index_path, model, full=full, require_embeddings=require,
                        embedding_failed=failed)
        return Reply(summary.data(), summary.warnings)


def snippet(content: str, terms: list[str]) -> str:
    """At most 240 characters and at most half the chunk, so a snippet never is the chunk;
    empty when the chunk is too short to excerpt (retrieval.md#snippets)."""
    text = " ".join(content.split())
    size = min(SNIPPET_MAX, len(text) // 2)
    if size < 20:
        return ""
    folded = text.casefold()
    positions = [folded.find(term) for term in terms if term and folded.find(term) >= 0]
    start = max(0, min(positions) - size // 4) if positions else 0
    start = min(start, len(text) - size)
    if start > 0 and text[start - 1] != " ":
        space = text.find(" ", start, start + 20)
        start = space + 1 if space >= 0 else start
    return text[start:start + size].strip()
