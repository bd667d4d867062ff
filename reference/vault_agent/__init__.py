"""Reference vault-agent (seed 002, Phase 3 MCP bridge, on the Phase 1/2 documents).

One vault per process: an embedded SQLite index (FTS5/BM25, sqlite-vec for a local embedding
model), an HTTP API (`serve`), Streamable HTTP MCP on `serve` when mcp.enabled, and stdio MCP
(`mcp`). Both transports call the same core (core.py) through one enforcement layer
(safety.py), so each tool's payload is the HTTP `data` plus the envelope's `warnings`.

Parameter names are camelCase (noteId, chunkIndex, allowLarge, vaultRelativePath): the seed's
prose asks for snake_case, but its own tool table, mcp-tools.md's schemas and the HTTP API
(`allowLarge=true`, `/notes/{noteId}`) all use camelCase, and payload parity with the HTTP API
is a stated requirement; snake_case names are not accepted as aliases (unknown arguments are
ignored, so a snake_case-only call fails as missing its required argument).

See docs/reference-vault-agent.md for commands, configuration, the embedding model format,
the freshness debug hook and every choice made where the documents are silent.
"""
