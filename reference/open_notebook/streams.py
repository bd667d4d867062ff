"""Pull-based result streams: the chunks of one stream, planned at begin_result_stream, and
the response each next_stream_chunk call returns.

Each disclosure step of the seed's order yields ceil(items / chunk size) chunks, at least one
(an empty step says so). Progress names the step of the chunk as current, the steps before it
as completed and the steps after it as remaining. Every content chunk says has_more: true,
because the completion response is still to come; only that response closes the stream.
"""

from __future__ import annotations

from typing import Any

from .session import Stream
from .world import STEP_ORDER

PAYLOAD_KEYS = {"reference_identifiers": "references", "passages": "passages",
                "dense_sections": "sections", "artifact_links": "artifacts"}
NOUNS = {"reference_identifiers": "reference identifiers", "passages": "exact passages",
         "dense_sections": "passages with bounded context", "artifact_links": "artifact links"}


def _why(step: str, context_chars: int) -> str:
    number = STEP_ORDER.index(step) + 1
    reason = {
        "reference_identifiers": "references come before any content",
        "passages": "the exact text of the referenced passages, quoted verbatim",
        "dense_sections": f"the same passages with up to {context_chars} characters of context on each side",
        "artifact_links": "artifacts derived from the notebooks these passages come from, as links only",
    }[step]
    return f"Disclosure step {number} of {len(STEP_ORDER)}: {reason}"


def plan(items: dict[str, list[dict[str, Any]]], chunk_size: int, context_chars: int) -> list[dict[str, Any]]:
    """The content chunks, in the seed's step order, without token, index or continuation."""
    chunks = []
    for step in STEP_ORDER:
        values = items[step]
        groups = [values[i:i + chunk_size] for i in range(0, len(values), chunk_size)] or [[]]
        delivered = 0
        for group in groups:
            delivered += len(group)
            chunks.append({
                "chunk_type": step,
                "payload": {PAYLOAD_KEYS[step]: group},
                "what_changed": f"Added {len(group)} {NOUNS[step]} ({delivered} of {len(values)})",
                "why": _why(step, context_chars),
            })
    return chunks


def next_response(stream: Stream) -> tuple[dict[str, Any], bool]:
    """The next response of the stream and whether it closed the stream."""
    if stream.position >= len(stream.chunks):
        return {
            "stream_token": stream.token,
            "chunk_type": "stream_complete",
            "summary": {"total_chunks": len(stream.chunks), "total_references": stream.total_references,
                        "query": stream.query},
            "continuation": {"has_more": False, "stream_closed": True},
        }, True
    index = stream.position
    chunk = stream.chunks[index]
    stream.position += 1
    step = STEP_ORDER.index(chunk["chunk_type"])
    return {
        "stream_token": stream.token,
        "chunk_index": index,
        "chunk_type": chunk["chunk_type"],
        "payload": chunk["payload"],
        "stream_metadata": {
            "what_changed": chunk["what_changed"],
            "why": chunk["why"],
            "progress": {
                "current_step": chunk["chunk_type"],
                "completed_steps": STEP_ORDER[:step],
                "remaining_steps": STEP_ORDER[step + 1:],
            },
        },
        "continuation": {"has_more": True, "next_chunk_available": True,
                         "estimated_remaining": len(stream.chunks) - stream.position},
    }, False
