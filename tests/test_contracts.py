"""The contract data is well-formed: specs, schemas, policies and their cross-references."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from jsonschema import Draft202012Validator

from contract_tests.contracts import mapping
from contract_tests.contracts import specs as contracts

ROOT = contracts.contracts_root()


@pytest.mark.parametrize("path", sorted((ROOT / "specs").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_spec_validates_against_the_spec_schema(path):
    contracts.spec(path.stem)  # validates on load


def test_requirement_ids_are_unique_across_specs():
    ids = Counter()
    for path in (ROOT / "specs").glob("*.yaml"):
        ids.update(r["id"] for r in contracts.spec(path.stem)["requirements"])
    assert not [i for i, n in ids.items() if n > 1]


@pytest.mark.parametrize("path", sorted((ROOT / "schemas").glob("*.json")), ids=lambda p: p.name)
def test_every_schema_is_a_valid_2020_12_schema(path):
    Draft202012Validator.check_schema(contracts.schema(path.name))


@pytest.mark.parametrize("profile_id", contracts.available_profiles())
def test_each_profile_names_files_that_exist(profile_id):
    data = contracts.load_profile(profile_id).data
    schemas = data.get("schemas", {})
    named = [data["errors"]["schema"]] if "errors" in data else []
    named += [*schemas.get("outputs", {}).values()]
    named += [schemas[k] for k in ("input", "match") if k in schemas]
    for name in named:
        assert (ROOT / "schemas" / name).is_file(), name
    for name in data.get("policies", []):
        assert (ROOT / "policies" / name).is_file(), name
    for name in data["reference"].get("mappings", []):  # a mapped profile's worked examples, valid
        assert mapping.load(str(ROOT / name)), name
    if "vectors" in data:
        assert (ROOT / "specs" / data["vectors"]).is_file(), data["vectors"]
    declaration = contracts.load_profile(profile_id).reference_declaration()
    if data["reference"].get("declaration"):
        assert declaration, data["reference"]["declaration"]


def test_forbidden_output_patterns_compile_and_catch_what_they_name():
    policy = contracts.policy("forbidden-output.yaml")
    patterns = {p["id"]: re.compile(p["pattern"]) for p in policy["forbidden_value_patterns"]}
    assert patterns["resource-uri"].search("see section-source://inbox/a.md")
    assert patterns["posix-absolute-path"].search('"/home/user/vault/a.md"')
    assert patterns["windows-absolute-path"].search(" C:\\Users\\x")
    assert not patterns["posix-absolute-path"].search("inbox/example.md")


def test_the_error_envelopes_fix_only_what_the_seeds_fix():
    local = contracts.validator("error-envelope.schema.json")
    assert local.is_valid({"error": "Note not found", "code": "RUNTIME_ERROR"})
    assert local.is_valid({"code": "RUNTIME_ERROR", "reason": "missing"})  # seed 000 names the code only
    assert not local.is_valid({"error": "x", "code": "OTHER"})
    hosted = contracts.validator("hosted-error-envelope.schema.json")
    assert hosted.is_valid({"error": "Invalid path", "code": "UPSTREAM_ERROR"})
    assert not hosted.is_valid({"error": "x", "code": "UPSTREAM_ERROR", "path": "/abs"})  # seed 001's envelope
    rt = contracts.validator("retrieval-tools/error.schema.json")
    assert rt.is_valid({"error": {"code": "ANY_CODE", "message": "m", "details": None}})
    assert not rt.is_valid({"error": {"code": "X", "message": "m"}})  # details is a seed-fixed field


def test_the_output_allowlist_rejects_a_body_field():
    validator = contracts.validator("section-source-v0.schema.json")
    section = {"section_id": "a-md:h1-a-0001", "heading_id": "h1-a-0001", "level": 1, "heading_path": ["A"],
               "heading_text": "A", "child_section_ids": [], "body_available": False,
               "body_returned": False, "snippet_returned": False}
    doc = {"schema": "knowtation.section_source/v0", "path": "a.md", "title": "a", "sections": [section],
           "truncated": False}
    assert validator.is_valid(doc)
    assert not validator.is_valid({**doc, "sections": [{**section, "body": "text"}]})
    assert not validator.is_valid({**doc, "sections": [{**section, "snippet_returned": True}]})
