"""policies/acl-matrix.yaml: the hosted profile's role ACL (seed 001) as data."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
SEED_ROLES = ("viewer", "editor", "evaluator", "admin")
PHASES = ("1K", "1L")
TOOL = "get_section_source"


@pytest.fixture(scope="module")
def matrix() -> dict:
    return yaml.safe_load((ROOT / "policies" / "acl-matrix.yaml").read_text(encoding="utf-8"))


def granted(matrix: dict, phase: str, role: str, what: str) -> set[str]:
    """Tools `role` may list/call in `phase`; unknown roles resolve to the fallback (upper bound)."""
    roles = matrix["phases"][phase]["roles"]
    cells = roles.get(role, roles[matrix["unknown_role_falls_back_to"]])
    return {tool for tool, cell in cells.items() if cell[what]}


def test_validates_against_schema(matrix):
    schema = json.loads((ROOT / "schemas" / "acl-matrix.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(matrix)


def test_schema_rejects_uncited_or_unnoted_cells(matrix):
    schema = json.loads((ROOT / "schemas" / "acl-matrix.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    broken = json.loads(json.dumps(matrix))
    del broken["phases"]["1L"]["roles"]["viewer"][TOOL]["source"]
    assert not validator.is_valid(broken)
    broken = json.loads(json.dumps(matrix))
    cell = broken["phases"]["1K"]["roles"]["admin"][TOOL]
    cell.update(basis="safer_reading")
    cell.pop("notes", None)
    assert not validator.is_valid(broken)


def test_every_seed_role_in_both_phases(matrix):
    assert [r["name"] for r in matrix["roles"]] == list(SEED_ROLES)
    for phase in PHASES:
        assert set(matrix["phases"][phase]["roles"]) == set(SEED_ROLES)
        for role in SEED_ROLES:
            assert TOOL in matrix["phases"][phase]["roles"][role]


def test_1k_exposes_hosted_tool_to_no_role(matrix):
    for role in (*SEED_ROLES, "some-unknown-role"):
        assert TOOL not in granted(matrix, "1K", role, "list")
        assert TOOL not in granted(matrix, "1K", role, "call")


def test_1l_exposes_hosted_tool_to_the_four_roles(matrix):
    for role in SEED_ROLES:
        cell = matrix["phases"]["1L"]["roles"][role][TOOL]
        assert cell["list"] and cell["call"] and cell["basis"] == "explicit"


def test_unknown_role_never_exceeds_viewer(matrix):
    assert matrix["unknown_role_falls_back_to"] == "viewer"
    assert matrix["unknown_role_rule"]["bound"] == "subset_of_fallback"
    for phase in PHASES:
        for what in ("list", "call"):
            assert granted(matrix, phase, "no-such-role", what) <= granted(matrix, phase, "viewer", what)


def test_never_reachable_via_other_surfaces(matrix):
    assert set(matrix["never_reachable_via"]) == {"resources", "resource_templates", "prompts"}
    assert matrix["never_reachable_via_source"].startswith("seed 001_85fd8a7bc5d51943: ")


def test_only_seed_named_tools(matrix):
    named = {TOOL, "get_note_outline", "get_document_tree", "get_metadata_facets"}
    assert set(matrix["tools"]) == named
    for phase in PHASES:
        for cells in matrix["phases"][phase]["roles"].values():
            assert set(cells) <= named
