"""Old module paths, kept for one minor version: through 0.2.x, gone in 0.3.0.

The package's layout changed after 0.1.0 (CHANGELOG.md; the map: docs/contracts.md). A user's code
that imports a module by its old path (`contract_tests.report`, `contract_tests.harness.stdio`,
`contract_tests.target.state`, ...) gets the module at its new path, the same module object,
with a DeprecationWarning that names the new path. `contract_tests.contracts`,
`contract_tests.verdicts`, `contract_tests.cli` and `contract_tests.gate` are packages now and
hand on what their modules did, so they need no entry here.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

_P = "contract_tests."

# old path -> new path, one row a moved module
MOVED: dict[str, str] = {_P + old: _P + new for old, new in (
    ("declarations", "contracts.declarations"),
    ("expectations", "contracts.expectations"),
    ("mapping", "contracts.mapping"),
    ("mapping_auto", "contracts.mapping_auto"),
    ("running", "verdicts.running"),
    ("checks", "verdicts.checks"),
    ("names", "implementation.names"),
    ("items", "suite.items"),
    ("judging", "suite.judging"),
    ("suite_fixtures", "suite.fixtures"),
    ("report", "reports.collector"),
    ("report_console", "reports.console"),
    ("report_html", "reports.html"),
    ("report_markdown", "reports.markdown"),
    ("merge", "reports.merge"),
    ("cli_info", "cli.info"),
    ("cli_list", "cli.listing"),
    ("cli_map", "cli.mapper"),
    ("declare", "cli.declare"),
    ("reference_check", "cli.reference_check"),
    *((f"target.{name}", f"implementation.{name}")
      for name in ("calls", "commands", "options", "preflight", "sessions", "shared", "state")),
    *((f"harness.{name}", f"transport.{name}")
      for name in ("fsevents", "http", "limits", "privileges", "process", "progress", "reader", "sdk",
                   "stdio", "system", "transcript")),
    *((f"harness.{name}", f"synthetic.{name}")
      for name in ("adapter", "canaries", "canister", "corpus", "files", "fixtures", "notebook_generator",
                   "notebooks", "oracles", "roots", "tokens", "upstream", "vault", "vault_agent")),
)}
# old packages that are gone: importing one gives an empty package whose modules are the rows above
GONE = {_P + "harness": "contract_tests.transport and contract_tests.synthetic",
        _P + "target": "contract_tests.implementation"}


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new}; the old path works until retrieval-contract 0.3.0",
                  DeprecationWarning, stacklevel=3)


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str | None) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        if self.new is None:  # a gone package: empty, but a package, so its old submodules import
            module = ModuleType(spec.name, f"Moved: {GONE[spec.name]} (contract_tests/compat).")
            module.__path__ = []
            return module
        _warn(spec.name, self.new)
        return importlib.import_module(self.new)

    def exec_module(self, module: ModuleType) -> None:
        if self.new is None:
            _warn(module.__name__, GONE[module.__name__])


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds an old path of MOVED or GONE, and nothing else."""

    def find_spec(self, fullname: str, path: object = None, target: object = None):
        if fullname in MOVED:
            return importlib.machinery.ModuleSpec(fullname, _Alias(MOVED[fullname]))
        if fullname in GONE:
            return importlib.machinery.ModuleSpec(fullname, _Alias(None), is_package=True)
        return None


def install() -> None:
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedFinder())
