"""What the seed fixes word for word: the eleven tools (names, descriptions, input schemas,
metadata), describe_world and list_constraints, and the notes and disclaimers responses carry.
"""

from __future__ import annotations

from typing import Any

_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}, "required": []}

# name -> (description, input schema), in the seed's order.
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "describe_world": (
        "Returns the purpose, boundaries, prohibitions, and requirements of the Open Notebook world", _NO_ARGS),
    "list_collections": ("Returns available notebook collections with metadata, no content", _NO_ARGS),
    "enter_collection": (
        "Establishes active collection context, restricting all subsequent operations",
        {"type": "object",
         "properties": {"collection_id": {"type": "string", "description": "Collection identifier from list_collections"}},
         "required": ["collection_id"]}),
    "list_artifact_sets": ("Returns artifact sets derived from the active collection", _NO_ARGS),
    "semantic_search": (
        "Returns ranked reference identifiers for semantic query within active collection",
        {"type": "object",
         "properties": {"query": {"type": "string", "description": "Natural language query"},
                        "k": {"type": "number", "description": "Maximum results (default 10, max 50)", "default": 10}},
         "required": ["query"]}),
    "fetch_passage": (
        "Retrieves exact quoted passage with bounded context from source",
        {"type": "object",
         "properties": {"source_id": {"type": "string", "description": "Reference identifier from semantic_search"}},
         "required": ["source_id"]}),
    "retrieve_artifact": (
        "Retrieves full artifact contents with provenance and non-authoritative disclaimer",
        {"type": "object",
         "properties": {"artifact_id": {"type": "string", "description": "Artifact identifier from list_artifact_sets"}},
         "required": ["artifact_id"]}),
    "begin_result_stream": (
        "Initiates a pull-based result stream for progressive disclosure",
        {"type": "object",
         "properties": {"query": {"type": "string", "description": "Search query for streaming results"}},
         "required": ["query"]}),
    "next_stream_chunk": (
        "Retrieves next chunk from active result stream",
        {"type": "object",
         "properties": {"stream_token": {"type": "string", "description": "Stream token from begin_result_stream"}},
         "required": ["stream_token"]}),
    "explain_provenance": (
        "Returns origin, transformation steps, tools, and confidence notes for a source or artifact",
        {"type": "object",
         "properties": {"id": {"type": "string", "description": "Source ID or artifact ID"},
                        "id_type": {"type": "string", "enum": ["source", "artifact"], "description": "Type of identifier"}},
         "required": ["id", "id_type"]}),
    "list_constraints": (
        "Returns mutation prohibitions, scope limits, citation requirements, and refusal conditions", _NO_ARGS),
}
TOOL_NAMES = tuple(TOOLS)
# The seed's per-tool `metadata`; MCP has no such field, so it travels in the tool's `_meta`.
TOOL_METADATA = {"reversible": True, "authority_level": "none", "mutation": False}
# The seed's per-result `metadata`, carried in each CallToolResult's `_meta`.
RESULT_METADATA = {"provenance_available": True, "constraints_checkable": True}
# enter_collection's available_operations: the tools that need an active collection.
# explain_provenance needs one too (it reads notebook metadata), though the seed lists it not.
AVAILABLE_OPERATIONS = ["list_artifact_sets", "semantic_search", "fetch_passage", "retrieve_artifact",
                        "begin_result_stream"]
COLLECTION_SCOPED = frozenset(AVAILABLE_OPERATIONS) | {"explain_provenance"}

SCOPE_NOTE = "All subsequent operations restricted to this collection until exit or new enter_collection call"
PRELOAD_NOTE = "No data preloaded. Invoke retrieval tools explicitly."
SEARCH_NOTE = "Full text not included. Use fetch_passage to retrieve content."
PASSAGE_DISCLAIMER = ("This is a quoted passage from human-authored material. "
                      "It is provided as-is with no interpretation.")
ARTIFACT_DISCLAIMER = ("This artifact is derived material. It is offered for inspection only and carries no "
                       "authority. Verify against source notebooks for authoritative content.")
STREAM_NOTE = "No content returned. Use next_stream_chunk to retrieve incrementally."
INTERPRETATION_NOTE = "This provenance chain is descriptive only. No new interpretation has been added."
STEP_ORDER = ["reference_identifiers", "passages", "dense_sections", "artifact_links"]
CHUNK_STRATEGY = "progressive_depth"
PREVIEW_MAX_CHARS = 100
DEFAULT_K = 10
MAX_K = 50
MAX_PASSAGE_CONTEXT = 500
DEFAULT_STREAM_TIMEOUT_S = 300
DEFAULT_STREAM_CHUNK_SIZE = 10

MUTATION_PROHIBITIONS = [
    "writing notebooks", "editing notebooks", "deleting notebooks", "modifying vectors", "modifying embeddings",
    "generating new knowledge", "applying reasoning outcomes", "persisting memory", "triggering workflows",
    "scheduling tasks", "calling external tools", "expanding affordances dynamically",
]
REFUSAL_CONDITIONS = [
    "requests for mutation", "requests for reasoning", "requests for decision-making",
    "requests for external tool invocation", "requests for memory persistence",
    "ambiguous requests (when scope reduction insufficient)",
]


def describe_world() -> dict[str, Any]:
    """The seed's describe_world body. `prohibitions` is added: the affordance declaration
    says describe_world returns explicit prohibitions, and the seed's shape lists none."""
    return {
        "world": {
            "name": "Open Notebook",
            "type": "read-only knowledge jurisdiction",
            "authority_level": "none",
            "mutation": "forbidden",
            "persistence": "external only (artifacts, vectors)",
        },
        "purpose": [
            "preserve human-authored cognition",
            "enable safe inspection and retrieval",
            "prevent ungoverned synthesis",
        ],
        "boundaries": {
            "scope": "previously authored notebooks and derived artifacts only",
            "reasoning": "forbidden",
            "learning": "forbidden",
            "decisions": "forbidden",
        },
        "available_affordances": list(TOOL_NAMES),
        "prohibitions": list(MUTATION_PROHIBITIONS),
        "citation_requirements": {
            "passages_must_quote": True,
            "artifacts_must_disclaim": True,
            "synthesis_must_label": True,
        },
        "provenance_available": True,
    }


def list_constraints(limits: dict[str, Any]) -> dict[str, Any]:
    """The seed's list_constraints body, plus `available_affordances` (so it too enumerates
    exactly the tools that exist) and `limits` (the configured bounds, so it stays truthful)."""
    return {
        "mutation_prohibitions": list(MUTATION_PROHIBITIONS),
        "scope_limits": {
            "world_type": "read-only knowledge jurisdiction",
            "authority_level": "none",
            "reasoning": "forbidden",
            "learning": "forbidden",
            "decisions": "forbidden",
        },
        "citation_requirements": {
            "passages": "must quote verbatim",
            "artifacts": "must include non-authoritative disclaimer",
            "synthesis": "must label as synthesized with metadata",
        },
        "refusal_conditions": list(REFUSAL_CONDITIONS),
        "interpretation_rule": {
            "when_ambiguous": ["reduce scope", "return less data", "prefer references over content",
                               "prefer artifacts over synthesis"],
            "when_in_doubt": ["do not answer", "explain why"],
        },
        "available_affordances": list(TOOL_NAMES),
        "limits": dict(limits),
    }
