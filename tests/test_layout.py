"""The package's layout as docs/contracts.md ("The package's map") draws it: which package may
import which, no import circle (type-only imports included), no module over 400 lines, a root
that holds only the plugin's face and packages, and every old module path still importable
(contract_tests/compat) as the module it moved to."""

from __future__ import annotations

import ast
import importlib
import sys
import warnings
from pathlib import Path

import pytest

from contract_tests import compat

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "contract_tests"

# The profiles' tests (the tiers): each package holds one profile's tests, or the shared ones.
TIERS = {"base", "concerns", "generic_files", "open_notebook", "retrieval_tools", "section_source",
         "section_source_hosted", "vault_agent"}
BELOW_TIERS = {"implementation", "verdicts", "synthetic", "contracts", "transport"}
# A part of the package -> the parts it may import (docs/contracts.md, one line a package).
MAY_IMPORT: dict[str, set[str]] = {
    "transport": set(),
    "contracts": set(),
    "synthetic": {"contracts", "transport"},
    "verdicts": {"contracts", "transport"},
    "implementation": {"verdicts", "synthetic", "contracts", "transport"},
    **{tier: BELOW_TIERS | {"base", "concerns"} for tier in TIERS},
    "section_source_hosted": BELOW_TIERS | {"base", "concerns", "section_source"},  # builds on the local profile
    "suite": BELOW_TIERS,
    "reports": BELOW_TIERS,
    "plugin": BELOW_TIERS | {"suite", "reports", "generic_files"},
    "scoreboard": {"contracts", "face"},
    "cli": BELOW_TIERS | {"reports", "scoreboard"},
    "gate": set(),
    "compat": set(),
    "face": {"compat"},
}
ROOT_FILES = {"__init__.py", "plugin.py", "py.typed", "suite.ini"}
MAX_LINES = 400


def part_of(module: str) -> str:
    """contract_tests.X.Y -> X (a package), contract_tests.plugin -> plugin, the package -> face."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__version__":
        return "face"
    return parts[1]


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """Every module of contract_tests that `path` imports, anywhere in it (in a function, under
    TYPE_CHECKING), relative imports resolved."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            if base.split(".")[0] != "contract_tests":
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                is_module = (root / (full.replace(".", "/") + ".py")).is_file() or \
                    (root / full.replace(".", "/") / "__init__.py").is_file()
                out.append((node.lineno, full if is_module else base))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "contract_tests"]
    return out


def sources(root: Path = ROOT) -> list[Path]:
    return sorted(p for p in (root / "contract_tests").rglob("*.py") if "_contracts" not in p.parts)


def import_problems(root: Path = ROOT) -> list[str]:
    """Every import the map does not allow; a tier's tests are held to their package's row, and
    a part may always import itself."""
    wrong = []
    for path in sources(root):
        here = part_of(module_name(path, root))
        if here not in MAY_IMPORT:
            wrong.append(f"{path.relative_to(root)}: {here} is on no line of the map")
            continue
        allowed = MAY_IMPORT[here] | {here}
        wrong += [f"{path.relative_to(root)}:{line}: {here} imports {target}"
                  for line, target in imports(path, root) if part_of(target) not in allowed]
    return wrong


def circles(root: Path = ROOT) -> list[str]:
    graph = {module_name(path, root): {target for _line, target in imports(path, root)} for path in sources(root)}
    state: dict[str, int] = {}  # 1 on the path, 2 done
    found = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt == node or nxt not in graph:
                continue
            if state.get(nxt) == 1:
                found.append(" -> ".join(trail[trail.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def long_modules(root: Path, folder: str) -> list[str]:
    return [f"{p.relative_to(root)}: {n} lines" for p in sorted((root / folder).rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]


def stray_root_files(root: Path = ROOT) -> list[str]:
    return sorted(p.name for p in (root / "contract_tests").iterdir()
                  if not p.name.startswith((".", "_contracts")) and p.name != "__pycache__"
                  and not (p.is_dir() and (p / "__init__.py").is_file()) and p.name not in ROOT_FILES)


def test_each_package_imports_only_what_the_map_allows():
    wrong = import_problems()
    assert not wrong, "imports the map (docs/contracts.md) does not allow:\n" + "\n".join(wrong)


def test_no_import_circle_between_modules_type_only_imports_included():
    found = circles()
    assert not found, "import circles:\n" + "\n".join(found)


@pytest.mark.parametrize("folder", ["contract_tests", "reference"])
def test_no_module_is_over_400_lines(folder):
    long = long_modules(ROOT, folder)
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(long)


def test_the_package_root_holds_only_the_plugins_face_and_packages():
    stray = stray_root_files()
    assert not stray, f"the package root holds {stray}: a module belongs in a package"


def test_each_layout_check_finds_what_it_guards(tmp_path):
    """The checks above on a package that breaks each rule once: an import up the map, a
    type-only circle, a long module and a module at the root (each would pass unseen if its
    check could not fail)."""
    package = tmp_path / "contract_tests"
    for folder in ("transport", "implementation", "verdicts"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "transport" / "stdio.py").write_text("from contract_tests.verdicts import findings\n")
    (package / "verdicts" / "findings.py").write_text("x = 1\n")
    (package / "implementation" / "state.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .preflight import Preflight\n")
    (package / "implementation" / "preflight.py").write_text(
        "from contract_tests.implementation.state import SuiteState\n" + "\n" * MAX_LINES)
    (package / "report.py").write_text("")
    assert import_problems(tmp_path) == ["contract_tests/report.py: report is on no line of the map",
                                         "contract_tests/transport/stdio.py:1: transport imports "
                                         "contract_tests.verdicts.findings"]
    assert circles(tmp_path) == ["contract_tests.implementation.preflight -> contract_tests.implementation.state "
                                 "-> contract_tests.implementation.preflight"]
    assert long_modules(tmp_path, "contract_tests") == [f"contract_tests/implementation/preflight.py: {MAX_LINES + 1} lines"]
    assert stray_root_files(tmp_path) == ["report.py"]


@pytest.mark.parametrize("old", sorted(compat.MOVED))
def test_an_old_module_path_gives_the_moved_module_with_a_warning(old):
    new = importlib.import_module(compat.MOVED[old])
    sys.modules.pop(old, None)  # imported by an earlier test: import it anew, to see its warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is new
    assert [w for w in caught if issubclass(w.category, DeprecationWarning) and compat.MOVED[old] in str(w.message)]


@pytest.mark.parametrize("old, attribute", [("contract_tests.harness", "stdio"), ("contract_tests.target", "state")])
def test_a_gone_package_still_hands_on_its_old_modules(old, attribute):
    package = importlib.import_module(old)
    module = importlib.import_module(f"{old}.{attribute}")
    assert getattr(package, attribute) is module


def test_the_paths_users_write_stay_valid():
    from contract_tests import contracts, verdicts
    from contract_tests.cli import main
    from contract_tests.gate import main as gate_main
    assert callable(main) and callable(gate_main)
    assert contracts.load_profile("section-source-local").id == "section-source-local"
    assert verdicts.Findings and verdicts.EXIT_BLOCKED == 7
    assert importlib.import_module("contract_tests.plugin").pytest_addoption


def test_a_package_face_never_hides_one_of_its_modules():
    """`import contract_tests.cli.retrieval_contract as m` gives the package's attribute of that
    name: a face that hands on a name like one of its modules (cli/ once held main.py beside
    the function main) would give that name instead of the module."""
    import pkgutil
    hidden = []
    for path in sorted(PACKAGE.rglob("__init__.py")):
        if "_contracts" in path.parts:
            continue
        package = importlib.import_module(module_name(path))
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("test_") or info.name in ("conftest", "__main__"):
                continue
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            if getattr(package, info.name) is not module:
                hidden.append(f"{package.__name__}.{info.name}")
    assert not hidden, f"package attributes that are not the module of that name: {hidden}"
