"""The error and warning codes the reference emits, each with its HTTP status, its JSON-RPC
code and one fixed message.

Messages are constants: an error never echoes a query, a path, an id or file content. Details
carry only keys in DETAIL_KEYS with values the server chose (field names, counts, limits,
reason codes). specs/catalogues/vault-agent-errors.yaml holds the same table as data; a unit
test keeps the two equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

VALIDATION_RPC = -32000  # mcp-tools.md "Validation Errors"
INVALID_PARAMS_RPC = -32602  # a missing required argument or a wrong JSON type


@dataclass(frozen=True)
class Code:
    http: int | None  # None: not an HTTP response (CLI start-up only)
    rpc: int | None  # None: never a tool error (index is not an MCP tool)
    message: str


ERRORS: dict[str, Code] = {
    "INVALID_QUERY": Code(400, VALIDATION_RPC, "Invalid query: send a non-empty, non-whitespace query of at most 1000 characters."),
    "INVALID_MODE": Code(400, VALIDATION_RPC, "Invalid mode: use lexical, embedding or hybrid, or omit mode."),
    "INVALID_LIMIT": Code(400, VALIDATION_RPC, "Invalid limit: use an integer from 1 to 50, or omit limit."),
    "INVALID_ID": Code(400, VALIDATION_RPC, "Invalid id: note ids are 32 lowercase hex characters, chunk ids are noteId:chunkIndex with a non-negative chunkIndex."),
    "INVALID_TYPE": Code(400, VALIDATION_RPC, "Invalid type: use note or chunk."),
    "INVALID_PATH": Code(400, VALIDATION_RPC, "Invalid path: send a vault-relative path to an attachment file."),
    "INVALID_PARAMETER": Code(400, VALIDATION_RPC, "Invalid parameter: a field has the wrong type or the request body is not a JSON object."),
    "AUTH_REQUIRED": Code(401, -32020, "Authentication required: send Authorization: Bearer <api-key>."),
    "AUTH_FAILED": Code(401, -32021, "Authentication failed: check the configured API key."),
    "PATH_OUTSIDE_VAULT": Code(403, -32003, "Path outside vault: use a vault-relative path without '..' that stays inside the vault."),
    "ATTACHMENT_NOT_ALLOWED": Code(403, -32009, "Attachment not allowed: Markdown notes, hidden, excluded and special files are not attachments; use get_note for notes."),
    "NOTE_NOT_FOUND": Code(404, -32004, "Note not found: search again for a current note id."),
    "CHUNK_NOT_FOUND": Code(404, -32005, "Chunk not found: search again for a current chunk id."),
    "ATTACHMENT_NOT_FOUND": Code(404, -32006, "Attachment not found."),
    "ROUTE_NOT_FOUND": Code(404, None, "Route not found: see the HTTP API for the routes this server serves."),
    "MCP_NOT_ENABLED": Code(404, None, "MCP over HTTP is not enabled: set mcp.enabled = true, or use vault-agent mcp (stdio)."),
    "METHOD_NOT_ALLOWED": Code(405, None, "Method not allowed on this route."),
    "INDEX_NOT_FOUND": Code(409, -32001, "No usable index found. Run vault-agent index to build one."),
    "INDEX_INCOMPATIBLE": Code(409, -32002, "The index is incompatible with the current configuration. Run vault-agent reindex."),
    "INDEX_BUSY": Code(409, None, "Another index update is running for this vault. Retry when it has finished."),
    "QUERY_TOO_LARGE": Code(413, -32008, "Too large: the content exceeds the size limit; set allowLarge=true (MCP results stay capped at 50 MiB; use the HTTP API for larger attachments)."),
    "HOST_NOT_ALLOWED": Code(421, None, "Host header not allowed for this server."),
    "ORIGIN_NOT_ALLOWED": Code(403, None, "Origin not allowed: add it to cors.allowed_origins to call this server from a browser."),
    "INTERNAL_ERROR": Code(500, -32011, "Internal error."),
    "EMBEDDING_UNAVAILABLE": Code(503, -32007, "Embeddings are unavailable: configure a local embedding model (embedding.enabled, embedding.model) or use lexical mode."),
    "VAULT_NOT_CONFIGURED": Code(503, -32013, "No vault root is configured. Set vault.root (vault-agent config set vault.root <path>, VAULT_AGENT_VAULT_ROOT or --vault-root)."),
    "TIMEOUT": Code(504, -32012, "Tool invocation timed out."),
    "CONFIG_INVALID": Code(None, None, "Invalid configuration."),
    "API_KEY_REQUIRED": Code(None, None, "A non-loopback bind requires an API key of at least 32 characters (server.api_key or VAULT_AGENT_API_KEY)."),
}

WARNINGS: dict[str, str] = {
    "EMBEDDING_UNAVAILABLE": "Embeddings are unavailable; results use lexical retrieval.",
    "INDEX_STALE": "The vault changed since the last index update; results may be out of date. Run vault-agent index.",
    "INDEX_PENDING": "An index update is about to start; results come from the last committed index.",
    "INDEX_UPDATING": "An index update is running; results come from the last committed index.",
    "INDEX_INCOMPATIBLE": "The index is incompatible; this note was resolved from the vault without it. Run vault-agent reindex.",
    "INDEX_FRESHNESS_UNKNOWN": "Index freshness cannot be determined (the vault root is not readable).",
    "WARNINGS_TRUNCATED": "More warnings were produced than one response carries.",
    "WATCHER_UNAVAILABLE": "This server has no file watcher; run vault-agent index after vault changes.",
    "FILE_NOT_UTF8": "A Markdown file is not valid UTF-8 and was skipped.",
    "FILE_BINARY": "A Markdown file looks binary and was skipped.",
    "FILE_TOO_LARGE_FOR_INDEXING": "A Markdown file is larger than 2 MiB; it is registered as a note without searchable chunks.",
    "FRONTMATTER_PARSE_FAILED": "A note's YAML frontmatter could not be parsed; its metadata is ignored.",
    "EMBEDDING_FAILED": "Embeddings could not be generated; the lexical index was built without them.",
}

# Reasons in status.index.reindexReasons (Phase 2 incremental-indexing.md#error-codes).
REINDEX_REASONS = (
    "INDEX_SCHEMA_INCOMPATIBLE", "INDEX_VAULT_IDENTITY_CHANGED", "INDEX_EXCLUDES_CHANGED",
    "INDEX_CHUNKING_CHANGED", "INDEX_EMBEDDINGS_STALE", "INDEX_EMBEDDING_DIMENSION_MISMATCH",
)

DETAIL_KEYS = frozenset({"field", "requestId", "limit", "size", "freshness", "reason", "count", "path"})
MAX_WARNINGS = 100


class VaultError(Exception):
    """A request failed with a catalogued code. `protocol` marks a missing argument or a wrong
    JSON type, which MCP answers as InvalidParams (-32602) with the same Phase 1 code."""

    def __init__(self, code: str, *, protocol: bool = False, **details: Any) -> None:
        if code not in ERRORS:
            raise ValueError(f"uncatalogued error code {code}")
        unknown = set(details) - DETAIL_KEYS
        if unknown:
            raise ValueError(f"detail keys outside the allowlist: {sorted(unknown)}")
        super().__init__(code)
        self.code = code
        self.protocol = protocol
        self.details = {k: v for k, v in details.items() if v is not None}

    @property
    def message(self) -> str:
        return ERRORS[self.code].message

    @property
    def http_status(self) -> int:
        return ERRORS[self.code].http or 500

    @property
    def rpc_code(self) -> int:
        if self.protocol:
            return INVALID_PARAMS_RPC
        return ERRORS[self.code].rpc or ERRORS["INTERNAL_ERROR"].rpc  # type: ignore[return-value]

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": dict(self.details)}}


def warning(code: str, **details: Any) -> dict[str, Any]:
    """A warning object; `path` details are vault-relative and only used for index warnings."""
    if code not in WARNINGS:
        raise ValueError(f"uncatalogued warning code {code}")
    unknown = set(details) - DETAIL_KEYS
    if unknown:
        raise ValueError(f"detail keys outside the allowlist: {sorted(unknown)}")
    return {"code": code, "message": WARNINGS[code], "details": {k: v for k, v in details.items() if v is not None}}


def cap_warnings(warnings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most MAX_WARNINGS objects; the last one says how many were dropped (server-api.md)."""
    if len(warnings) <= MAX_WARNINGS:
        return warnings
    kept = warnings[: MAX_WARNINGS - 1]
    return kept + [warning("WARNINGS_TRUNCATED", count=len(warnings) - len(kept))]
