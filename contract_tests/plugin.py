"""The pytest plugin (entry point `pytest11`): options, markers, requirement ids, profile
selection, preflight, verdicts (failures, advisories, expected failures), reports and the
fixtures every suite test uses."""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from . import contracts, declarations, preflight as preflight_mod, verdicts
from .expectations import Expectations, ExpectationsError
from .harness import canaries, limits
from .harness.stdio import BadAnswer, MessageTooLarge, NoResponse, ServerGone, ServerStopped
from .harness.adapter import KINDS
from .harness.fixtures import build_for
from .harness.sdk import SdkClient
from .harness.stdio import Connection, protocol_version, use_protocol_version
from .names import ParameterNames
from .report import ReportCollector
from .servers import ServerFactory
from .verdicts import (EXIT_SERVER_UNUSABLE, SELECTION, Finding, RequirementFailure, classify, esc)

SUITE_DIR = Path(__file__).resolve().parent
DEFAULT_PROFILE = "section-source-local"


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
    preflight: preflight_mod.Preflight | None = None
    shard: str | None = None                      # "i/n"
    server_logs: list[dict[str, Any]] = field(default_factory=list)  # redacted, for the HTML report
    sharded_out: set[str] = field(default_factory=set)  # nodeids another shard runs
    commands: dict[str, str] = field(default_factory=dict)  # role -> template (the profile's `commands`)
    given_commands: dict[str, str] = field(default_factory=dict)  # the ones from --rc-command
    protocol_version: str | None = None           # negotiated by the preflight
    shaping_options: dict[str, str] = field(default_factory=dict)  # --declare, --expectations, --load-cmd as given
    protocol_version_given: str | None = None     # --protocol-version

    @property
    def command(self) -> str:
        return self.server_cmd or self.profile.reference_command(self.transport)

    @property
    def target(self) -> str:
        if self.server_url:
            return f"running server at {self.server_url}"
        return self.server_cmd or f"bundled reference ({self.profile.reference_command(self.transport)})"

    @property
    def advisory_ids(self) -> set[str]:
        return {r.id for r in self.profile.requirements.values() if r.basis == "profile"}

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
LOG_LINES = 60


def server_log(server: Any, tokens: dict[str, str]) -> dict[str, Any]:
    """A server's command and its last output lines, every canary token redacted."""
    def clean(line: str) -> str:
        return canaries.redact_all(line[:400], tokens)
    transcript = server.transcript
    return {"command": clean(" ".join(server.argv)),
            "stderr": [clean(x) for x in transcript.stderr[-LOG_LINES:]],
            "stdout": [clean(x) for x in transcript.stdout[-LOG_LINES:]],
            "flood": flood_note(server)}


def flood_note(server: Any) -> str | None:
    """What a server sent beyond what the suite keeps (notifications, lines past the caps,
    messages over the size limit), counted: noted in the report, a finding only where a
    requirement forbids it."""
    parts = []
    if getattr(server, "unsolicited_count", 0) > limits.LIMITS.max_unsolicited:
        parts.append(f"{server.unsolicited_count:,} notifications or other unrequested messages")
    dropped = server.transcript.flood_note()
    if dropped:
        parts.append(f"{dropped} past the caps (counted, not kept)")
    if getattr(server, "oversize", None):
        parts.append(f"{len(server.oversize)} message(s) over the {limits.LIMITS.max_message_bytes:,}-byte limit")
    return "; ".join(parts) or None
DECLARED = pytest.StashKey[str | None]()
# Options that shape a run, repeated on its rerun lines (by the console script's short names).
SHAPING = ("--declare", "--expectations", "--load-cmd", "--rc-request-timeout", "--rc-command-timeout",
           "--rc-max-message-bytes", "--rc-run-budget")
SHORT = {"--rc-request-timeout": "--request-timeout", "--rc-command-timeout": "--command-timeout",
         "--rc-max-message-bytes": "--max-message-bytes", "--rc-run-budget": "--run-budget"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("retrieval-contract", "retrieval-contract conformance suite")
    group.addoption("--profile", default=None,
                    help=f"profile to check (default: ini rc_profile, else {DEFAULT_PROFILE})")
    group.addoption("--server-cmd", default=None,
                    help="command that starts the server under test; placeholders: {python} (this "
                         "interpreter), {port} (HTTP) and the profile's own ({vault}; {docs_root}, {code_root}, {root}; "
                         "{notebooks}, {store}, {stream_timeout_s}; {index_dir}, {config}, {api_key})")
    group.addoption("--rc-command", action="append", default=[], metavar="ROLE=CMD",
                    help="a command the profile needs besides --server-cmd (vault-agent: index, serve, public, "
                         "hold), with the same placeholders; repeatable; overrides the declaration's `commands`")
    group.addoption("--transport", default=None, choices=("stdio", "http"),
                    help="how to reach --server-cmd: stdio, or Streamable HTTP on a port the suite picks "
                         "({port} placeholder); default: the profile's first transport")
    group.addoption("--server-path", default="/mcp", help="HTTP path of the MCP endpoint (default /mcp)")
    group.addoption("--server-url", default=None,
                    help="URL of a running Streamable HTTP server (profiles with the http transport); "
                         "tests that must start their own server skip")
    group.addoption("--canister-port", default=0, type=int,
                    help="with --server-url on a hosted profile: loopback port for the suite's canister double, "
                         "the URL the running server was configured with (secrets from RC_JWT_SECRET, RC_GATEWAY_SECRET)")
    group.addoption("--phase", default=None, help="phase to accept, for profiles that define phases")
    group.addoption("--expectations", default=None,
                    help="YAML file of known failures, by requirement id or REQ-ID[case id]")
    group.addoption("--declare", default=None,
                    help="YAML declaration of the choices the seed leaves to the implementation "
                         "(schemas/declaration.schema.json); without it the suite checks consistency only")
    group.addoption("--load-cmd", default=None,
                    help="for profiles whose fixture an implementation with its own storage imports: a command run "
                         "once per fixture the suite builds, before any server starts on it (overrides the "
                         "declaration's load_command; placeholders as for --server-cmd)")
    group.addoption("--report", default=None, help="directory for results.json, results.md and junit.xml")
    group.addoption("--docs-url", default=None,
                    help="base URL of the published docs site: results.md links each requirement to its page")
    group.addoption("--baseline", default=None,
                    help="a results.json of an earlier run: report only the requirements whose verdict changed")
    group.addoption("--req", default=None, help="comma-separated requirement ids: run only tests citing them")
    group.addoption("--case", default=None,
                    help="comma-separated case ids (vector, attack, tool-and-root ids): sweeps try only these")
    group.addoption("--rc-strict", action="store_true", default=False,
                    help="advisories (requirements of the profile's own reading, basis: profile) fail the run "
                         "(`retrieval-contract --strict`)")
    group.addoption("--shard", default=None,
                    help="i/n: run the i-th of n deterministic parts of the run (by profile, transport, phase, "
                         "tier and test id); join the parts' results.json with `retrieval-contract merge-reports`")
    group.addoption("--protocol-version", default=None, metavar="VERSION",
                    help="the MCP handshake version to speak (default: the first the server accepts of the versions "
                         "the profile's documents allow, offered newest first)")
    group.addoption("--rc-request-timeout", type=float, default=None, metavar="SECONDS",
                    help=f"how long a request waits for its answer unless a check asks for longer (default "
                         f"{limits.LIMITS.request_timeout:g}; `retrieval-contract --request-timeout`)")
    group.addoption("--rc-command-timeout", type=float, default=None, metavar="SECONDS",
                    help=f"how long one of the implementation's own commands (index, load) may run before it is "
                         f"killed, with what it started; one that overran it is not run again in that worker "
                         f"(default {limits.LIMITS.command_timeout:g}; `retrieval-contract --command-timeout`)")
    group.addoption("--rc-max-message-bytes", type=int, default=None, metavar="BYTES",
                    help=f"the largest single message the suite reads from the server (default "
                         f"{limits.LIMITS.max_message_bytes:,}); a larger one is a finding (MCP-SIZE-001), kept "
                         "only as its first bytes (`retrieval-contract --max-message-bytes`)")
    group.addoption("--rc-run-budget", type=float, default=None, metavar="SECONDS",
                    help="stop talking to the server after this many seconds: the remaining checks are blocked, "
                         "the reports written, and the run exits 9 (`retrieval-contract --run-budget`)")
    group.addoption("--no-preflight", action="store_true", default=False,
                    help="skip starting the server once before the run")
    parser.addini("rc_profile", "default profile for the retrieval-contract suite", default=DEFAULT_PROFILE)


def _is_suite_item(item: pytest.Item) -> bool:
    return SUITE_DIR in Path(str(item.path)).resolve().parents


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for tier in contracts.TIERS:
        config.addinivalue_line("markers", f"{tier}: retrieval-contract tier {tier}")
    config.addinivalue_line("markers", "req(*ids): requirement ids a test proves")
    config.addinivalue_line("markers", "profiles(*ids): profiles a suite module applies to")
    config.addinivalue_line("markers", "inapplicable: a concern test the profile does not configure (dropped)")
    limits.configure(config.getoption("--rc-request-timeout"), config.getoption("--rc-max-message-bytes"),
                     config.getoption("--rc-run-budget"), config.getoption("--rc-command-timeout"))
    shared = getattr(config, "workerinput", {}).get("rc_stop_file")
    if shared:  # an xdist worker: the file in which the run's workers say why it stopped
        os.environ[limits.STOP_FILE] = shared
    profile_id = config.getoption("--profile") or config.getini("rc_profile")
    try:
        profile = contracts.load_profile(profile_id)
    except KeyError:
        raise pytest.UsageError(
            f"unknown profile {profile_id!r}; available: {', '.join(contracts.available_profiles())}")
    if profile.message_limit and config.getoption("--rc-max-message-bytes") is None:
        # A message the documents allow is never cut short by the suite's own limit.
        limits.LIMITS.max_message_bytes = max(limits.LIMITS.max_message_bytes, profile.message_limit["bytes"])
    server_url = config.getoption("--server-url")
    if server_url:
        _check_server_url(config, profile, server_url)
    phase = config.getoption("--phase")
    if profile.phases:
        phase = phase or profile.default_phase
        if phase not in profile.phases:
            raise pytest.UsageError(f"--phase: profile {profile_id} has phases {', '.join(profile.phases)}, not {phase}")
    elif phase:
        raise pytest.UsageError(f"--phase: profile {profile_id} defines no phases")
    try:
        expectations = Expectations.load(config.getoption("--expectations"), profile)
    except ExpectationsError as exc:
        raise pytest.UsageError(str(exc))
    contracts.DECLARATION.clear()
    declaration = config.getoption("--declare")
    if not declaration and not config.getoption("--server-cmd") and not config.getoption("--server-url"):
        declaration = profile.reference_declaration()  # the bundled reference ships its own
    if declaration:
        try:
            contracts.DECLARATION.update(declarations.load(declaration, profile))
        except declarations.DeclarationError as exc:
            raise pytest.UsageError(str(exc))
    config.stash[DECLARED] = declaration
    load_command = config.getoption("--load-cmd")
    if load_command:
        if "load_command" not in profile.data.get("declarable", {}):
            raise pytest.UsageError(f"--load-cmd: profile {profile_id} has no load command (its servers read the "
                                    "suite's fixture directly)")
        contracts.DECLARATION["load_command"] = load_command
    only = {x.strip() for x in (config.getoption("--req") or "").split(",") if x.strip()}
    unknown = only - set(profile.requirements)
    if unknown:
        raise pytest.UsageError(f"--req: not requirements of {profile_id}: {', '.join(sorted(unknown))}")
    transport = config.getoption("--transport") or ("http" if server_url else profile.transports[0])
    if transport not in profile.transports:
        raise pytest.UsageError(f"profile {profile_id} is served over {', '.join(profile.transports)}, not {transport}")
    server_cmd = config.getoption("--server-cmd")
    if transport == "http" and server_cmd and "{port}" not in server_cmd:
        raise pytest.UsageError("--transport http: --server-cmd must take the port the suite picks as {port}")
    shard = config.getoption("--shard")
    if shard:
        index, _, count = shard.partition("/")
        if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
            raise pytest.UsageError(f"--shard: expected i/n with 1 <= i <= n, got {shard!r}")
    given = _given_commands(config, profile)
    state = SuiteState(
        profile=profile, transport=transport, server_cmd=server_cmd, server_path=config.getoption("--server-path"),
        phase=phase, expectations=expectations, only_reqs=only, server_url=server_url,
        canister_port=config.getoption("--canister-port"), strict=config.getoption("--rc-strict"), shard=shard,
        commands=_commands(profile, given, server_cmd), given_commands=given,
        protocol_version_given=_protocol_version_option(config, profile),
        shaping_options={SHORT.get(option, option): str(config.getoption(option)) for option in SHAPING
                         if config.getoption(option)})
    config.stash[STATE] = state
    SELECTION.only_cases = {x.strip() for x in (config.getoption("--case") or "").split(",") if x.strip()}
    SELECTION.expected_reqs = set(expectations.requirement_entries())
    SELECTION.expected_cases = set(expectations.case_entries())
    report_dir = config.getoption("--report")
    if report_dir:
        Path(report_dir).mkdir(parents=True, exist_ok=True)
        if not getattr(config.option, "xmlpath", None):
            config.option.xmlpath = str(Path(report_dir) / "junit.xml")
    if not _is_worker(config) and _runs_suite(config):
        config.pluginmanager.register(
            ReportCollector(config, state, Path(report_dir) if report_dir else None), "retrieval-contract-report")


def _protocol_version_option(config: pytest.Config, profile: contracts.Profile) -> str | None:
    """--protocol-version, checked against the handshake versions the suite knows. On an xdist
    worker, the version the controller's preflight negotiated."""
    negotiated = getattr(config, "workerinput", {}).get("rc_protocol_version")
    if negotiated:
        use_protocol_version(negotiated)
    given = config.getoption("--protocol-version")
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
    for item in config.getoption("--rc-command") or []:
        role, sep, command = item.partition("=")
        if not sep or not command.strip():
            raise pytest.UsageError(f"--rc-command: expected ROLE=CMD, got {item!r}")
        if role not in profile.command_roles:
            raise pytest.UsageError(f"--rc-command: profile {profile.id} has no command {role!r} "
                                    f"(its commands: {', '.join(profile.command_roles) or 'none'})")
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
    if config.getoption("--server-cmd"):
        raise pytest.UsageError("--server-url and --server-cmd exclude each other")
    if config.getoption("--transport") not in (None, "http"):
        raise pytest.UsageError("--server-url: the transport is http")
    if not url.startswith(("http://", "https://")):
        raise pytest.UsageError(f"--server-url: not an http(s) URL: {url!r}")
    problem = KINDS[profile.fixture_kind].running_server_problem(
        {"canister_port": config.getoption("--canister-port"),
         "workers": getattr(config.option, "numprocesses", None)}, os.environ)
    if problem:
        raise pytest.UsageError(f"--server-url: {problem}")


def _runs_suite(config: pytest.Config) -> bool:
    return any("contract_tests" in str(arg) for arg in config.args)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Preflight on the controlling process, before any worker starts."""
    config = session.config
    state = config.stash.get(STATE, None)
    if state is None or _is_worker(config) or not _runs_suite(config) or config.getoption("collectonly"):
        return
    if config.getoption("--no-preflight"):
        _share_the_stop(config)
        return
    state.preflight = preflight_mod.run(state, _fixture_settings(state))
    limits.HEALTH.reset()  # the preflight's unanswered attempts are its own verdict, not the run's
    _share_the_stop(config)  # after the preflight: its stops are not the run's
    if state.preflight.ok and state.preflight.protocol_version:
        use_protocol_version(state.preflight.protocol_version)
        state.protocol_version = state.preflight.protocol_version
    if not state.preflight.ok:
        collector = config.pluginmanager.get_plugin("retrieval-contract-report")
        if collector is not None:
            collector.write_unusable(state.preflight)
        pytest.exit(state.preflight.message(), returncode=EXIT_SERVER_UNUSABLE)


def _share_the_stop(config: pytest.Config) -> None:
    """A file in which the run's workers share why the run stopped talking to the server: a
    worker that sees another's reason blocks its remaining checks at once."""
    import tempfile
    folder = tempfile.mkdtemp(prefix="rc-run-")
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    os.environ[limits.STOP_FILE] = os.path.join(folder, "stopped")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker speaks the version the preflight negotiated, and shares the file in
    which the run's workers say why it stopped."""
    node.workerinput["rc_protocol_version"] = protocol_version()
    node.workerinput["rc_stop_file"] = os.environ.get(limits.STOP_FILE, "")


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash.get(STATE, None)
    if state is None or not _runs_suite(config):
        return []
    reqs = state.profile.requirements.values()
    advisory = sum(1 for r in reqs if r.basis == "profile")
    lines = [f"retrieval-contract: profile {state.profile.id}, transport {state.transport}, "
             f"{len(state.profile.requirements)} requirements ({advisory} advisory"
             f"{', failing the run under --strict' if state.strict else ''})",
             f"retrieval-contract: target {state.target}"]
    if state.phase:
        lines.append(f"retrieval-contract: phase {state.phase}")
    if state.preflight is not None:
        lines.append(f"retrieval-contract: server {state.preflight.describe()}")
        if state.preflight.refused:
            lines.append("retrieval-contract: protocol versions refused before one was accepted: "
                         + "; ".join(state.preflight.refused))
        for warning in state.preflight.warnings:
            lines.append(f"retrieval-contract: WARNING: {warning}")
    if state.commands:
        lines.append(f"retrieval-contract: commands {', '.join(sorted(state.commands))}")
    if config.stash.get(DECLARED, None):
        lines.append(f"retrieval-contract: declaration {config.stash.get(DECLARED, None)} "
                     f"({', '.join(k for k in contracts.DECLARATION if k != 'profile')})")
    if contracts.DECLARATION.get("load_command"):
        lines.append(f"retrieval-contract: load command {contracts.DECLARATION['load_command']}")
    if state.expectations.source:
        lines.append(f"retrieval-contract: expectations {state.expectations.source} "
                     f"({len(state.expectations.failures)} known failures)")
    return lines


def item_requirements(item: pytest.Item) -> list[str]:
    return [req for mark in item.iter_markers("req") for req in mark.args]


def _case_of(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.id if callspec is not None else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[STATE]
    known = contracts.all_requirement_ids()
    keep, drop, problems = [], [], []
    for item in items:
        if not _is_suite_item(item):
            keep.append(item)
            continue
        if item.get_closest_marker("inapplicable"):
            drop.append(item)
            continue
        ids = item_requirements(item)
        tiers = [t for t in contracts.TIERS if item.get_closest_marker(t)]
        if not ids:
            problems.append(f"{item.nodeid}: cites no requirement id")
        if len(tiers) != 1:
            problems.append(f"{item.nodeid}: needs exactly one tier marker, has {tiers or 'none'}")
        for req in ids:
            if req not in known:
                problems.append(f"{item.nodeid}: cites unknown requirement id {req}")
        profiles = [p for mark in item.iter_markers("profiles") for p in mark.args]
        if profiles and state.profile.id not in profiles:
            drop.append(item)
            continue
        if any(req not in state.profile.requirements for req in ids):
            drop.append(item)
            continue
        state.cited[item.nodeid] = (ids, tiers)
        if not any(state.profile.applies(r, state.transport, state.phase, protocol_version()) for r in ids) or (
                state.only_reqs and not state.only_reqs & set(ids)):
            drop.append(item)
            continue
        state.applicable[item.nodeid] = ids
        for req in ids:
            item.user_properties.append(("requirement", req))
        keep.append(item)
    if problems:
        raise pytest.UsageError("retrieval-contract: suite tests break the suite's conventions:\n  "
                                + "\n  ".join(problems))
    stale = state.expectations.stale(_cited_cases(state, items))
    if stale:
        raise pytest.UsageError("retrieval-contract: expectations file " + str(state.expectations.source) + ":\n  "
                                + "\n  ".join(stale))
    if state.shard:
        keep = _shard(state, keep)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    elif state.shard:
        items[:] = keep


def _shard(state: SuiteState, items: list[pytest.Item]) -> list[pytest.Item]:
    """This shard's part: a stable hash of (profile, transport, phase, tier, test id) picks
    the part, so every machine splits the same run the same way."""
    import zlib
    index, count = (int(x) for x in state.shard.split("/"))
    keep = []
    for item in items:
        if item.nodeid not in state.cited:
            keep.append(item)
            continue
        tier = state.cited[item.nodeid][1][0]
        key = f"{state.profile.id}|{state.transport}|{state.phase}|{tier}|{item.nodeid}".encode()
        if zlib.crc32(key) % count == index - 1:
            keep.append(item)
        else:
            state.sharded_out.add(item.nodeid)
    return keep


def _cited_cases(state: SuiteState, items: list[pytest.Item]) -> dict[str, set[str]]:
    """Requirement id -> the parametrize ids of the tests citing it (for stale-entry checks)."""
    out: dict[str, set[str]] = {}
    for item in items:
        if item.nodeid in state.cited:
            case = _case_of(item)
            for req in state.cited[item.nodeid][0]:
                out.setdefault(req, set())
                if case:
                    out[req].add(case)
    return out


def pytest_collection_finish(session: pytest.Session) -> None:
    state = session.config.stash.get(STATE, None)
    if state is None:
        return
    state.selected = {item.nodeid for item in session.items}
    if _is_worker(session.config):
        session.config.workeroutput["rc_collection"] = {
            "applicable": state.applicable, "selected": sorted(state.selected & set(state.applicable)),
            "sharded_out": sorted(state.sharded_out)}


# --- verdicts ---------------------------------------------------------------------------

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker hands the controller why it stopped talking to the server, if it did."""
    if _is_worker(session.config) and limits.HEALTH.stopped:
        session.config.workeroutput["rc_stopped"] = limits.HEALTH.stopped


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    verdicts.start_test()
    state = item.config.stash.get(STATE, None)
    stopped = limits.HEALTH.check() if state is not None and _is_suite_item(item) else None
    if stopped and item.nodeid in state.applicable:
        # Whatever the test would start or send (a server of its own, a raw HTTP request, a
        # command), the run has stopped talking to the server: blocked, with the reason.
        raise ServerStopped(stopped)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report: pytest.TestReport = yield
    config = item.config
    state = config.stash.get(STATE, None)
    if state is None or not _is_suite_item(item) or item.nodeid not in state.applicable:
        return report
    ids = state.applicable[item.nodeid]
    case = _case_of(item)
    if report.failed:
        exc = call.excinfo.value if call.excinfo is not None else None
        if isinstance(exc, RequirementFailure):
            findings = exc.findings
        elif isinstance(exc, (ServerStopped, ServerGone, MessageTooLarge, NoResponse, BadAnswer)) \
                and _cut_short(exc, state):
            findings = [*getattr(exc, "rc_findings", []), *_cut_short(exc, state)(ids)]
        elif verdicts.server_side(exc):
            text = esc(verdicts.exception_text(exc) if exc is not None else str(report.longrepr), 600)
            findings = [*getattr(exc, "rc_findings", []),
                        *[Finding(req, f"the test could not finish ({report.when}): {text}", None, None, "error")
                          for req in ids]]
        else:
            _suite_error(report, item, call)
            return report
        if case is not None and any(case == r or case.startswith(r + "-") for r in ids):
            case = None  # a concern test's parameter is its requirement, not a case
        findings = [Finding(f.req, f.message, f.case or case, f.request, f.kind, f.by) for f in findings]
        if report.when == "call":
            item.stash[BLAMED] = {f.request for f in findings if f.request and f.kind == "fail"}
            if getattr(exc, "complete", False):
                # A sweep that ran to its end: a cited requirement it checked and found nothing
                # against held, though another requirement failed in the same test.
                report.rc_held = sorted((verdicts.checked_requirements() & set(ids)) - {f.req for f in findings})
        _apply_verdict(report, state, item, findings)
    if report.when == "call":
        report.rc_cases = _expected_cases_checked(ids, case)
    return report


SIZE_REQUIREMENT = "MCP-SIZE-001"


def _cut_short(exc: BaseException, state: SuiteState):
    """For a test the server cut short without it being the test's finding, a function from the
    test's ids to its findings: the run stopped talking to the server (blocked, by the reason),
    the server had exited before the test began (blocked), a request got no answer within the
    suite's deadline (blocked: the documents set none), it answered a POST with a body that is
    not JSON-RPC (MCP-RPC-003's finding; the rest blocked by it), or with a message over
    the size limit (MCP-SIZE-001's finding; the rest blocked by it). None otherwise."""
    if isinstance(exc, ServerStopped):
        return lambda ids: [Finding(req, str(exc), None, None, "blocked", "the run stopped") for req in ids]
    if isinstance(exc, ServerGone) and exc.earlier:
        return lambda ids: [Finding(req, str(exc), None, None, "blocked", "the server exited") for req in ids]
    if isinstance(exc, NoResponse):
        # The documents set no deadline (a check of one that they do set catches NoResponse
        # itself): a request left unanswered is not evidence against what the test checks.
        return lambda ids: [Finding(req, str(exc), None, None, "blocked", "no answer in time") for req in ids]
    if isinstance(exc, BadAnswer):
        rpc = "MCP-RPC-003" if "MCP-RPC-003" in state.profile.requirements else None
        return lambda ids: ([Finding(rpc, str(exc))] if rpc else []) + [
            Finding(req, str(exc), None, None, "blocked", rpc or "an answer that is not JSON-RPC")
            for req in ids if req != rpc]
    if isinstance(exc, MessageTooLarge):
        limit = state.profile.message_limit
        evidence = f"{exc} (its start: {esc(exc.record.prefix.decode('utf-8', 'replace'), 200)})"
        if limit and exc.record.size > limit["bytes"]:
            size = limit["requirement"]  # over a size the profile's documents set: their finding
            evidence = f"{evidence}; over {limit['bytes']:,} bytes: {limit.get('note', 'the limit the documents set')}"
        else:
            size = SIZE_REQUIREMENT if SIZE_REQUIREMENT in state.profile.requirements else None
        return lambda ids: ([Finding(size, evidence)] if size else []) + [
            Finding(req, str(exc), None, None, "blocked", size or "a message over the size limit")
            for req in ids if req != size]
    return None


def _expected_cases_checked(ids: list[str], case: str | None) -> list[list[str]]:
    """(requirement, case) pairs this test checked that an expectations entry names: the
    report decides, over the whole run, whether such an entry failed somewhere or passed
    everywhere (an entry covers the case on every tool and root)."""
    checked = verdicts.checked_cases()
    if case is not None:
        checked |= {(req, case) for req in ids}
    return sorted([req, c] for req, c in checked if SELECTION.expected_case(req, c))


def _suite_error(report: pytest.TestReport, item: pytest.Item, call: pytest.CallInfo) -> None:
    """A crash in the suite's own code: reported once, apart from every requirement, with its
    traceback; never evidence against the server."""
    excinfo = call.excinfo
    entry = excinfo.traceback[-1] if excinfo is not None and excinfo.traceback else None
    where = f"{entry.path}:{entry.lineno + 1}" if entry is not None else item.nodeid
    message = verdicts.exception_text(excinfo.value) if excinfo is not None else "unknown error"
    report.rc_suite_error = {"message": esc(message, 500), "where": where, "phase": report.when,
                             "traceback": str(report.longrepr)[-verdicts.TRACEBACK_CHARS:]}
    head = (f"suite error (a bug in retrieval-contract, not a finding against the server; please report it): "
            f"{esc(message, 500)}\n    at {where}")
    key = (message, where)
    if key in _SHOWN_SUITE_ERRORS:  # the traceback once per process; the report counts every test
        report.longrepr = head + "\n    (the same suite error as above; traceback shown once)"
    else:
        _SHOWN_SUITE_ERRORS.add(key)
        report.longrepr = f"{head}\n{report.longrepr}"


_SHOWN_SUITE_ERRORS: set[tuple[str, str]] = set()


def _apply_verdict(report: pytest.TestReport, state: SuiteState, item: pytest.Item, findings: list[Finding]) -> None:
    verdict = classify(findings, state.advisory_ids, state.strict)
    report.rc_findings = {"failing": [f.as_dict() for f in verdict.failing],
                          "advisory": [f.as_dict() for f in verdict.advisory],
                          "expected": [f.as_dict() for f in verdict.expected],
                          "blocked": [f.as_dict() for f in verdict.blocked]}
    for f in verdict.failing:
        report.user_properties.append(("failed_requirement", f.req))
    for f in verdict.advisory:
        report.user_properties.append(("advisory_requirement", f.req))
    shown = verdicts.CONSOLE_CHARS
    if verdict.failing:
        report.outcome = "failed"
        lines = [f.render(shown) for f in verdict.failing]
        lines += [f"(advisory) {f.render(shown)}" for f in verdict.advisory]
        lines += [f"(blocked) {f.render(shown)}" for f in verdict.blocked]
        lines += [f"(expected) {f.render(shown)}" for f in verdict.expected]
        lines = verdicts.cap_lines(lines)
        cases = sorted({f.case for f in verdict.failing if f.case and f.case != _case_of(item)})
        lines.append("rerun: " + state.rerun_command(item.nodeid, cases))
        report.longrepr = "\n".join(lines)
    elif verdict.blocked:
        # Not checked: pytest's "skipped" (JUnit <skipped>), naming the blocker. In the setup
        # phase this also keeps pytest from running the test body without its fixture.
        report.outcome = "skipped"
        reasons = verdicts.cap_lines([f.render(shown) for f in verdict.blocked])
        path, lineno, _ = item.location
        report.longrepr = (str(item.path), (lineno or 0) + 1, "blocked: " + "; ".join(reasons))
    elif report.when == "setup":
        # A setup that did not finish never passes, whatever its findings mean for the run:
        # the test body would run without its fixtures.
        report.outcome = "skipped"
        shown_findings = verdicts.cap_lines([f.render(shown) for f in verdict.advisory + verdict.expected])
        path, lineno, _ = item.location
        report.longrepr = (str(item.path), (lineno or 0) + 1, "setup did not finish: " + "; ".join(shown_findings))
    elif verdict.advisory or not verdict.expected:
        report.outcome = "passed"
        report.longrepr = None
    else:
        report.outcome = "skipped"
        report.wasxfail = "; ".join(
            f"{f.req}{f'[{f.case}]' if f.case else ''}: {state.expectations.reason(f.req, f.case)}"
            for f in verdict.expected)
        report.longrepr = None


def _request_of(server: Any, request_id: Any) -> str | None:
    """The request whose response carried a leak (found by the canary guard after the test),
    so the finding names what provoked it, not only the test it ran after."""
    params = server.sent_params.get(request_id) if request_id is not None else None
    if isinstance(params, dict) and isinstance(params.get("name"), str) and "arguments" in params:
        return verdicts.describe_call(params["name"], params["arguments"])
    return f"request {request_id} {esc(params, 200)}" if params is not None else None


# --- fixtures --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def suite(pytestconfig: pytest.Config) -> SuiteState:
    return pytestconfig.stash[STATE]


@pytest.fixture(scope="session")
def profile(suite: SuiteState) -> contracts.Profile:
    return suite.profile


@pytest.fixture(scope="session")
def contract_fixture(tmp_path_factory: pytest.TempPathFactory, profile: contracts.Profile, suite: SuiteState,
                     pytestconfig: pytest.Config):
    """The profile's synthetic data (its fixture kind's), built once per worker."""
    fixture = build_for(profile, tmp_path_factory.mktemp("rc"), _fixture_settings(suite))
    pytestconfig.stash[FIXTURE_TOKENS] = dict(fixture.canaries)
    yield fixture
    close = getattr(fixture, "close", None)
    if close:
        close()


def _fixture_settings(suite: SuiteState) -> dict[str, Any]:
    """What a fixture built for an already running server must match (its ports, secrets), and
    the commands of a profile that has them (e.g. the one that builds an index)."""
    if suite.profile.command_roles:
        return {"commands": dict(suite.commands)}
    if not suite.server_url:
        return {}
    return KINDS[suite.profile.fixture_kind].running_server_settings({"canister_port": suite.canister_port},
                                                                     os.environ)


@pytest.fixture(scope="session")
def servers(suite: SuiteState, tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config):
    factory = ServerFactory(suite, tmp_path_factory.mktemp("homes"))
    yield factory
    factory.close_all()
    fixture = pytestconfig.stash.get(FIXTURE_TOKENS, {})
    logs = [server_log(srv, fixture) for srv in factory.started if getattr(srv, "argv", None)]
    suite.server_logs.extend(logs)
    if _is_worker(pytestconfig):
        pytestconfig.workeroutput["rc_server_logs"] = suite.server_logs


@pytest.fixture(scope="session")
def server(servers: ServerFactory, contract_fixture) -> Connection:
    """The worker's long-lived server on the profile's fixture (initialized by the SDK client)."""
    return servers.start(contract_fixture)


@pytest.fixture(scope="session")
def client(server: Connection):
    """The official SDK ClientSession over the long-lived server, initialized."""
    try:
        sdk = SdkClient(server)
    except Exception as exc:  # noqa: BLE001 - name what went wrong, keep stderr short
        tail = "\n".join(server.transcript.stderr[-15:])
        raise verdicts.ServerFault(f"could not initialize the server under test: {exc!r}\n"
                                   f"server stderr (tail):\n{tail}") from exc
    yield sdk
    sdk.close()


@pytest.fixture(scope="session")
def names(client, profile: contracts.Profile) -> ParameterNames:
    """The server's names for the parameters the profile drives (declared, default or found)."""
    return ParameterNames(profile, client.list_tools())


@pytest.fixture(autouse=True)
def _canary_guard(request: pytest.FixtureRequest):
    """After every suite test, scan what every server wrote since the last scan for canary
    tokens (so output of module-scoped fixtures is scanned too, after the first test using it)."""
    if not _is_suite_item(request.node) or "contract_fixture" not in request.fixturenames:
        yield
        return
    factory: ServerFactory = request.getfixturevalue("servers")
    fixture = request.getfixturevalue("contract_fixture")
    profile: contracts.Profile = request.getfixturevalue("profile")
    yield
    findings = []
    for srv in factory.started:
        mark = srv.transcript.mark()
        out, err = srv.transcript.since(getattr(srv, "rc_scanned", (0, 0, 0)))
        srv.rc_scanned = mark
        for req, leak in canaries.scan_output(out, fixture.canaries, profile.output_canaries,
                                              srv.sent_params, profile.echo_allowed):
            culprit = _request_of(srv, leak.request_id)
            owned = request.node.stash.get(BLAMED, set()) | verdicts.requests_judged_elsewhere()
            if leak.cls != "outside" or culprit is None or culprit not in owned:
                findings.append(Finding(req, f"server output leaked: {leak}", request=culprit))
        rules = profile.leak_requirements("stderr")
        for leak in canaries.scan_lines(err, fixture.canaries, "stderr", rules):
            findings.append(Finding(rules[leak.cls], f"server log leaked: {leak}"))
    if findings:
        raise RequirementFailure(findings)
