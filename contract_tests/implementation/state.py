"""The suite's state for one run: what the options, the declaration and the profile say about
the implementation under test, built once when pytest configures the run and kept in the
config's stash (`config.stash[STATE]`)."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from contract_tests.contracts import declarations, mapping
from contract_tests.contracts import specs as contracts
from contract_tests.contracts.expectations import Expectations, ExpectationsError
from contract_tests.implementation.commands import Commands
from contract_tests.implementation.options import OPTIONS, get
from contract_tests.synthetic.adapter import KINDS
from contract_tests.transport import limits
from contract_tests.transport.stdio import use_protocol_version
from contract_tests.verdicts.running import SELECTION

if TYPE_CHECKING:
    from contract_tests.implementation.preflight import Preflight


@dataclass
class SuiteState:
    profile: contracts.Profile
    transport: str
    server_cmd: str | None
    server_path: str
    phase: str | None
    expectations: Expectations
    server_url: str | None = None
    canister_port: int = 0
    strict: bool = False
    only_reqs: set[str] = field(default_factory=set)
    cited: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)  # nodeid -> (ids, tiers)
    applicable: dict[str, list[str]] = field(default_factory=dict)  # nodeid -> ids, before -k/-m/--deselect
    selected: set[str] = field(default_factory=set)
    preflight: Preflight | None = None
    shard: str | None = None                      # "i/n"
    server_logs: list[dict[str, Any]] = field(default_factory=list)  # redacted, for the HTML report
    sharded_out: set[str] = field(default_factory=set)  # nodeids another shard runs
    commands: dict[str, str] = field(default_factory=dict)  # role -> template (the profile's `commands`)
    given_commands: dict[str, str] = field(default_factory=dict)  # the ones from --rc-command
    protocol_version: str | None = None           # negotiated by the preflight
    shaping_options: dict[str, str] = field(default_factory=dict)  # --declare, --expectations, limits, as given
    protocol_version_given: str | None = None     # --protocol-version
    notes: list[str] = field(default_factory=list)  # deprecated spellings the run was given
    # tests deselected under --server-url because they start servers of their own (OWN_SERVER)
    own_server_deselected: list[str] = field(default_factory=list)
    mapping: dict[str, Any] | None = None          # a mapped profile's mapping (--mapping FILE)
    mapping_source: str | None = None              # where it came from: a file, or "auto"

    @property
    def mapped_command(self) -> str | None:
        return (self.mapping or {}).get("server", {}).get("cmd")

    @property
    def command(self) -> str:
        return self.server_cmd or self.mapped_command or self.profile.reference_command(self.transport)

    @property
    def target(self) -> str:
        if self.server_url:
            return f"running server at {self.server_url}"
        if self.server_cmd or self.mapped_command:
            return self.server_cmd or f"{self.mapped_command} (from the mapping {self.mapping_source})"
        return f"bundled reference ({self.profile.reference_command(self.transport)})"

    @property
    def advisory_ids(self) -> set[str]:
        return {r.id for r in self.profile.requirements.values() if r.basis == "profile"}

    def fixture_settings(self) -> dict[str, Any]:
        """What the profile's fixture is built with: the implementation's commands (for a profile
        that has them), and what a fixture for an already running server must match (its ports,
        secrets)."""
        settings: dict[str, Any] = {"commands": Commands(dict(self.commands))} if self.profile.command_roles else {}
        if self.server_url:
            settings.update(KINDS[self.profile.fixture_kind].running_server_settings(
                {"canister_port": self.canister_port}, os.environ))
        return settings

    def rerun_command(self, nodeid: str, cases: list[str] | None = None) -> str:
        """One line that reruns just this test (and its failing cases) with every option that
        shaped the run, quoted for a POSIX shell."""
        parts = ["retrieval-contract", "--profile", self.profile.id]
        if not self.server_url:
            parts += ["--transport", self.transport]
        if self.phase:
            parts += ["--phase", self.phase]
        if self.server_url:
            parts += ["--server-url", self.server_url]
            if self.canister_port:
                parts += ["--canister-port", str(self.canister_port)]
        elif self.server_cmd:
            parts += ["--server-cmd", self.server_cmd]
        if self.server_path != "/mcp":
            parts += ["--server-path", self.server_path]
        for role, command in self.given_commands.items():
            parts += ["--rc-command", f"{role}={command}"]
        for option, value in self.shaping_options.items():
            parts += [option, value]
        if self.protocol_version_given:
            parts += ["--protocol-version", self.protocol_version_given]
        if self.strict:
            parts.append("--strict")
        module, _, rest = nodeid.partition("::")
        parts.append(module.removesuffix(".py").replace("/", ".") + ("::" + rest if rest else ""))
        if cases:
            parts += ["--case", ",".join(cases)]
        return shlex.join(parts)




STATE = pytest.StashKey[SuiteState]()
FIXTURE_TOKENS = pytest.StashKey[dict[str, str]]()
# The requests a test's own findings already blame: outside content the canary guard then finds in
# one of their responses is the same defect (a provocation that succeeded, reading outside the
# root), reported once, by the test. Any other leak in that response is a defect of its own.
BLAMED = pytest.StashKey[set[str]]()
DECLARED = pytest.StashKey[str | None]()


def configure_state(config: pytest.Config) -> SuiteState:
    """The run's state from its options, declaration and profile; a usage error names the
    option (by its console name) that is wrong and why."""
    profile_id = get(config, "--profile") or config.getini("rc_profile")
    try:
        profile = contracts.load_profile(profile_id)
    except KeyError:
        raise pytest.UsageError(
            f"unknown profile {profile_id!r}; available: {', '.join(contracts.available_profiles())}")
    if profile.message_limit and get(config, "--max-message-bytes") is None:
        # A message the documents allow is never cut short by the suite's own limit.
        limits.LIMITS.max_message_bytes = max(limits.LIMITS.max_message_bytes, profile.message_limit["bytes"])
    server_url = get(config, "--server-url")
    if server_url:
        _check_server_url(config, profile, server_url)
    phase = get(config, "--phase")
    if profile.phases:
        phase = phase or profile.default_phase
        if phase not in profile.phases:
            raise pytest.UsageError(f"--phase: profile {profile_id} has phases {', '.join(profile.phases)}, not {phase}")
    elif phase:
        raise pytest.UsageError(f"--phase: profile {profile_id} defines no phases")
    try:
        expectations = Expectations.load(get(config, "--expectations"), profile)
    except ExpectationsError as exc:
        raise pytest.UsageError(str(exc))
    contracts.DECLARATION.clear()
    notes: list[str] = []  # deprecated spellings the declaration used
    declaration = get(config, "--declare")
    if not declaration and not get(config, "--server-cmd") and not get(config, "--server-url"):
        declaration = profile.reference_declaration()  # the bundled reference ships its own
    if declaration:
        try:
            contracts.DECLARATION.update(declarations.load(declaration, profile, notes))
        except declarations.DeclarationError as exc:
            raise pytest.UsageError(str(exc))
    config.stash[DECLARED] = declaration
    only = {x.strip() for x in (get(config, "--req") or "").split(",") if x.strip()}
    unknown = only - set(profile.requirements)
    if unknown:
        raise pytest.UsageError(f"--req: not requirements of {profile_id}: {', '.join(sorted(unknown))}")
    server_cmd = get(config, "--server-cmd")
    profile, mapped, mapping_source = _mapping(config, profile, server_cmd, server_url)
    served = (mapped or {}).get("server", {})
    transport = get(config, "--transport") or ("http" if server_url else served.get("transport")
                                               or profile.transports[0])
    if transport not in profile.transports:
        raise pytest.UsageError(f"profile {profile_id} is served over {', '.join(profile.transports)}, not {transport}")
    if transport == "http" and server_cmd and "{port}" not in server_cmd:
        raise pytest.UsageError("--transport http: --server-cmd must take the port the suite picks as {port}")
    if transport == "http" and not server_cmd and served.get("cmd") and "{port}" not in served["cmd"]:
        raise pytest.UsageError(f"mapping {mapping_source}: server.transport http: server.cmd must take the port "
                                "the suite picks as {port}")
    server_path = get(config, "--server-path")
    if server_path == "/mcp" and served.get("path"):
        server_path = served["path"]
    shard = get(config, "--shard")
    if shard:
        index, _, count = shard.partition("/")
        if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
            raise pytest.UsageError(f"--shard: expected i/n with 1 <= i <= n, got {shard!r}")
    given = _given_commands(config, profile)
    state = SuiteState(
        profile=profile, transport=transport, server_cmd=server_cmd, server_path=server_path,
        phase=phase, expectations=expectations, only_reqs=only, server_url=server_url,
        canister_port=get(config, "--canister-port"), strict=get(config, "--strict"), shard=shard,
        commands=_commands(profile, given, server_cmd), given_commands=given,
        protocol_version_given=_protocol_version_option(config, profile),
        shaping_options={option.name: str(get(config, option.name)) for option in OPTIONS
                         if option.shapes_run and get(config, option.name)},
        notes=notes, mapping=mapped, mapping_source=mapping_source)
    config.stash[STATE] = state
    SELECTION.only_cases = {x.strip() for x in (get(config, "--case") or "").split(",") if x.strip()}
    SELECTION.expected_reqs = set(expectations.requirement_entries())
    SELECTION.expected_cases = set(expectations.case_entries())
    return state


def _mapping(config: pytest.Config, profile: contracts.Profile, server_cmd: str | None, server_url: str | None
             ) -> tuple[contracts.Profile, dict[str, Any] | None, str | None]:
    """A mapped profile's mapping (--mapping FILE; the first worked example when the bundled
    reference runs), and the profile as it completes it. `--mapping auto` is proposed from the
    server's tools/list once it runs (generic_files/conftest.py)."""
    given = get(config, "--mapping")
    if not profile.data.get("mapped"):
        if given:
            raise pytest.UsageError(f"--mapping: profile {profile.id} is not driven by a mapping (generic-files is)")
        return profile, None, None
    if given == mapping.AUTO:
        proposed = getattr(config, "workerinput", {}).get("rc_mapping")
        if proposed:  # an xdist worker: the proposal the controller made and printed
            return mapping.applied(profile, proposed), proposed, mapping.AUTO
        if not server_cmd and not server_url:
            raise pytest.UsageError("--mapping auto: give the server as --server-cmd (with {root} where the "
                                    "directory it serves goes) or --server-url")
        return profile, None, mapping.AUTO
    source = given or (None if server_cmd or server_url else profile.data["reference"]["mappings"][0])
    if not source:
        raise pytest.UsageError(f"profile {profile.id} needs --mapping FILE (schemas/mapping.schema.json) or "
                                "--mapping auto: which tools read, list, search or stat, and their path arguments")
    try:
        loaded = mapping.load(source)
    except mapping.MappingError as exc:
        raise pytest.UsageError(str(exc))
    if not server_cmd and not server_url and "server" not in loaded:
        raise pytest.UsageError(f"mapping {source}: no `server.cmd`; give the server as --server-cmd or --server-url")
    return mapping.applied(profile, loaded), loaded, source


def _protocol_version_option(config: pytest.Config, profile: contracts.Profile) -> str | None:
    """--protocol-version, checked against the handshake versions the suite knows. On an xdist
    worker, the version the controller's preflight negotiated."""
    negotiated = getattr(config, "workerinput", {}).get("rc_protocol_version")
    if negotiated:
        use_protocol_version(negotiated)
    given = get(config, "--protocol-version")
    if given is None:
        if not negotiated:
            use_protocol_version(profile.protocol_versions[0])
        return None
    known = contracts.spec("mcp-base")["protocol"]["handshake_versions"]
    if given not in known:
        raise pytest.UsageError(f"--protocol-version: {given!r} is not a handshake version the suite speaks "
                                f"({', '.join(known)})")
    if not negotiated:
        use_protocol_version(given)
    return given


def _given_commands(config: pytest.Config, profile: contracts.Profile) -> dict[str, str]:
    given: dict[str, str] = {}
    load = get(config, "--load-cmd")
    if load:  # the older spelling of --rc-command load=CMD
        if "load" not in profile.command_roles:
            raise pytest.UsageError(f"--load-cmd: profile {profile.id} has no load command (its servers read the "
                                    "suite's fixture directly)")
        given["load"] = load
    for item in get(config, "--rc-command") or []:
        role, sep, command = item.partition("=")
        if not sep or not command.strip():
            raise pytest.UsageError(f"--rc-command: expected ROLE=CMD, got {item!r}")
        if role not in profile.command_roles:
            raise pytest.UsageError(f"--rc-command: profile {profile.id} has no command {role!r} "
                                    f"(its commands: {', '.join(profile.command_roles) or 'none'})")
        if role in given and role == "load" and load:
            raise pytest.UsageError("--load-cmd and --rc-command load=CMD name the same command: give one")
        given[role] = command
    return given


def _commands(profile: contracts.Profile, given: dict[str, str], server_cmd: str | None) -> dict[str, str]:
    """Each role's command: --rc-command, else the declaration's `commands`, else (for the
    bundled reference only) the spec's reference commands. A missing required role is a usage
    error that says how to give it."""
    reference = {} if server_cmd else profile.reference_commands()
    merged = {**reference, **contracts.DECLARATION.get("commands", {}), **given}
    missing = [role for role, spec in profile.command_roles.items()
               if role not in merged and not spec.get("optional")]
    if missing:
        raise pytest.UsageError(
            f"profile {profile.id} needs these commands besides --server-cmd: {', '.join(missing)}; give each with "
            f"--rc-command ROLE=CMD or in your declaration's `commands` (see the profile's documentation)")
    return merged


def _check_server_url(config: pytest.Config, profile: contracts.Profile, url: str) -> None:
    if "http" not in profile.transports:
        raise pytest.UsageError(
            f"profile {profile.id} is served over {', '.join(profile.transports)} only; use --server-cmd")
    if get(config, "--server-cmd"):
        raise pytest.UsageError("--server-url and --server-cmd exclude each other")
    if get(config, "--transport") not in (None, "http"):
        raise pytest.UsageError("--server-url: the transport is http")
    if not url.startswith(("http://", "https://")):
        raise pytest.UsageError(f"--server-url: not an http(s) URL: {url!r}")
    problem = KINDS[profile.fixture_kind].running_server_problem(
        {"canister_port": get(config, "--canister-port"),
         "workers": getattr(config.option, "numprocesses", None)}, os.environ)
    if problem:
        raise pytest.UsageError(f"--server-url: {problem}")


