"""Unit tier: describe_world and list_constraints, the world's own account of itself: the
listed tools, its name and prohibitions, every refusal condition and the interpretation rule."""

from __future__ import annotations

import pytest

from contract_tests.open_notebook.common import (
    INTERPRETATION_RULE,
    MUTATION_PROHIBITIONS,
    REFUSAL_CONDITIONS,
    listed_tools,
    profiles_mark,
)
from contract_tests.verdicts.checks import short
from contract_tests.verdicts.findings import Findings

pytestmark = [profiles_mark, pytest.mark.unit]


@pytest.mark.req("ON-WORLD-001")
def test_describe_world_enumerates_exactly_the_listed_tools(server, client, main):
    """describe_world's available_affordances, and list_constraints' where it names the tools
    too (its seed shape has no such list), are exactly what tools/list lists."""
    listed = sorted(t.get("name") for t in listed_tools(server))
    named = main.ok("describe_world", {}).get("available_affordances")
    also = main.ok("list_constraints", {}).get("available_affordances")
    with Findings() as findings:
        findings.check(isinstance(named, list) and sorted(named) == listed,
                       f"available_affordances {short(named, 300)} is not the listed tools {listed}",
                       case="describe_world")
        if isinstance(also, list):
            findings.check(sorted(also) == listed, f"available_affordances {short(also, 300)} is "
                           f"not the listed tools {listed}", case="list_constraints")


WORLD = {("world", "name"): "Open Notebook", ("world", "type"): "read-only knowledge jurisdiction",
         ("world", "authority_level"): "none", ("world", "mutation"): "forbidden",
         ("boundaries", "reasoning"): "forbidden", ("boundaries", "learning"): "forbidden",
         ("boundaries", "decisions"): "forbidden", ("citation_requirements", "passages_must_quote"): True,
         ("citation_requirements", "artifacts_must_disclaim"): True,
         ("citation_requirements", "synthesis_must_label"): True,
         ("world", "persistence"): "external only (artifacts, vectors)",
         ("boundaries", "scope"): "previously authored notebooks and derived artifacts only"}
PURPOSE = ["preserve human-authored cognition", "enable safe inspection and retrieval", "prevent ungoverned synthesis"]


@pytest.mark.req("ON-WORLD-002")
def test_describe_world_states_the_world_and_its_prohibitions(main):
    body = main.ok("describe_world", {})
    with Findings() as findings:
        for (group, key), value in WORLD.items():
            got = (body.get(group) or {}).get(key)
            findings.check(got == value, f"{group}.{key} is {short(got)}, not {value!r}",
                           case=f"{group}.{key}")
        findings.check(body.get("provenance_available") is True, "provenance_available is not true")
        # An open list (the spec's rule): every purpose of the seed, in any order, more allowed.
        purpose = body.get("purpose") if isinstance(body.get("purpose"), list) else []
        for item in PURPOSE:
            findings.check(item in purpose, f"purpose lacks {item!r} (has {short(body.get('purpose'))})",
                           case="purpose")


SCOPE = {"world_type": "read-only knowledge jurisdiction", "authority_level": "none", "reasoning": "forbidden",
         "learning": "forbidden", "decisions": "forbidden"}
CITATION = {"passages": "must quote verbatim", "artifacts": "must include non-authoritative disclaimer",
            "synthesis": "must label as synthesized with metadata"}


@pytest.mark.req("ON-WORLD-004")
def test_list_constraints_lists_every_prohibition_and_refusal_condition(main):
    body = main.ok("list_constraints", {})
    with Findings() as findings:
        for key, seed in (("mutation_prohibitions", MUTATION_PROHIBITIONS), ("refusal_conditions", REFUSAL_CONDITIONS)):
            listed = body.get(key) if isinstance(body.get(key), list) else []
            for item in seed:
                findings.check(item in listed, f"{key} lacks {item!r}", case=key)
        for group, expected in (("scope_limits", SCOPE), ("citation_requirements", CITATION)):
            for key, value in expected.items():
                got = (body.get(group) or {}).get(key)
                findings.check(got == value, f"{group}.{key} is {short(got)}, not {value!r}",
                               case=f"{group}.{key}")


@pytest.mark.req("ON-WORLD-005")
def test_list_constraints_gives_the_seeds_interpretation_rule(main):
    rule = main.ok("list_constraints", {}).get("interpretation_rule")
    rule = rule if isinstance(rule, dict) else {}
    with Findings() as findings:
        for key, seed in INTERPRETATION_RULE.items():
            listed = rule.get(key) if isinstance(rule.get(key), list) else []
            for item in seed:
                findings.check(item in listed, f"interpretation_rule.{key} lacks {item!r} (has "
                               f"{short(rule.get(key))})", case=key)
