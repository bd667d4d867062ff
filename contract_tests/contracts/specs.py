"""Load the contracts (specs/, schemas/, policies/) that every test reads.

The data is the single source of truth: a change of contract is a change of these files.
Installed wheels carry them under contract_tests/_contracts; a source checkout keeps them at
the repository root.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

_PACKAGE = Path(__file__).resolve().parents[1]
TIERS = ("unit", "integration", "e2e", "stress", "data_integrity", "performance", "security")


def contracts_root() -> Path:
    for candidate in (_PACKAGE / "_contracts", _PACKAGE.parent):
        if (candidate / "specs" / "mcp-base.yaml").is_file():
            return candidate
    raise FileNotFoundError("contract data (specs/, schemas/, policies/) not found")


# libyaml's safe loader where PyYAML has it: the specs are read by every run, and the pure-Python
# loader spent about 40% of a run's start-up on them.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader


@cache
def schema(name: str) -> dict[str, Any]:
    return json.loads((contracts_root() / "schemas" / name).read_text(encoding="utf-8"))


def read_yaml(path: Path, name: str, what: str, error: type[Exception]) -> Any:
    """A user's YAML file (a mapping, a catalog): unreadable or not YAML is `error`, naming it."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"cannot read {what} {name}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise error(f"{name}: not valid YAML: {exc}") from exc


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(schema(name))


@cache
def policy(name: str) -> Any:
    return _load_yaml(contracts_root() / "policies" / name)


@cache
def spec(spec_id: str) -> dict[str, Any]:
    path = contracts_root() / "specs" / f"{spec_id}.yaml"
    if not path.is_file():
        raise KeyError(spec_id)
    data = _load_yaml(path)
    validator("spec.schema.json").validate(data)
    return data


def available_profiles() -> list[str]:
    specs = sorted((contracts_root() / "specs").glob("*.yaml"))
    return [p.stem for p in specs if _load_yaml(p).get("kind") == "profile"]


@dataclass(frozen=True)
class Requirement:
    id: str
    spec: str
    tiers: tuple[str, ...]
    strength: str
    behavior: str
    source: str
    transports: tuple[str, ...] = ()
    applies_when: str | None = None
    phases: tuple[str, ...] = ()
    basis: str = "seed"            # seed (quoted), mcp (a MUST of the MCP spec), profile (our reading)
    quote: tuple[str, ...] = ()    # the seed's own words, verbatim
    document: str | None = None    # where the quote is, relative to the seeds folder
    elsewhere: tuple[tuple[str, str], ...] = ()  # (document, words): the same behaviour fixed in another document
    reading: str | None = None     # basis profile: why the profile reads the seed this way
    since_protocol: str | None = None  # applies only when the run speaks this protocol version or a later one

    @property
    def advisory(self) -> bool:
        return self.basis == "profile"


@dataclass
class Profile:
    id: str
    data: dict[str, Any]
    requirements: dict[str, Requirement] = field(default_factory=dict)

    @property
    def transports(self) -> list[str]:
        return list(self.data.get("transports", ["stdio"]))

    @property
    def limits(self) -> dict[str, Any]:
        return dict(self.data.get("limits", {}))

    @property
    def message_limit(self) -> dict[str, Any] | None:
        """The size the profile's documents set for a message, and the requirement it breaks."""
        return self.data.get("message_limit")

    @property
    def required_tools(self) -> list[str]:
        return list(self.data["tools"]["required"])

    @property
    def adjacent_tools(self) -> list[str]:
        return list(self.data["tools"].get("adjacent", []))

    def environment(self, values: dict[str, str]) -> dict[str, str]:
        """The variables the profile sets for its server, placeholders filled from `values`."""
        out = {}
        for key, template in self.data.get("environment", {}).items():
            for name, value in values.items():
                template = template.replace("{" + name + "}", value)
            out[key] = template
        return out

    @property
    def fixture_kind(self) -> str:
        return str(self.data["fixture"])

    def leak_requirements(self, channel: str) -> dict[str, str]:
        """Canary class -> requirement id, for one channel the server writes: results and
        errors (what comes back over MCP), stderr (its logs)."""
        return dict(self.data.get("canaries", {}).get(channel, {}))

    @property
    def output_canaries(self) -> dict[str, dict[str, str]]:
        return {ch: self.leak_requirements(ch) for ch in ("results", "errors")}

    @property
    def echo_allowed(self) -> list[str]:
        """Output channels where a caller's own input may come back (not a leak)."""
        return list(self.data.get("canaries", {}).get("echo_allowed", []))

    def output_validator(self, tool: str) -> Draft202012Validator:
        return validator(self.data["schemas"]["outputs"][tool])

    def error_validator(self) -> Draft202012Validator:
        return validator(self.errors["schema"])

    @property
    def errors(self) -> dict[str, Any]:
        """How the profile's failures look: schema of the error document, pointer to the code,
        accepted channels (tool_result, jsonrpc)."""
        return dict(self.data["errors"])

    @property
    def error_channels(self) -> list[str]:
        declared = DECLARATION.get("error_channel")
        return [declared] if declared else list(self.errors["channels"])

    @property
    def concerns(self) -> dict[str, Any]:
        return dict(self.data.get("concerns", {}))

    def vectors(self) -> list[dict[str, Any]]:
        path = contracts_root() / "specs" / self.data["vectors"]
        return json.loads(path.read_text(encoding="utf-8"))["vectors"]

    def reference_command(self, transport: str) -> str:
        return self.data["reference"][transport]

    @property
    def command_roles(self) -> dict[str, dict[str, Any]]:
        """Commands the profile needs besides --server-cmd (role -> description, optional)."""
        return dict(self.data.get("commands", {}))

    def reference_commands(self) -> dict[str, str]:
        return dict(self.data["reference"].get("commands", {}))

    def reference_declaration(self) -> str | None:
        """The bundled reference's declaration file (absolute), if it ships one."""
        name = self.data["reference"].get("declaration")
        if not name:
            return None
        for base in (_PACKAGE.parent, contracts_root()):
            if (base / name).is_file():
                return str(base / name)
        return None

    @property
    def phases(self) -> list[str]:
        """The phases a spec author can accept (`--phase`); empty when the profile has none."""
        return list(self.data.get("phases", {}).get("values", {}))

    @property
    def default_phase(self) -> str | None:
        return self.data.get("phases", {}).get("default")

    def applies(self, req_id: str, transport: str, phase: str | None = None, protocol: str | None = None) -> bool:
        """Whether a requirement applies to a run of this transport, phase and negotiated
        protocol version (dates compare as strings; None: the version is not known)."""
        req = self.requirements[req_id]
        if req.transports and transport not in req.transports:
            return False
        if req.since_protocol and protocol and protocol < req.since_protocol:
            return False
        return not req.phases or phase in req.phases

    @property
    def protocol_versions(self) -> list[str]:
        """The handshake versions the profile's documents allow, newest first (the suite offers
        them in that order): the profile's `protocol.versions`, else every handshake version
        mcp-base knows."""
        known = spec("mcp-base")["protocol"]["handshake_versions"]
        allowed = self.data.get("protocol", {}).get("versions") or known
        return [v for v in reversed(known) if v in allowed]


# The implementation's declaration (--declare), set by the plugin: the choices a seed leaves open.
DECLARATION: dict[str, Any] = {}


def choice(name: str) -> Any:
    """A choice the documents leave open, as the implementation declared it (its declaration's
    `choices`); None when undeclared: then every answer the documents allow passes."""
    return DECLARATION.get("choices", {}).get(name)


def _requirements(spec_id: str, data: dict[str, Any]) -> dict[str, Requirement]:
    out = {}
    for item in data["requirements"]:
        quote = item.get("quote", ())
        out[item["id"]] = Requirement(
            id=item["id"], spec=spec_id, tiers=tuple(item["tiers"]), strength=item["strength"],
            behavior=item["behavior"], source=str(item.get("source") or item.get("section", "")),
            transports=tuple(item.get("transports", ())), applies_when=item.get("applies_when"),
            phases=tuple(item.get("phases", ())), basis=item["basis"],
            quote=(quote,) if isinstance(quote, str) else tuple(quote),
            document=item.get("document", data.get("seed")), reading=item.get("reading"),
            since_protocol=item.get("since_protocol"),
            elsewhere=tuple((other["document"], words) for other in item.get("quoted_elsewhere", ())
                            for words in ([other["quote"]] if isinstance(other["quote"], str) else other["quote"])),
        )
    return out


@cache
def load_profile(profile_id: str) -> Profile:
    data = spec(profile_id)
    if data.get("kind") != "profile":
        raise KeyError(profile_id)
    reqs: dict[str, Requirement] = {}
    for included in data.get("includes", []):
        reqs.update(_requirements(included, spec(included)))
    reqs.update(_requirements(profile_id, data))
    return Profile(id=profile_id, data=data, requirements=reqs)


@cache
def all_requirement_ids() -> frozenset[str]:
    """Every requirement id of every spec (reading them all takes a run about 0.4 s: ask for it
    only about an id the run's profile does not have)."""
    ids: set[str] = set()
    for path in (contracts_root() / "specs").glob("*.yaml"):
        ids.update(r["id"] for r in _load_yaml(path).get("requirements", []))
    return frozenset(ids)
