"""The pytest plugin (entry point `pytest11`): options, markers, the run's state, the preflight,
collection (requirement ids, tiers, profiles, --req, --shard) and the run's header; it loads
the suite's fixtures (suite_fixtures), the verdicts of each test (judging) and the report."""

from __future__ import annotations

import importlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from contract_tests.contracts import mapping
from contract_tests.contracts import specs as contracts
from contract_tests.implementation import preflight as preflight_mod
from contract_tests.implementation.options import DEFAULT_PROFILE, add_options, get
from contract_tests.implementation.state import DECLARED, STATE, SuiteState, configure_state
from contract_tests.reports.collector import ReportCollector
from contract_tests.suite import items as items_mod
from contract_tests.suite.items import case_of, is_suite_item, is_worker, item_requirements
from contract_tests.transport import limits, progress
from contract_tests.transport.stdio import protocol_version, use_protocol_version
from contract_tests.verdicts.findings import EXIT_SERVER_UNUSABLE

pytest_plugins = ["contract_tests.suite.fixtures", "contract_tests.suite.judging"]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)
    parser.addini("rc_profile", "default profile for the retrieval-contract suite", default=DEFAULT_PROFILE)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for tier in contracts.TIERS:
        config.addinivalue_line("markers", f"{tier}: retrieval-contract tier {tier}")
    config.addinivalue_line("markers", "req(*ids): requirement ids a test proves")
    config.addinivalue_line("markers", "profiles(*ids): profiles a suite module applies to")
    config.addinivalue_line("markers", "inapplicable: a concern test the profile does not configure (dropped)")
    limits.configure(get(config, "--request-timeout"), get(config, "--max-message-bytes"),
                     get(config, "--run-budget"), get(config, "--command-timeout"))
    shared = getattr(config, "workerinput", {}).get("rc_stop_file")
    if shared:  # an xdist worker: the file in which the run's workers say why it stopped
        os.environ[limits.STOP_FILE] = shared
    state = configure_state(config)
    report_dir = get(config, "--report")
    if report_dir:
        Path(report_dir).mkdir(parents=True, exist_ok=True)
        if not getattr(config.option, "xmlpath", None):
            config.option.xmlpath = str(Path(report_dir) / "junit.xml")
    if not is_worker(config) and _runs_suite(config):
        config.pluginmanager.register(
            ReportCollector(config, state, Path(report_dir) if report_dir else None), "retrieval-contract-report")
        config.pluginmanager.register(Progress(), "retrieval-contract-progress")


class Progress:
    """The console's progress line while the run is quiet (transport/progress.py): started once
    the tests are known, told of every test that ends, stopped before the summary."""

    def __init__(self) -> None:
        self.ticker: progress.Ticker | None = None

    def _start(self, total: int) -> None:
        if self.ticker is None:
            self.ticker = progress.Ticker(total).start()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not getattr(session.config.option, "numprocesses", None):
            self._start(len(session.items))

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self._start(len(ids))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.ticker is not None and report.when == "teardown":
            self.ticker.finished()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()


def _runs_suite(config: pytest.Config) -> bool:
    return any("contract_tests" in str(arg) for arg in config.args)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Preflight on the controlling process, before any worker starts."""
    config = session.config
    state = config.stash.get(STATE, None)
    if state is None or is_worker(config) or not _runs_suite(config) or config.getoption("collectonly"):
        return
    if get(config, "--no-preflight"):
        _share_the_stop(config)
        return
    state.preflight = preflight_mod.run(state, state.fixture_settings())
    limits.HEALTH.reset()  # the preflight's unanswered attempts are its own verdict, not the run's
    _share_the_stop(config)  # after the preflight: its stops are not the run's
    if state.preflight.ok and state.preflight.protocol_version:
        use_protocol_version(state.preflight.protocol_version)
        state.protocol_version = state.preflight.protocol_version
    if state.preflight.ok and state.mapping_source == mapping.AUTO:
        _propose_mapping(config, state)
    if not state.preflight.ok:
        collector = config.pluginmanager.get_plugin("retrieval-contract-report")
        if collector is not None:
            collector.write_unusable(state.preflight)
        pytest.exit(state.preflight.message(), returncode=EXIT_SERVER_UNUSABLE)


def _propose_mapping(config: pytest.Config, state) -> None:
    """--mapping auto: a mapping proposed from the preflight's tools/list, printed for the user to
    review and keep (and written to the report folder); the run goes on with it."""
    from contract_tests.contracts.mapping_auto import propose, render

    from .generic_files.trial import TrialFailed, try_proposal
    proposal = propose(state.preflight.tools)
    server = {"cmd": state.server_cmd} if state.server_cmd else None
    if proposal.mapping["tools"]:
        # The guess is tried before the sweep: the path forms (and tools) the server serves are kept.
        try:
            proposal.mapping, tried = try_proposal(state, proposal.mapping)
        except TrialFailed as exc:
            pytest.exit(f"retrieval-contract: {exc}", returncode=4)
        proposal.notes.extend(tried)
    text = render(proposal, server)
    report_dir = get(config, "--report")
    where = ""
    if report_dir:
        (Path(report_dir) / "mapping.proposed.yaml").write_text(text, encoding="utf-8")
        where = f" (also in {Path(report_dir) / 'mapping.proposed.yaml'})"
    writer = config.get_terminal_writer()
    writer.line(f"retrieval-contract: --mapping auto proposes{where}:")
    for line in text.splitlines():
        writer.line(f"    {line}")
    try:
        state.mapping = mapping.validate({**proposal.mapping, **({"server": server} if server else {})}, "auto")
    except mapping.MappingError as exc:
        pytest.exit(f"retrieval-contract: --mapping auto could not propose a usable mapping: {exc}\n"
                    "Write one (schemas/mapping.schema.json) and run with --mapping FILE.", returncode=4)
    state.profile = mapping.applied(state.profile, state.mapping)


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
    state = node.config.stash.get(STATE, None)
    if state is not None and state.mapping_source == mapping.AUTO and state.mapping:
        node.workerinput["rc_mapping"] = state.mapping  # the proposal the controller printed
    node.workerinput["rc_stop_file"] = os.environ.get(limits.STOP_FILE, "")


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist under `--dist load` (what `-n N` gives): a mapped profile's tests that read the one
    sweep of the server (a session fixture) go to one worker together, so the server is swept once,
    not once per worker; every other test is handed out one by one. (xdist's own `loadgroup` marks
    no longer work with pytest 9: they rename the test id, which pytest 9 no longer reads.)"""
    state = config.stash.get(STATE, None)
    if state is None or not state.profile.data.get("mapped") or config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SweepOnce(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return SWEEP_GROUP if nodeid.startswith(SWEEP_MODULE) else nodeid

    return SweepOnce(config, log)


SWEEP_MODULE = "contract_tests/generic_files/test_files.py::"
SWEEP_GROUP = "generic-files sweep"


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
    if state.mapping_source:
        tools = ", ".join(f"{t['name']} ({t['role']})" for t in (state.mapping or {}).get("tools", []))
        lines.append(f"retrieval-contract: mapping {state.mapping_source}: paths {(state.mapping or {}).get('paths')}, "
                     f"tools {tools or 'to be proposed'}")
    if config.stash.get(DECLARED, None):
        lines.append(f"retrieval-contract: declaration {config.stash.get(DECLARED, None)} "
                     f"({', '.join(k for k in contracts.DECLARATION if k != 'profile')})")
    for note in state.notes:
        lines.append(f"retrieval-contract: NOTE: {note}")
    if state.expectations.source:
        lines.append(f"retrieval-contract: expectations {state.expectations.source} "
                     f"({len(state.expectations.failures)} known failures)")
    return lines


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A profile folder of the suite (its `PROFILES`) is not collected by another profile's run:
    its modules are not even imported."""
    state = config.stash.get(STATE, None)
    if state is None or collection_path.parent != items_mod.SUITE_DIR or not collection_path.is_dir():
        return None
    init = collection_path / "__init__.py"
    if not init.is_file():
        return None
    profiles = getattr(importlib.import_module(f"{__package__}.{collection_path.name}"), "PROFILES", None)
    return True if profiles is not None and state.profile.id not in profiles else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[STATE]

    def known(req: str) -> bool:
        return req in state.profile.requirements or req in contracts.all_requirement_ids()
    keep, drop, problems = [], [], []
    for item in items:
        if not is_suite_item(item):
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
            if not known(req):
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
        if state.server_url and "own_servers" in getattr(item, "fixturenames", ()):
            state.own_server_deselected.append(item.nodeid)  # counted as deselected, with OWN_SERVER
            drop.append(item)
            continue
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
            case = case_of(item)
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
    if is_worker(session.config):
        session.config.workeroutput["rc_collection"] = {
            "applicable": state.applicable, "selected": sorted(state.selected & set(state.applicable)),
            "sharded_out": sorted(state.sharded_out), "own_server": state.own_server_deselected}


# --- verdicts ---------------------------------------------------------------------------

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker hands the controller why it stopped talking to the server, if it did (the
    breaker, or a connection that stopped answering before a request it was then refused)."""
    if is_worker(session.config) and limits.HEALTH.reasons():
        session.config.workeroutput["rc_stopped"] = limits.HEALTH.reasons()


