"""Sessions for the open-notebook checks: the worker's long-lived session (tests enter what
they need first: context is session state), new sessions where a new session is the point,
and one walk through every tool whose responses several checks read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from contract_tests.implementation.calls import call_wait
from contract_tests.open_notebook.common import Session, as_failure
from contract_tests.verdicts.checks import called_ok, tool_output
from contract_tests.verdicts.findings import RequirementFailure
from contract_tests.verdicts.running import own

MAX_CHUNKS = 200


@pytest.fixture(scope="session")
def notebooks(contract_fixture):
    return contract_fixture


@pytest.fixture(scope="session")
def main(server, client, profile, notebooks) -> Session:
    """The worker's shared session (initialized by the SDK client)."""
    return Session(server, profile, notebooks)


@pytest.fixture
def new_session(request, servers, server, client, notebooks, suite, profile):
    """Make a new, initialized session: over HTTP another session on the shared server; over
    stdio a new server process; with a home, fixture or settings of its own a server of its own."""
    made: list[Any] = []

    def make(*, home=None, fixture=None, extra=None, process: bool = False) -> Session:
        if suite.transport == "http" and not (home or fixture or extra or process):
            conn = servers.session(server, notebooks)
        elif home or fixture or extra:
            conn = request.getfixturevalue("own_servers").start(fixture or notebooks, home=home, extra=extra)
        else:
            conn = servers.start(notebooks)
        made.append(conn)
        conn.initialize()
        return Session(conn, profile, fixture or notebooks)

    yield make
    for conn in made:
        conn.close(timeout=3)


def pull(session: Session, token: str, *, req: str | None = None) -> list[dict[str, Any]]:
    """Every response of a stream, up to and including the completion response (or until a
    failure, or MAX_CHUNKS)."""
    req = own(req)
    out = []
    for _ in range(MAX_CHUNKS):
        response, _request = session.raw("next_stream_chunk", {"stream_token": token})
        if not called_ok(response):
            break
        body = tool_output(response, req=req)
        out.append(body)
        if not isinstance(body, dict) or body.get("chunk_type") == "stream_complete":
            break
    return out


@dataclass
class Walk:
    """Every call of a tour through the eleven tools on the active collection, with its raw response."""
    calls: list[tuple[str, dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    blocker: str | None = None  # why the tour could not enter the active collection (a requirement id)

    def successes(self, tool: str | None = None) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        return [(t, a, r) for t, a, r in self.calls if (tool is None or t == tool) and called_ok(r)]


class _Recording:
    """A connection that records every tools/call it makes."""

    def __init__(self, conn, walk: Walk) -> None:
        self.conn, self.walk = conn, walk

    def call_tool(self, name, arguments, timeout=None):
        response = as_failure(self.conn.call_tool(name, arguments, timeout=timeout or call_wait()))
        self.walk.calls.append((name, arguments, response))
        return response


@pytest.fixture(scope="session")
def walk(server, client, profile, notebooks) -> Walk:
    """The tour: the context-free tools, enter the active collection, list its artifact sets,
    find every notable passage (search and fetch), retrieve every listed artifact, explain a
    source and every artifact, search with the default k, and pull one stream to its end. A
    step that fails is recorded and the tour goes on."""
    record = Walk()
    session = Session(_Recording(server, record), profile, notebooks)
    for tool in ("describe_world", "list_constraints", "list_collections"):
        session.raw(tool, {})
    try:
        session.enter("active", req="ON-SHAPE-001")
    except RequirementFailure as failure:
        record.blocker = failure.findings[0].by
    steps = [lambda: session.artifact_map("active", req="ON-SHAPE-001")]
    for passage in notebooks.collection("active").passages:
        steps.append(lambda p=passage: session.find("active", p, req="ON-SHAPE-001"))
    for step in steps:
        try:
            step()
        except RequirementFailure:
            continue
    for found in list(session.found.values())[:2]:
        session.raw("explain_provenance", {"id": found.source_id, "id_type": "source"})
    for wire in session.artifacts.get("active", {}):
        session.raw("explain_provenance", {"id": wire, "id_type": "artifact"})
    session.raw("semantic_search", {"query": "the tide and the current"})
    response, _ = session.raw("begin_result_stream", {"query": notebooks.collection("active").passage("probe").exact_text})
    if called_ok(response):
        token = (tool_output(response, req="ON-SHAPE-001") or {}).get("stream_token")
        if isinstance(token, str):
            pull(session, token, req="ON-SHAPE-001")
    return record
