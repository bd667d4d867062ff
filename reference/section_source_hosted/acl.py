"""The hosted role ACL as data, and the one guard both tools/list and tools/call use."""

from __future__ import annotations

ROLES = ("viewer", "editor", "evaluator", "admin")
# The role an unknown or missing role is treated as; never broader than viewer.
FALLBACK_ROLE = "viewer"

ROLE_TOOLS: dict[str, dict[str, frozenset[str]]] = {
    "1K": {role: frozenset() for role in ROLES},  # planning phase: nothing registered
    "1L": {role: frozenset({"get_section_source"}) for role in ROLES},
}


def resolve_role(role: object) -> str:
    return role if isinstance(role, str) and role in ROLES else FALLBACK_ROLE


def is_tool_allowed(tool: str, role: object, phase: str) -> bool:
    return tool in ROLE_TOOLS.get(phase, {}).get(resolve_role(role), frozenset())
