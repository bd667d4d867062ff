"""Mappings (--mapping FILE): how a mapped profile (generic-files) reaches a file-serving server
it has never seen. See schemas/mapping.schema.json and docs/generic-files.md."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract_tests.contracts.declarations import anchored
from contract_tests.contracts.specs import Profile, contracts_root, read_yaml, validator

AUTO = "auto"

# The generic-files fixture's own top-level entries (synthetic/files.py builds them): a mapping's
# `prepare` may not name them.
OWN_ENTRIES = ("inbox", "notes", "bulk", "readme.txt", ".hidden", ".env", "links")


class MappingError(ValueError):
    pass


@dataclass(frozen=True)
class PathArgument:
    """One argument of one tool that carries a path (or a list of paths)."""
    tool: str
    role: str
    argument: str          # a name, or a JSON pointer into the arguments (/target/path)
    many: bool             # a list of paths: each probe is sent as a one-item list
    fixed: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.tool}.{self.argument.strip('/')}"

    def arguments(self, path: str) -> dict[str, Any]:
        """The call's arguments with `path` in this argument (the fixed ones beside it)."""
        args = copy.deepcopy(self.fixed)
        return put(args, self.argument, [path] if self.many else path)


def put(arguments: dict[str, Any], where: str, value: Any) -> dict[str, Any]:
    """Set an argument by name or by JSON pointer, creating what is missing on the way: an object,
    or a list where the next step is an index (`/files/0/path`: a path inside a list of objects,
    `files: [{path: ...}]`; the fixed arguments may give the item's other fields)."""
    if not where.startswith("/"):
        arguments[where] = value
        return arguments
    parts = [p.replace("~1", "/").replace("~0", "~") for p in where.split("/")[1:]]
    node: Any = arguments
    for part, after in zip(parts, parts[1:] + [None]):
        fresh: Any = value if after is None else [] if after.isdigit() else {}
        if isinstance(node, dict):
            if after is None or part not in node:
                node[part] = fresh
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) <= len(node):
            if int(part) == len(node):
                node.append(fresh)
            elif after is None:
                node[int(part)] = fresh
            node = node[int(part)]
        else:
            raise MappingError(f"argument pointer {where}: {part} does not fit the fixed value there "
                               f"({type(node).__name__}; a list takes an index no larger than its length)")
        if after is not None and not isinstance(node, (dict, list)):
            raise MappingError(f"argument pointer {where}: {part} is a fixed value, not an object or a list")
    return arguments


def load(path: str) -> dict[str, Any]:
    """The mapping in `path`, validated; a relative path in its command is made absolute against
    the mapping's folder (or, for the bundled worked examples, the project root)."""
    source = Path(path)
    if not source.is_file() and not source.is_absolute() and (contracts_root() / path).is_file():
        source = contracts_root() / path
    data = read_yaml(source, str(path), "mapping", MappingError)
    return validate(data, str(path), source.resolve().parent)


def validate(data: Any, name: str, base: Path | None = None) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise MappingError(f"{name}: expected a mapping (a YAML object with `paths` and `tools`)")
    problems = [f"{'/'.join(map(str, e.absolute_path)) or '<top>'}: {e.message}"
                for e in validator("mapping.schema.json").iter_errors(data)]
    if problems:
        raise MappingError(f"{name}: not a valid mapping (schemas/mapping.schema.json):\n  " + "\n  ".join(problems[:10]))
    names = [t["name"] for t in data["tools"]]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise MappingError(f"{name}: tools: {', '.join(twice)} mapped more than once (one entry per tool)")
    for tool in data["tools"]:
        for key in ("path", "paths"):
            if key in tool and tool[key].startswith("/"):
                try:
                    put(copy.deepcopy(tool.get("arguments", {})), tool[key], "x")
                except MappingError as exc:
                    raise MappingError(f"{name}: tools: {tool['name']}: {exc}") from None
    prepared = [*data.get("prepare", {}).get("dirs", []), *data.get("prepare", {}).get("files", {})]
    own = sorted({path for path in prepared if path.replace("\\", "/").strip("/").split("/")[0] in OWN_ENTRIES})
    if own:
        raise MappingError(f"{name}: prepare: {', '.join(own)}: the fixture's own entries ({', '.join(OWN_ENTRIES)}) "
                           "are not the mapping's to make")
    if base is not None and "server" in data:
        data["server"]["cmd"] = anchored(data["server"]["cmd"], base)
    return data


def path_arguments(mapping: dict[str, Any]) -> list[PathArgument]:
    out = []
    for tool in mapping["tools"]:
        for key in ("path", "paths"):
            if key in tool:
                out.append(PathArgument(tool["name"], tool["role"], tool[key], key == "paths",
                                        dict(tool.get("arguments", {}))))
    return out


def ready_seconds(mapping: dict[str, Any] | None) -> float:
    """How long a server may take after start before it serves (`ready.seconds`; 0: no wait)."""
    return float(((mapping or {}).get("ready") or {}).get("seconds") or 0)


def denial_forms(mapping: dict[str, Any], tool: str) -> list[Any]:
    for entry in mapping["tools"]:
        if entry["name"] == tool and "denial" in entry:
            return list(entry["denial"])
    return list(mapping.get("denial", []))


def applied(profile: Profile, mapping: dict[str, Any]) -> Profile:
    """The profile as this mapping completes it: its tools, and the server's environment."""
    data = copy.deepcopy(profile.data)
    data["tools"]["required"] = [t["name"] for t in mapping["tools"]]
    data["environment"] = {**data.get("environment", {}), **mapping.get("server", {}).get("env", {})}
    data["mapping"] = mapping
    sample = _sample_call(mapping)
    if sample:
        data["sample_call"] = sample
    return dataclasses.replace(profile, data=data)


def _sample_call(mapping: dict[str, Any]) -> dict[str, Any] | None:
    """The MCP base checks' one ordinary call: the mapping's first read tool on the plain file
    (root-relative where the mapping allows it: the root's absolute path is not known here)."""
    for tool in mapping["tools"]:
        if tool["role"] == "read" and mapping["paths"] != "absolute":
            args = copy.deepcopy(tool.get("arguments", {}))
            return {"tool": tool["name"], "arguments": put(args, tool.get("path") or tool["paths"],
                                                           "inbox/example.md" if "path" in tool else ["inbox/example.md"])}
    return None
