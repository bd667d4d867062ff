"""Reference Streamable HTTP server for the section-source-hosted profile (seed 001)."""
