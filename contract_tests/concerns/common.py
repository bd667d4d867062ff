"""Helpers of the shared concern tests: the profile's sweep calls and call templates."""

from __future__ import annotations

from typing import Any

from contract_tests.contracts.specs import Profile, policy
from contract_tests.synthetic.corpus import attack_path
from contract_tests.transport.limits import patience


def render(template: Any, values: dict[str, str]) -> Any:
    """Fill {placeholders} in every string of a call template."""
    if isinstance(template, str):
        for key, value in values.items():
            template = template.replace("{" + key + "}", value)
        return template
    if isinstance(template, dict):
        return {k: render(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [render(v, values) for v in template]
    return template


def item_values(item: str) -> dict[str, str]:
    """Placeholders of one fixture item: {item}, and {repo}/{path} for root-prefixed items."""
    repo, _, path = item.partition("/")
    return {"item": item, "repo": repo, "path": path}


def sweep_calls(profile: Profile, fixture: Any, names: Any, items: list[str] | None = None
                ) -> list[tuple[str, dict[str, Any]]]:
    """Every sweep call of the profile on every fixture item (tool, server-named arguments)."""
    calls = profile.concerns.get("sweep", [])
    values = fixture.call_values()
    out = [(c["tool"], names.args(c["tool"], render(c["arguments"], values))) for c in calls if c.get("once")]
    for item in fixture.items() if items is None else items:
        for call in calls:
            if not call.get("once"):
                out.append((call["tool"], names.args(call["tool"], render(call["arguments"],
                                                                          {**values, **item_values(item)}))))
    return out


def failing_calls(profile: Profile, fixture: Any, names: Any, limit: int = 40) -> list[tuple[str, dict[str, Any]]]:
    """Calls that must fail: missing items and path attacks, on every path tool and root."""
    spec = profile.concerns.get("paths", {})
    out = []
    entries = policy("path-attacks.yaml")["paths"][:limit]
    for root in fixture.attack_roots():
        for tool in spec.get("tools", []):
            for entry in entries + fixture.derived_attacks(root):
                args = render(tool.get("arguments", {}), {"root": root})
                args[tool["argument"]] = attack_path(entry, fixture.attack_placeholders(root))
                out.append((tool["tool"], names.args(tool["tool"], args)))
            args = render(tool.get("arguments", {}), {"root": root})
            args[tool["argument"]] = "no-such-dir-rc/missing-note-rc.md"
            out.append((tool["tool"], names.args(tool["tool"], args)))
    return out


def applies(spec: dict[str, Any], category: str) -> bool:
    """Whether the profile's path concern judges attacks of this category."""
    return category in spec["categories"] if "categories" in spec else True


def judged_attacks(profile: Profile, fixture: Any, names: Any) -> set[str]:
    """The path attacks among the failing calls that the path sweep judges (its category
    applies): their success, and outside content in their answers, are its findings."""
    from contract_tests.verdicts.findings import describe_call
    spec = profile.concerns.get("paths", {})
    out = set()
    for root in fixture.attack_roots():
        for tool in spec.get("tools", []):
            for entry in policy("path-attacks.yaml")["paths"] + fixture.derived_attacks(root):
                if applies(spec, entry["category"]):
                    args = render(tool.get("arguments", {}), {"root": root})
                    args[tool["argument"]] = attack_path(entry, fixture.attack_placeholders(root))
                    out.add(describe_call(tool["tool"], names.args(tool["tool"], args)))
    return out


def run(server: Any, calls: list[tuple[str, dict[str, Any]]], timeout: float | None = None) -> list[dict[str, Any]]:
    """Each call in turn, each given three request timeouts (60 s by default) unless told."""
    wait = patience(3) if timeout is None else timeout
    return [server.call_tool(tool, args, timeout=wait) for tool, args in calls]


def precondition_failure(profile: Profile, responses: list[dict[str, Any]]) -> tuple[str, str] | None:
    """(requirement, why) when a sweep call the profile marks as a precondition failed (e.g.
    open-notebook's enter_collection): the rest of the sweep never reached the fixture's data,
    so the concerns it feeds are blocked, never passed. `responses` start with the once-calls,
    in the order sweep_calls puts them."""
    from contract_tests.verdicts.checks import called_ok, short
    once = [c for c in profile.concerns.get("sweep", []) if c.get("once")]
    for call, response in zip(once, responses):
        if call.get("precondition") and not called_ok(response):
            return call["precondition"], f"{call['tool']} failed in the sweep: {short(response, 200)}"
    return None


def require_sweep(req: str, profile: Profile, responses: list[dict[str, Any]]) -> None:
    """Block `req` when the sweep's precondition failed."""
    from contract_tests.verdicts.findings import blocked
    failure = precondition_failure(profile, responses)
    if failure:
        raise blocked(failure[1], req=req, by=failure[0])


def pick(value: Any, dotted: list[str]) -> dict[str, Any]:
    """The members at a.b.c paths of a JSON value, by path (a path that is absent: None)."""
    out = {}
    for path in dotted:
        node = value
        for key in path.split("."):
            node = node.get(key) if isinstance(node, dict) else None
        out[path] = node
    return out


def strip_volatile(value: Any, dotted: list[str]) -> Any:
    """A copy of a JSON value without the members the profile marks volatile (a.b.c paths)."""
    import copy
    value = copy.deepcopy(value)
    for path in dotted:
        node = value
        *parents, last = path.split(".")
        for key in parents:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(last, None)
    return value
