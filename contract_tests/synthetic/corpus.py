"""The path-attack corpus (policies/path-attacks.yaml), expanded for one fixture."""

from __future__ import annotations

from typing import Any


def attack_path(entry: dict[str, Any], placeholders: dict[str, str]) -> str:
    if "repeat" in entry:
        rep = entry["repeat"]
        text = rep.get("prefix", "") + rep["unit"] * int(rep["times"]) + rep.get("suffix", "")
    else:
        text = entry["path"]
    for key, value in placeholders.items():
        text = text.replace("{" + key + "}", value)
    return text


def no_echo_probes(entry: dict[str, Any], path: str) -> list[str]:
    """Strings an error for this attack must not contain: its `no_echo` list, and the whole
    path when it is distinctive (6+ characters)."""
    probes = list(entry.get("no_echo", []))
    if len(path.strip()) >= 6:
        probes.append(path)
    return probes
