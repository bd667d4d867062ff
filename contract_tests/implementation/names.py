"""Names a seed leaves to the implementation: parameter names and where output lists sit.

Tests speak the profile's names (`path`, `start_line`, `search.matches`); these classes turn
them into the server's, from its declaration (--declare), else the profile's default name
when the tool's inputSchema has it, else the one other candidate the inputSchema has. What
cannot be found is reported (RT-TOOL-003), not guessed.
"""

from __future__ import annotations

from typing import Any

from contract_tests.contracts import specs as contracts
from contract_tests.verdicts.checks import json_pointer


class ParameterNames:
    def __init__(self, profile: contracts.Profile, listed: list[dict[str, Any]]) -> None:
        self.names: dict[tuple[str, str], str] = {}
        self.problems: list[str] = []
        schemas = {t.get("name"): t.get("inputSchema") or {} for t in listed}
        declared = contracts.DECLARATION.get("parameters", {})
        for tool, params in profile.data.get("parameters", {}).items():
            props = set((schemas.get(tool) or {}).get("properties") or {})
            for logical, candidates in params.items():
                if logical in declared.get(tool, {}):
                    name = declared[tool][logical]
                    if tool in schemas and name not in props:
                        self.problems.append(f"{tool}: the declared parameter {name!r} ({logical}) is not in its "
                                             f"inputSchema")
                elif candidates[0] in props or tool not in schemas:
                    name = candidates[0]
                else:
                    hits = [c for c in candidates[1:] if c in props]
                    name = hits[0] if len(hits) == 1 else candidates[0]
                    if len(hits) != 1:
                        found = f"several candidates {hits}" if hits else f"none of {candidates}"
                        self.problems.append(f"{tool}: no parameter for {logical} ({found} in its inputSchema "
                                             f"properties {sorted(props)}); declare it")
                self.names[(tool, logical)] = name

    def args(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The profile's argument names turned into the server's."""
        return {self.names.get((tool, key), key): value for key, value in arguments.items()}

    def name(self, tool: str, logical: str) -> str:
        return self.names.get((tool, logical), logical)


def find_list(profile: contracts.Profile, name: str, output: Any) -> list[Any] | None:
    """The list `name` (e.g. search.matches) inside a tool output: the declared pointer, else
    the profile's pointers in order, else the one list-valued member of `result`."""
    declared = contracts.DECLARATION.get("outputs", {}).get(name)
    pointers = [declared] if declared is not None else list(profile.data.get("outputs", {}).get(name, []))
    for pointer in pointers:
        try:
            value = json_pointer(output, pointer)
        except KeyError:
            continue
        if isinstance(value, list):
            return value
    if declared is None and isinstance(output, dict) and isinstance(output.get("result"), dict):
        lists = [v for v in output["result"].values() if isinstance(v, list)]
        if len(lists) == 1:
            return lists[0]
    return None


def find_value(profile: contracts.Profile, name: str, output: Any) -> Any:
    """A single value the profile reads (e.g. get_snippet.end), at the declared pointer or the
    first of the profile's pointers present; None when the server reports none."""
    declared = contracts.DECLARATION.get("outputs", {}).get(name)
    for pointer in [declared] if declared is not None else profile.data.get("outputs", {}).get(name, []):
        try:
            return json_pointer(output, pointer)
        except KeyError:
            continue
    return None


_NUMBER_KEYS = ("line", "number", "line_number", "lineNumber", "n", "no", "index")
_TEXT_KEYS = ("text", "content", "line", "value", "source")


def numbered(items: list[Any]) -> list[tuple[int, str]] | None:
    """Numbered lines as (number, text): objects with one integer member and one string
    member (common names first), or [number, text] pairs. None if the items are neither."""
    out = []
    for item in items:
        if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], int) \
                and isinstance(item[1], str):
            out.append((item[0], item[1]))
            continue
        if not isinstance(item, dict):
            return None
        ints = {k: v for k, v in item.items() if isinstance(v, int) and not isinstance(v, bool)}
        strs = {k: v for k, v in item.items() if isinstance(v, str)}
        number = next((ints[k] for k in _NUMBER_KEYS if k in ints), None)
        text = next((strs[k] for k in _TEXT_KEYS if k in strs), None)
        if number is None and len(ints) == 1:
            number = next(iter(ints.values()))
        if text is None and len(strs) == 1:
            text = next(iter(strs.values()))
        if number is None or text is None:
            return None
        out.append((number, text))
    return out


def entry_paths(items: list[Any]) -> list[str] | None:
    """Root-relative paths of directory entries: strings, or objects with a `path` (else the
    one string member that looks like a path). A trailing slash on a directory is dropped."""
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(item.rstrip("/"))
            continue
        if not isinstance(item, dict):
            return None
        value = item.get("path")
        if not isinstance(value, str):
            strs = [v for k, v in item.items() if isinstance(v, str) and k not in ("type", "kind")]
            if len(strs) != 1:
                return None
            value = strs[0]
        out.append(value.rstrip("/"))
    return out
