"""Worked examples for the generic-files profile: three small read-only file servers, each in
the shape of a kind of server found in the wild, each described by a mapping in
examples/generic-files/.

- fs.py: a filesystem server (absolute or root-relative paths; denials are isError results).
- vault.py: a note vault (vault-relative paths; denials are normal results with an `error` object).
- docs.py: a docs server with full-text search (relative paths; denials are JSON-RPC errors).

common.py holds what they share: the containment check, the walk, the call loop and the flags.
"""
