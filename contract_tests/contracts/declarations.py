"""Implementation declarations (--declare FILE): the choices a seed leaves open, stated by the
implementer and then held against the server. See schemas/declaration.schema.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from contract_tests.contracts.specs import Profile, validator


class DeclarationError(ValueError):
    pass


def load(path: str, profile: Profile, notes: list[str] | None = None) -> dict[str, Any]:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise DeclarationError(f"cannot read declaration {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise DeclarationError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict) or not data:
        raise DeclarationError(f"{path}: expected a mapping with at least `profile`")
    if data.get("profile") == profile.id:
        _renamed(data, path, profile, notes)
    problems = [f"{'/'.join(map(str, e.absolute_path)) or '<top>'}: {e.message}"
                for e in validator("declaration.schema.json").iter_errors(data)]
    if problems:
        raise DeclarationError(f"{path}: not a valid declaration:\n  " + "\n  ".join(problems[:10]))
    if data["profile"] != profile.id:
        raise DeclarationError(f"{path}: declares profile {data['profile']!r}, not {profile.id!r}")
    if "load_command" in data and "load" in profile.command_roles:  # the older spelling of commands.load
        if "load" in data.get("commands", {}):
            raise DeclarationError(f"{path}: load_command and commands.load name the same command: keep commands.load")
        data.setdefault("commands", {})["load"] = data.pop("load_command")
        if notes is not None:
            notes.append(f"{path}: `load_command` is deprecated: write it as `commands: {{load: ...}}` (it was read "
                         "as that)")
    allowed = profile.data.get("declarable", {})
    for key in data:
        if key not in ("profile", "implementation") and key not in allowed:
            raise DeclarationError(f"{path}: profile {profile.id} leaves no choice named {key!r} "
                                   f"(declarable: {', '.join(sorted(allowed)) or 'none'})")
    classes = {c["id"]: c for c in profile.data.get("failure_classes", [])}
    for name, codes in data.get("error_codes", {}).items():
        if name not in classes:
            raise DeclarationError(f"{path}: error_codes: {name!r} is not a failure class of {profile.id} "
                                   f"({', '.join(sorted(classes))})")
        klass = classes[name]
        permitted = [klass["code"]] if "code" in klass else klass.get("codes")
        outside = [c for c in ([codes] if isinstance(codes, str) else codes) if permitted and c not in permitted]
        if outside:
            raise DeclarationError(f"{path}: error_codes: {name}: {', '.join(outside)} not among the codes the "
                                   f"documents allow ({', '.join(permitted)})")
    for name in data.get("choices", {}):
        if name not in allowed.get("choices", {}):
            raise DeclarationError(f"{path}: choices: {name!r} is not a choice of {profile.id}")
    for tool, names in data.get("parameters", {}).items():
        known = profile.data.get("parameters", {}).get(tool)
        if known is None or set(names) - set(known):
            raise DeclarationError(f"{path}: parameters: {tool} {sorted(names)} are not parameters the profile "
                                   f"drives ({sorted(known or [])})")
    for name in data.get("outputs", {}):
        if name not in profile.data.get("outputs", {}):
            raise DeclarationError(f"{path}: outputs: {name!r} is not an output the profile reads")
    for role in data.get("commands", {}):
        if role not in profile.command_roles:
            raise DeclarationError(f"{path}: commands: {role!r} is not a command of {profile.id} "
                                   f"({', '.join(profile.command_roles) or 'none'})")
    if data.get("error_channel") and data["error_channel"] not in profile.errors["channels"]:
        raise DeclarationError(f"{path}: error_channel {data['error_channel']!r}: the seed fixes "
                               f"{', '.join(profile.errors['channels'])}")
    base = Path(path).resolve().parent
    if "commands" in data:
        data["commands"] = {role: anchored(command, base) for role, command in data["commands"].items()}
    return data


_ABSENT = object()


def _renamed(data: dict[str, Any], path: str, profile: Profile, notes: list[str] | None) -> None:
    """Read a key the profile renamed (`declarable.renamed`: old dotted key -> its new place, or
    places) as its new spelling, with a note naming the new place: users keep declarations in
    their repositories, so an old name stays accepted until the next major version."""
    for old, new in profile.data.get("declarable", {}).get("renamed", {}).items():
        *parents, leaf = old.split(".")
        holder: Any = data
        for part in parents:
            holder = holder.get(part) if isinstance(holder, dict) else None
        if not isinstance(holder, dict) or leaf not in holder:
            continue
        value = holder.pop(leaf)
        if parents and not holder:
            _drop_empty(data, parents)
        targets = [new] if isinstance(new, str) else list(new)
        for target in targets:
            *where, key = target.split(".")
            place: Any = data
            for part in where:
                place = place.setdefault(part, {}) if isinstance(place, dict) else None
            if not isinstance(place, dict):
                raise DeclarationError(f"{path}: `{old}` is now `{target}`, but `{'.'.join(where)}` is not a mapping")
            if place.get(key, _ABSENT) not in (_ABSENT, value):
                raise DeclarationError(f"{path}: `{old}` (the older name of `{target}`) and `{target}` disagree "
                                       f"({value!r} and {place[key]!r}): keep `{target}`")
            place[key] = value
        if notes is not None:
            notes.append(f"{path}: `{old}` is renamed: write it as `{'` and `'.join(targets)}` (it was read as that; "
                         "the old name is accepted until the next major version)")


def _drop_empty(data: dict[str, Any], parents: list[str]) -> None:
    node = data
    for part in parents[:-1]:
        node = node[part]
    node.pop(parents[-1], None)


def anchored(command: str, base: Path) -> str:
    """A declared command with every relative path to a file beside the declaration made
    absolute, so a load script can sit next to the declaration whatever the suite's directory."""
    import shlex
    try:
        parts = shlex.split(command)
    except ValueError:
        return command  # the runner reports the malformed command
    changed = False
    for i, arg in enumerate(parts):
        if arg.startswith("-") or "{" in arg or Path(arg).is_absolute() or not (base / arg).is_file():
            continue
        parts[i] = str(base / arg)
        changed = True
    return shlex.join(parts) if changed else command
