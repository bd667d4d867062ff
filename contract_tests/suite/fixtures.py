"""The fixtures every suite test uses (a pytest plugin the suite's plugin loads): the run's
state and profile, the profile's synthetic data, the servers started on it, a client, and
the parameter names; each server's last output, redacted, is kept for the report."""

from __future__ import annotations

from typing import Any

import pytest

from contract_tests.contracts import specs as contracts
from contract_tests.implementation.calls import Calls
from contract_tests.implementation.names import ParameterNames
from contract_tests.implementation.sessions import OWN_SERVER, OwnServers, ServerFactory
from contract_tests.implementation.state import FIXTURE_TOKENS, STATE, SuiteState
from contract_tests.suite.items import is_worker
from contract_tests.synthetic import canaries
from contract_tests.synthetic.fixtures import build_for
from contract_tests.transport import limits
from contract_tests.transport.sdk import SdkClient
from contract_tests.transport.stdio import Connection
from contract_tests.verdicts import findings as verdicts

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
    fixture = build_for(profile, tmp_path_factory.mktemp("rc"), suite.fixture_settings())
    if profile.data.get("mapped"):
        # GF-WRITE-001 compares with the fixture as built: any server the run starts on it (the
        # MCP base tests' before the sweep's) may write when it starts
        fixture.as_built = fixture.snapshot()
    pytestconfig.stash[FIXTURE_TOKENS] = dict(fixture.canaries)
    yield fixture
    close = getattr(fixture, "close", None)
    if close:
        close()


@pytest.fixture(scope="session")
def servers(suite: SuiteState, tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config):
    factory = ServerFactory(suite, tmp_path_factory.mktemp("homes"))
    yield factory
    factory.close_all()
    fixture = pytestconfig.stash.get(FIXTURE_TOKENS, {})
    logs = [server_log(srv, fixture) for srv in factory.started if getattr(srv, "argv", None)]
    suite.server_logs.extend(logs)
    if is_worker(pytestconfig):
        pytestconfig.workeroutput["rc_server_logs"] = suite.server_logs


@pytest.fixture(scope="session")
def own_servers(servers: ServerFactory, suite: SuiteState) -> OwnServers:
    """Processes the suite starts itself with settings of its own. A test that asks for this
    fixture, itself or through its fixtures, is deselected under --server-url at collection; one
    that asks for it only on some path (request.getfixturevalue) is skipped there, same reason."""
    if suite.server_url:
        pytest.skip(OWN_SERVER)
    return OwnServers(servers)


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


@pytest.fixture(scope="session")
def calls(server: Connection, names: ParameterNames, profile: contracts.Profile) -> Calls:
    """Tool calls on the worker's server in the profile's names (a profile folder may give its own)."""
    return Calls(server, profile, names)
