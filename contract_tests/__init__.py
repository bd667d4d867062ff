"""retrieval-contract: a conformance suite for read-only retrieval MCP servers.

Run it with `pytest --pyargs contract_tests --profile PROFILE [--server-cmd CMD]` or the
`retrieval-contract` console script; both drive the same pytest plugin (contract_tests.plugin).
"""

__version__ = "0.1.0"
