"""Helpers shared by the section-source profiles' test modules."""

from __future__ import annotations

from typing import Any

import pytest

from contract_tests.contracts.specs import policy
from contract_tests.section_source import PROFILES

TOOL = "get_section_source"
profiles_mark = pytest.mark.profiles(*PROFILES)


def blocked() -> dict[str, Any]:
    return policy("blocked-surfaces.yaml")


def forbidden() -> dict[str, Any]:
    return policy("forbidden-output.yaml")


def attacks() -> dict[str, Any]:
    return policy("path-attacks.yaml")


def listed_tools(client) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in client.list_tools()}


def body_free_tools(client, profile) -> list[str]:
    """The profile's tools this server lists: the required ones and any adjacent ones."""
    names = listed_tools(client)
    return [t for t in profile.required_tools + profile.adjacent_tools if t in names]


