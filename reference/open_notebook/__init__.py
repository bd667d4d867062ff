"""Reference MCP server for the open-notebook profile (seed 004): eleven read-only tools over
notebook collections in the profile's layout, with per-session collection context, pull
streams, provenance and integrity checks; and `fixture`, the generator of such collections."""
