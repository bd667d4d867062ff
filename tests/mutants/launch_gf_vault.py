"""Start the generic-files vault example (reference/generic_files/vault.py) with one deliberate
defect: `python launch_gf_vault.py MUTANT --vault ROOT`.

Each mutant patches the example from the outside; the suite runs it through the mapping
examples/generic-files/vault.yaml and must report the ids the mutant lists.
"""

from __future__ import annotations

import os
import sys

import mcp_types as types

try:
    from tests.mutants._dispatch import mutant, run, variant
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run, variant  # type: ignore[no-redef]

from reference.generic_files import common, vault

MAPPING = ("--mapping", "examples/generic-files/vault.yaml")


@mutant("GF-LEAK-001", profile="generic-files", options=MAPPING)
def gf_vault_leak():
    """Names a note by its absolute path in messages ("notes/x.md: no such file" becomes
    "/…/vault/notes/x.md: …"), so a denial discloses where the vault is."""
    def absolute(root, real):
        return real
    common.shown = vault.shown = absolute


@mutant("GF-WRITE-001", profile="generic-files", options=MAPPING)
def gf_vault_write():
    """Remembers every path it opens in `.vault-recent` inside the vault: a read writes into the root."""
    original = vault.resolve_relative

    def remembering(root, raw):
        real = original(root, raw)
        with open(os.path.join(root, ".vault-recent"), "a", encoding="utf-8") as handle:
            handle.write(vault.shown(root, real) + "\n")
        return real
    vault.resolve_relative = remembering


@mutant("GF-DENY-001", profile="generic-files", options=MAPPING)
def gf_vault_silent_denial():
    """Answers a refused or missing path with a plain-text "not found" result: no error object,
    no isError, so a client cannot tell it from a note."""
    vault.refuse = lambda exc: common.text("not found")


@variant(profile="generic-files", options=MAPPING)
def gf_vault_is_error_denials():
    """Not a defect: denies with an isError result whose text is a plain message, instead of a
    normal result with an `error` object (an isError result is always a denial)."""
    def refuse(exc):
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"Error: {exc.message}")],
                                    is_error=True)
    vault.refuse = refuse


if __name__ == "__main__":
    sys.exit(run("launch_gf_vault.py", vault.main))
