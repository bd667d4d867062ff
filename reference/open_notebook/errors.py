"""The seed's error taxonomy: `{"error": {"type", "message", "recovery"?, "context"?}}`.

Messages are fixed strings; `context` carries only values the server chose (argument names
from the input schemas, reasons, limits, identifiers it validated), never request text or
notebook content.
"""

from __future__ import annotations

from typing import Any

# The seed's ErrorType union, plus `source_outside_collection`, which the seed's
# fetch_passage error names but its union omits.
ERROR_TYPES = (
    "no_collection_context", "collection_not_found", "source_not_found", "artifact_not_found",
    "stream_token_invalid", "stream_token_expired", "operation_forbidden", "ambiguous_request",
    "upstream_failure", "source_outside_collection",
)
# The seed's literal texts (SessionContext.requireCollection and assertReadOnly).
NO_COLLECTION_MESSAGE = "No active collection. Invoke enter_collection first."
NO_COLLECTION_RECOVERY = "Call list_collections, then enter_collection"
FORBIDDEN_TEMPLATE = "{operation} is forbidden in Open Notebook world"
FORBIDDEN_RECOVERY = "This world is read-only. Use external tools for mutation."
NEW_STREAM = "Call begin_result_stream to start a new stream"


class ToolError(Exception):
    def __init__(self, type_: str, message: str, *, recovery: str | None = None,
                 context: dict[str, Any] | None = None, source_id: str | None = None) -> None:
        if type_ not in ERROR_TYPES:
            raise ValueError(f"error type outside the seed's taxonomy: {type_}")
        super().__init__(type_)
        self.type = type_
        self.message = message
        self.recovery = recovery
        self.context = context
        self.source_id = source_id

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.recovery:
            error["recovery"] = self.recovery
        if self.context:
            error["context"] = self.context
        if self.source_id is not None:  # fetch_passage's error shape names the source
            error["source_id"] = self.source_id
        return {"error": error}


def no_collection_context() -> ToolError:
    return ToolError("no_collection_context", NO_COLLECTION_MESSAGE, recovery=NO_COLLECTION_RECOVERY)


def collection_not_found(active: str | None) -> ToolError:
    return ToolError("collection_not_found", "No collection has this identifier. The active context is unchanged.",
                     recovery="Call list_collections for the available collection identifiers",
                     context={"active_collection": active})


def source_not_found(source_id: str | None, reason: str = "unknown") -> ToolError:
    return ToolError("source_not_found", "No source has this identifier.",
                     recovery="Use a reference_id returned by semantic_search in the active collection",
                     context={"reason": reason}, source_id=source_id)


def source_outside_collection(source_id: str) -> ToolError:
    return ToolError("source_outside_collection", "This source belongs to a collection other than the active one.",
                     recovery="Call enter_collection for that collection first; contexts never combine",
                     source_id=source_id)


def artifact_not_found() -> ToolError:
    """Also for an artifact of another collection: the taxonomy has no outside type for artifacts."""
    return ToolError("artifact_not_found", "No artifact in the active collection has this identifier.",
                     recovery="Call list_artifact_sets for the artifact identifiers of the active collection")


def artifact_tampered() -> ToolError:
    return ToolError("upstream_failure",
                     "The artifact failed its integrity check: its stored bytes do not match the checksum in its "
                     "artifact set, so it is not served.",
                     recovery="Restore the artifact file from its source; artifacts are immutable",
                     context={"verified": False, "reason": "checksum_mismatch"})


def stream_invalid(reason: str) -> ToolError:
    """`reason` is 'unknown' (never issued to this session) or 'closed' (completed or replaced)."""
    return ToolError("stream_token_invalid", "This stream token is not valid in this session.",
                     recovery=NEW_STREAM, context={"reason": reason})


def stream_expired(timeout_s: float) -> ToolError:
    return ToolError("stream_token_expired", "This stream token has expired.", recovery=NEW_STREAM,
                     context={"timeout_s": timeout_s})


def forbidden(operation: str, condition: str) -> ToolError:
    """A refusal; `operation` is a fixed phrase, `condition` one of list_constraints' refusal_conditions."""
    return ToolError("operation_forbidden", FORBIDDEN_TEMPLATE.format(operation=operation),
                     recovery=FORBIDDEN_RECOVERY, context={"refusal_condition": condition})


def ambiguous(reason: str, argument: str | None = None) -> ToolError:
    context: dict[str, Any] = {"reason": reason}
    if argument is not None:
        context["argument"] = argument
    return ToolError("ambiguous_request", "The request cannot be read unambiguously, so it is not answered.",
                     recovery="Send the arguments exactly as the tool's input schema declares them",
                     context=context)
