"""Reference stdio MCP server for the retrieval-tools profile (seed 003): read-only search,
open_file, get_snippet and list_dir over two local roots, `docs` and `code`."""
