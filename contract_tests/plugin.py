"""The pytest plugin (entry point `pytest11`): options, markers, requirement ids, profile
selection, expectations, reports and the fixtures every suite test uses."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from . import contracts
from .expectations import Expectations, ExpectationsError
from .harness import canaries
from .harness.process import private_environment, render_command
from .harness.sdk import SdkClient
from .harness.http import HttpServer, free_port
from .harness.stdio import Connection, ServerGone, StdioServer
from .harness.fixtures import build_for
from .harness.vault import Fixture
from .report import ReportCollector

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
    only_reqs: set[str] = field(default_factory=set)
    cited: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)  # nodeid -> (ids, tiers)

    @property
    def command(self) -> str:
        return self.server_cmd or self.profile.reference_command(self.transport)

    @property
    def target(self) -> str:
        if self.server_url:
            return f"running server at {self.server_url}"
        return self.server_cmd or f"bundled reference ({self.profile.reference_command(self.transport)})"


STATE = pytest.StashKey[SuiteState]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("retrieval-contract", "retrieval-contract conformance suite")
    group.addoption("--profile", default=None,
                    help=f"profile to check (default: ini rc_profile, else {DEFAULT_PROFILE})")
    group.addoption("--server-cmd", default=None,
                    help="command that starts the server under test; placeholders: {python} (this "
                         "interpreter), {port} (HTTP) and the profile's own ({vault}; {docs_root}, {code_root}, {root})")
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
    group.addoption("--expectations", default=None, help="YAML file of known failures by requirement id")
    group.addoption("--report", default=None, help="directory for results.json, results.md and junit.xml")
    group.addoption("--req", default=None, help="comma-separated requirement ids: run only tests citing them")
    parser.addini("rc_profile", "default profile for the retrieval-contract suite", default=DEFAULT_PROFILE)


def _is_suite_item(item: pytest.Item) -> bool:
    return SUITE_DIR in Path(str(item.path)).resolve().parents


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for tier in contracts.TIERS:
        config.addinivalue_line("markers", f"{tier}: retrieval-contract tier {tier}")
    config.addinivalue_line("markers", "req(*ids): requirement ids a test proves")
    config.addinivalue_line("markers", "profiles(*ids): profiles a suite module applies to")
    profile_id = config.getoption("--profile") or config.getini("rc_profile")
    try:
        profile = contracts.load_profile(profile_id)
    except KeyError:
        raise pytest.UsageError(
            f"unknown profile {profile_id!r}; available: {', '.join(contracts.available_profiles())}")
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
        expectations = Expectations.load(config.getoption("--expectations"), profile_id)
    except ExpectationsError as exc:
        raise pytest.UsageError(str(exc))
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
    config.stash[STATE] = SuiteState(
        profile=profile, transport=transport, server_cmd=server_cmd, server_path=config.getoption("--server-path"),
        phase=phase, expectations=expectations, only_reqs=only, server_url=server_url,
        canister_port=config.getoption("--canister-port"))
    report_dir = config.getoption("--report")
    if report_dir:
        Path(report_dir).mkdir(parents=True, exist_ok=True)
        if not getattr(config.option, "xmlpath", None):
            config.option.xmlpath = str(Path(report_dir) / "junit.xml")
        if not hasattr(config, "workerinput"):
            config.pluginmanager.register(ReportCollector(config, config.stash[STATE], Path(report_dir)),
                                          "retrieval-contract-report")


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
    if profile.fixture_kind == "canister":
        if not os.environ.get("RC_JWT_SECRET"):
            raise pytest.UsageError("--server-url: set RC_JWT_SECRET to the secret the running server verifies tokens with")
        if not config.getoption("--canister-port"):
            raise pytest.UsageError("--server-url: give --canister-port, the loopback port of the canister URL "
                                    "the running server was configured with")
        if getattr(config.option, "numprocesses", None) not in (None, 0):
            raise pytest.UsageError("--server-url: run without -n (one canister double on --canister-port)")
    else:
        raise pytest.UsageError(f"--server-url: profile {profile.id} reads local files the suite creates; "
                                "use --server-cmd")


def pytest_report_header(config: pytest.Config) -> list[str]:
    state = config.stash.get(STATE, None)
    if state is None or not any("contract_tests" in str(arg) for arg in config.args):
        return []
    lines = [f"retrieval-contract: profile {state.profile.id}, transport {state.transport}, "
             f"{len(state.profile.requirements)} requirements",
             f"retrieval-contract: target {state.target}"]
    if state.phase:
        lines.append(f"retrieval-contract: phase {state.phase}")
    lines.append(f"retrieval-contract: server {_probe_server_info(state)}")
    if state.expectations.source:
        lines.append(f"retrieval-contract: expectations {state.expectations.source} "
                     f"({len(state.expectations.failures)} known failures)")
    return lines


def _probe_server_info(state: SuiteState) -> str:
    """Start the target once on an empty vault and describe what initialize says."""
    with tempfile.TemporaryDirectory(prefix="rc-probe-") as tmp:
        fixture = build_for(state.profile, Path(tmp), _fixture_settings(state))
        try:
            try:
                server = connect(state, fixture, Path(tmp))
            except (OSError, ServerGone) as exc:
                return f"could not start ({getattr(exc, 'strerror', None) or exc})"
            try:
                response = server.initialize()
            except Exception as exc:  # noqa: BLE001 - the header only reports
                return f"did not answer initialize ({type(exc).__name__})"
            finally:
                server.close(timeout=3)
        finally:
            if hasattr(fixture, "close"):
                fixture.close()
    result = response.get("result") or {}
    info = result.get("serverInfo", {})
    caps = ", ".join(sorted(result.get("capabilities", {}))) or "none"
    return (f"{info.get('name', '?')} {info.get('version', '?')}, protocol {result.get('protocolVersion', '?')}, "
            f"capabilities: {caps}")


def item_requirements(item: pytest.Item) -> list[str]:
    return [req for mark in item.iter_markers("req") for req in mark.args]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[STATE]
    known = contracts.all_requirement_ids()
    keep, drop, problems = [], [], []
    for item in items:
        if not _is_suite_item(item):
            keep.append(item)
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
        if not any(state.profile.applies(r, state.transport, state.phase) for r in ids) or (
                state.only_reqs and not state.only_reqs & set(ids)):
            drop.append(item)
            continue
        item.user_properties.append(("requirements", ids))
        expected = [r for r in ids if r in state.expectations.failures]
        if expected:
            reason = "; ".join(f"{r}: {state.expectations.failures[r]}" for r in expected)
            item.add_marker(pytest.mark.xfail(reason=f"expected failure ({reason})", strict=True))
        keep.append(item)
    cited_ids = {r for ids, _tiers in state.cited.values() for r in ids}
    problems += [f"stale expectation {p}" for p in
                 state.expectations.stale(set(state.profile.requirements), cited_ids)]
    if problems:
        raise pytest.UsageError("retrieval-contract suite is inconsistent:\n  " + "\n  ".join(problems))
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


# --- fixtures --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def suite(pytestconfig: pytest.Config) -> SuiteState:
    return pytestconfig.stash[STATE]


@pytest.fixture(scope="session")
def profile(suite: SuiteState) -> contracts.Profile:
    return suite.profile


def session_headers(fixture: Any, token: str | None = None) -> dict[str, str]:
    """HTTP headers a session on `fixture` needs (a bearer token for hosted fixtures)."""
    make = getattr(fixture, "session_headers", None)
    return make(token) if make else {}


def connect(suite: SuiteState, fixture: Any, home: Path, *, command: str | None = None,
            extra: dict[str, str] | None = None, token: str | None = None) -> Connection:
    """Start the target for `fixture` over the suite's transport and return the connection.

    With --server-url nothing is started: a new session on the running server is returned.
    """
    headers = session_headers(fixture, token)
    if suite.server_url:
        return HttpServer(suite.server_url, headers=headers)
    port = str(free_port()) if suite.transport == "http" else ""
    values = {**fixture.placeholders(), "port": port, "phase": suite.phase or "", **(extra or {})}
    argv = render_command(command or suite.command, values)
    env = private_environment(home) | suite.profile.environment(values)
    if suite.transport == "http":
        return HttpServer(f"http://127.0.0.1:{port}{suite.server_path}", argv, env=env, cwd=home, headers=headers)
    return StdioServer(argv, env=env, cwd=home)


class ServerFactory:
    """Starts servers for the profile's command; remembers them for leak scans and cleanup."""

    def __init__(self, suite: SuiteState, base: Path) -> None:
        self.suite = suite
        self.base = base
        self.started: list[StdioServer] = []
        self._homes = 0

    def fresh_home(self) -> Path:
        self._homes += 1
        home = self.base / f"server-home-{self._homes}"
        home.mkdir(parents=True)
        private_environment(home)  # creates HOME, XDG and TMPDIR before any snapshot
        return home

    def start(self, fixture: Any, *, home: Path | None = None, command: str | None = None,
              extra: dict[str, str] | None = None, token: str | None = None) -> Connection:
        if self.suite.server_url and (command or extra):
            pytest.skip("needs a server the suite starts with its own settings (--server-cmd), "
                        "not the running one at --server-url")
        home = home or self.fresh_home()
        server = connect(self.suite, fixture, home, command=command, extra=extra, token=token)
        self.started.append(server)
        return server

    def session(self, server: Connection, fixture: Any, token: str | None = None) -> HttpServer:
        """Another session on the same running HTTP server, with its own (or the default) token."""
        assert isinstance(server, HttpServer), "sessions are an HTTP notion"
        attached = HttpServer(server.url, headers=session_headers(fixture, token))
        self.started.append(attached)
        return attached

    @property
    def can_restart(self) -> bool:
        return not self.suite.server_url

    def close_all(self) -> None:
        for server in self.started:
            if server.alive():
                server.close(timeout=3)


@pytest.fixture(scope="session")
def contract_fixture(tmp_path_factory: pytest.TempPathFactory, profile: contracts.Profile, suite: SuiteState):
    """The profile's synthetic data (a vault, docs and code roots, or a canister double), built
    once per worker."""
    fixture = build_for(profile, tmp_path_factory.mktemp("rc"), _fixture_settings(suite))
    yield fixture
    close = getattr(fixture, "close", None)
    if close:
        close()


def _fixture_settings(suite: SuiteState) -> dict[str, Any]:
    if not suite.server_url:
        return {}
    return {"port": suite.canister_port, "jwt_secret": os.environ.get("RC_JWT_SECRET"),
            "gateway_secret": os.environ.get("RC_GATEWAY_SECRET", "")}


@pytest.fixture(scope="session")
def fixture_vault(contract_fixture) -> Fixture:
    return contract_fixture


@pytest.fixture(scope="session")
def fixture_roots(contract_fixture):
    return contract_fixture


@pytest.fixture(scope="session")
def servers(suite: SuiteState, tmp_path_factory: pytest.TempPathFactory):
    factory = ServerFactory(suite, tmp_path_factory.mktemp("homes"))
    yield factory
    factory.close_all()


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
        pytest.fail(f"could not initialize the server under test: {exc!r}\nserver stderr (tail):\n{tail}")
    yield sdk
    sdk.close()


@pytest.fixture(autouse=True)
def _canary_guard(request: pytest.FixtureRequest):
    """After every suite test, scan what every server wrote during it for canary tokens."""
    if not _is_suite_item(request.node) or "contract_fixture" not in request.fixturenames:
        yield
        return
    factory: ServerFactory = request.getfixturevalue("servers")
    fixture = request.getfixturevalue("contract_fixture")
    profile: contracts.Profile = request.getfixturevalue("profile")
    marks = {id(s): s.transcript.mark() for s in factory.started}
    yield
    leaks, reqs = [], set()
    for srv in factory.started:
        for channel, lines in zip(("stdout", "stderr"), srv.transcript.since(marks.get(id(srv), (0, 0, 0)))):
            rules = profile.leak_requirements(channel)
            found = canaries.scan_lines(lines, fixture.canaries, channel, rules)
            leaks += found
            reqs |= {rules[leak.cls] for leak in found}
    if leaks:
        reqs = sorted(reqs)
        request.node.user_properties.append(("leak_requirements", reqs))
        pytest.fail("[" + ", ".join(reqs) + "] server output leaked: " + "; ".join(map(str, leaks[:5])),
                    pytrace=False)
