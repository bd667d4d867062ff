"""The eleven tools over a loaded Library, one session at a time.

`Tools.call` checks in this order: the tool exists (else a refusal), the arguments are an
object with only declared names (else a refusal), a collection is active when the tool needs
one (else `no_collection_context`), the arguments match the seed's input schema (else
`ambiguous_request`); then it runs the tool. Every failure is a ToolError from errors.py.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

from . import errors, refusals, streams, world
from .config import Config
from .embedding import tokens
from .library import (ARTIFACT_CHECKSUM_COVERS, PASSAGE_CHECKSUM_COVERS, SEGMENTATION_TOOL, Library, artifact_id,
                      is_whole_number, preview, source_id)
from .session import Session, Stream

log = logging.getLogger("rc.open_notebook")
MAX_QUERY_CHARS = 2000
_VALIDATORS = {name: Draft202012Validator(schema) for name, (_d, schema) in world.TOOLS.items()}


@dataclass
class Outcome:
    body: dict[str, Any]
    error_type: str | None = None

    @property
    def is_error(self) -> bool:
        return self.error_type is not None


class Tools:
    def __init__(self, library: Library, config: Config) -> None:
        self.library = library
        self.config = config
        self._run = {name: getattr(self, f"_{name}") for name in world.TOOL_NAMES}

    def call(self, session: Session, name: Any, arguments: Any) -> Outcome:
        try:
            return Outcome(self._checked(session, name, {} if arguments is None else arguments))
        except errors.ToolError as error:
            return Outcome(error.body(), error.type)
        except Exception as exc:  # noqa: BLE001 - a bug answers in the taxonomy, never with a traceback
            # The class name only: an exception's message could quote notebook text.
            log.error("internal error tool=%s class=%s", name if name in world.TOOLS else "unknown",
                      type(exc).__name__)
            error = errors.ToolError("upstream_failure", "Internal error.", context={"reason": "internal"})
            return Outcome(error.body(), error.type)

    def _checked(self, session: Session, name: Any, arguments: Any) -> dict[str, Any]:
        if name not in world.TOOLS:
            raise refusals.unknown_tool(name, list(world.TOOL_NAMES))
        if not isinstance(arguments, dict):
            raise errors.ambiguous("arguments_not_an_object")
        declared = world.TOOLS[name][1]["properties"]
        extra = {k: v for k, v in arguments.items() if k not in declared}
        if extra:
            raise refusals.undeclared_arguments(extra)
        if name in world.COLLECTION_SCOPED and session.active is None:
            raise errors.no_collection_context()
        problem = min(_VALIDATORS[name].iter_errors(arguments), default=None,
                      key=lambda e: (len(e.path), [str(p) for p in e.path], e.validator))
        if problem is not None:
            missing = problem.validator == "required"
            argument = next((p for p in declared if f"'{p}'" in problem.message), None) if missing else \
                (problem.path[0] if problem.path else None)
            raise errors.ambiguous("missing_argument" if missing else "invalid_argument", argument)
        return self._run[name](session, **arguments)

    # -- world -----------------------------------------------------------------------------------
    def _describe_world(self, session: Session) -> dict[str, Any]:
        return world.describe_world()

    def _list_constraints(self, session: Session) -> dict[str, Any]:
        return world.list_constraints(self.config.limits())

    # -- collections -------------------------------------------------------------------------------
    def _list_collections(self, session: Session) -> dict[str, Any]:
        listed = [{
            "collection_id": cid,
            "title": c.meta["title"],
            "date_range": dict(c.meta["date_range"]),
            "domain_tags": list(c.meta["domain_tags"]),
            "artifact_count": c.artifact_count(),
            "notebook_count": len(c.notebooks),
            "last_modified": c.meta["last_modified"],
        } for cid, c in self.library.collections.items()]
        return {"collections": listed,
                "metadata": {"total_collections": len(listed), "data_as_of": self.library.built_at,
                             "next_refresh": None}}

    def _enter_collection(self, session: Session, collection_id: str) -> dict[str, Any]:
        if not session.has_session:
            raise errors.ToolError(
                "operation_forbidden",
                errors.FORBIDDEN_TEMPLATE.format(operation="Holding a collection context without a session"),
                recovery="Use a session (stdio, or Streamable HTTP with Mcp-Session-Id); a context lives only as "
                         "long as its session", context={"refusal_condition": "requests for memory persistence"})
        collection = self.library.collections.get(collection_id)
        if collection is None:
            raise errors.collection_not_found(session.active)
        session.enter(collection_id)
        return {
            "collection_id": collection_id,
            "title": collection.meta["title"],
            "context_established": True,
            "scope_note": world.SCOPE_NOTE,
            "available_operations": list(world.AVAILABLE_OPERATIONS),
            "preload_note": world.PRELOAD_NOTE,
        }

    def _list_artifact_sets(self, session: Session) -> dict[str, Any]:
        cid = session.active
        sets = [{
            "artifact_set_id": set_id,
            "artifact_type": s.manifest["artifact_type"],
            "created_at": s.manifest["created_at"],
            "status": s.manifest["status"],
            "source_notebooks": list(s.manifest["source_notebooks"]),
            "artifact_count": len(s.artifacts),
            "artifact_ids": [artifact_id(cid, a) for a in s.artifacts.values()],
        } for set_id, s in self.library.collections[cid].artifact_sets.items()]
        return {"collection_id": cid, "artifact_sets": sets}

    # -- retrieval ---------------------------------------------------------------------------------
    def _query(self, query: str) -> str:
        if not query.strip():
            raise errors.ambiguous("empty_query", "query")
        if len(query) > MAX_QUERY_CHARS:
            raise errors.ambiguous("query_too_long", "query")
        if not tokens(query):
            raise errors.ambiguous("no_searchable_terms", "query")
        return query

    def _hits(self, cid: str, query: str, k: int):
        """The best k (passage, score) pairs of the collection, and the number of matches."""
        passages = self.library.passages[cid]
        hits, total = self.library.indexes[cid].search(query, k)
        return [(passages[h.index], h.score) for h in hits], total

    def _pointer(self, cid: str, passage) -> dict[str, Any]:
        notebook = self.library.collections[cid].notebooks[passage.notebook_id]
        return {"notebook_id": passage.notebook_id, "page": passage.page,
                "timestamp": notebook.page(passage.page).timestamp}

    def _semantic_search(self, session: Session, query: str, k: Any = None) -> dict[str, Any]:
        started = time.perf_counter()
        self._query(query)
        if k is None:
            k = self.config.default_k
        if not is_whole_number(k) or k < 1:
            raise errors.ambiguous("k_must_be_a_positive_whole_number", "k")
        k_applied = min(int(k), self.config.max_search_results)  # over the cap: clamped
        cid = session.active
        hits, total = self._hits(cid, query, k_applied)
        results = [{
            "reference_id": source_id(cid, passage),
            "relevance_score": score,
            "source_pointer": self._pointer(cid, passage),
            "preview_snippet": preview(passage.text, world.PREVIEW_MAX_CHARS),
        } for passage, score in hits]
        return {
            "collection_id": cid,
            "query": query,
            "results": results,
            "metadata": {"total_matches": total, "returned": len(results), "k_applied": k_applied,
                         "search_time_ms": round((time.perf_counter() - started) * 1000, 3)},
            "note": world.SEARCH_NOTE,
        }

    def _fetch_passage(self, session: Session, source_id: str) -> dict[str, Any]:
        notebook, passage = self.library.source(session.active, source_id)
        view = self.library.read_passage(notebook, passage, self.config.max_passage_context)
        return {
            "source_id": source_id,
            "passage": {"exact_text": view.text, "context_before": view.before, "context_after": view.after},
            "provenance": {
                "notebook_id": notebook.notebook_id,
                "notebook_title": notebook.title,
                "page": passage.page,
                "timestamp": notebook.page(passage.page).timestamp,
                "export_method": notebook.front["export_method"],
                "last_verified": int(time.time()),
            },
            "integrity": {"checksum": passage.sha256, "verified": view.verified, "algorithm": "sha256",
                          "covers": PASSAGE_CHECKSUM_COVERS},
            "disclaimer": world.PASSAGE_DISCLAIMER,
        }

    def _retrieve_artifact(self, session: Session, artifact_id: str) -> dict[str, Any]:
        artifact = self.library.artifact(session.active, artifact_id)
        contents = self.library.read_artifact(artifact)
        manifest = self.library.collections[session.active].artifact_sets[artifact.set_id].manifest
        return {
            "artifact_id": artifact_id,
            "artifact_set_id": artifact.set_id,
            "artifact_type": manifest["artifact_type"],
            "status": manifest["status"],
            "contents": contents,
            "provenance": {
                "source_notebooks": list(artifact.provenance["source_notebooks"]),
                "transformation_steps": [dict(step) for step in artifact.provenance["transformation_steps"]],
                "created_at": artifact.provenance["created_at"],
                "created_by": artifact.provenance["created_by"],
            },
            "synthesis_metadata": dict(artifact.synthesis_metadata),
            "disclaimer": world.ARTIFACT_DISCLAIMER,
            "immutable": True,
            "integrity": {"checksum": artifact.sha256, "verified": True, "algorithm": "sha256",
                          "covers": ARTIFACT_CHECKSUM_COVERS},
        }

    # -- provenance --------------------------------------------------------------------------------
    def _origin(self, cid: str, notebook_id: str) -> dict[str, Any]:
        notebook = self.library.collections[cid].notebooks[notebook_id]
        return {"notebook_id": notebook_id, "title": notebook.title, "author": notebook.front["author"],
                "created_at": notebook.front["created_at"]}

    def _explain_provenance(self, session: Session, id: str, id_type: str) -> dict[str, Any]:  # noqa: A002
        cid = session.active
        if id_type == "source":
            notebook, passage = self.library.source(cid, id)
            export = notebook.front["export_method"]
            steps = [
                {"step_order": 1, "tool": export, "parameters": {}, "timestamp": notebook.front["exported_at"]},
                {"step_order": 2, "tool": SEGMENTATION_TOOL,
                 "parameters": {"page": passage.page, "ordinal": passage.ordinal, "unit": "top-level Markdown block"},
                 "timestamp": self.library.built_at},
            ]
            provenance = {"origin_notebook": self._origin(cid, notebook.notebook_id), "transformation_steps": steps,
                          "tools_involved": [export, SEGMENTATION_TOOL],
                          "confidence_notes": ["Verbatim text of a human-authored notebook: segmentation selects "
                                               "whole Markdown blocks and changes no character."]}
        else:
            artifact = self.library.artifact(cid, id)
            chain = artifact.provenance
            steps = [{"step_order": s["step_order"], "tool": s["tool"], "parameters": dict(s["parameters"]),
                      "timestamp": s["timestamp"]} for s in chain["transformation_steps"]]
            provenance = {"origin_notebook": self._origin(cid, chain["source_notebooks"][0]),
                          "source_notebooks": list(chain["source_notebooks"]),
                          "transformation_steps": steps,
                          "tools_involved": list(dict.fromkeys(s["tool"] for s in steps)),
                          "confidence_notes": [artifact.synthesis_metadata["confidence_note"]]}
        return {"id": id, "id_type": id_type, "provenance": provenance,
                "interpretation_note": world.INTERPRETATION_NOTE}

    # -- streams ------------------------------------------------------------------------------------
    def _begin_result_stream(self, session: Session, query: str) -> dict[str, Any]:
        self._query(query)
        cid = session.active
        hits, _total = self._hits(cid, query, self.config.default_k)
        context = self.config.max_passage_context
        references, passages, sections, notebooks = [], [], [], []
        for passage, score in hits:
            sid = source_id(cid, passage)
            pointer = self._pointer(cid, passage)
            references.append({"reference_id": sid, "relevance_score": score, "source_pointer": pointer})
            notebook = self.library.collections[cid].notebooks[passage.notebook_id]
            try:
                view = self.library.read_passage(notebook, passage, context)
            except errors.ToolError:
                continue  # a passage that cannot be read now is left out, never guessed
            passages.append({"source_id": sid, "exact_text": view.text, "source_pointer": pointer,
                             "verified": view.verified})
            sections.append({"source_id": sid, "context_before": view.before, "exact_text": view.text,
                             "context_after": view.after, "verified": view.verified})
            if passage.notebook_id not in notebooks:
                notebooks.append(passage.notebook_id)
        links = [{"artifact_id": artifact_id(cid, a), "artifact_set_id": set_id,
                  "artifact_type": s.manifest["artifact_type"], "status": s.manifest["status"]}
                 for set_id, s in self.library.collections[cid].artifact_sets.items()
                 for a in s.artifacts.values() if set(a.provenance["source_notebooks"]) & set(notebooks)]
        chunks = streams.plan({"reference_identifiers": references, "passages": passages,
                               "dense_sections": sections, "artifact_links": links},
                              self.config.stream_chunk_size, context)
        now = int(time.time())
        stream = Stream(secrets.token_urlsafe(32), cid, query, now, time.monotonic() + self.config.stream_timeout_s,
                        chunks, len(references))
        session.add_stream(stream)
        return {
            "stream_token": stream.token,
            "query": query,
            "disclosure_policy": {"step_order": list(world.STEP_ORDER), "chunk_strategy": world.CHUNK_STRATEGY,
                                  "cancelable": True, "timeout_s": self.config.stream_timeout_s},
            "metadata": {"estimated_chunks": len(chunks), "created_at": now},
            "note": world.STREAM_NOTE,
        }

    def _next_stream_chunk(self, session: Session, stream_token: str) -> dict[str, Any]:
        stream = session.streams.get(stream_token)
        if stream is None:
            reason = session.ended.get(stream_token)
            if reason == "expired":
                raise errors.stream_expired(self.config.stream_timeout_s)
            raise errors.stream_invalid("closed" if reason else "unknown")
        if session.expired(stream):
            session.end(stream_token, "expired")
            raise errors.stream_expired(self.config.stream_timeout_s)
        body, closed = streams.next_response(stream)
        if closed:
            session.end(stream_token, "closed")
        return body
