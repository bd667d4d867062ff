"""retrieval-contract: a conformance suite for read-only retrieval MCP servers.

Run it with `pytest --pyargs contract_tests --profile PROFILE [--server-cmd CMD]` or the
`retrieval-contract` console script; both drive the same pytest plugin (contract_tests.plugin).
The package's map: docs/contracts.md.
"""

from contract_tests import compat as _compat

__version__ = "0.1.0"

_compat.install()
