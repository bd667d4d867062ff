"""Side effects, for every profile: no network connection over the server's process tree, no
file written in its HOME, XDG or temporary directories after start-up, the fixture unchanged
by a full run, edits visible in the next call, and repeated calls identical."""

from __future__ import annotations

import json
import secrets
import threading
import time
from pathlib import Path

import pytest

from contract_tests.concerns.common import (
    failing_calls,
    item_values,
    pick,
    render,
    require_sweep,
    run,
    strip_volatile,
    sweep_calls,
)
from contract_tests.implementation.shared import Once
from contract_tests.synthetic.adapter import snapshot, snapshot_diff
from contract_tests.transport.system import SocketWatch, needs_proc, own_ports, process_tree
from contract_tests.verdicts.checks import called_ok, json_pointer, short, tool_output
from contract_tests.verdicts.findings import Findings, blocked, describe_call, esc


def _one(profile, key):
    spec = profile.concerns.get(key)
    return [(spec["req"], spec, spec["req"])] if spec else []


class Observed:
    """What one server did through a whole sweep, observed at once for the three side-effect
    tests: the suite starts it on a private copy of the fixture (snapshotted before the start)
    with a fresh HOME, XDG and TMPDIR (snapshotted once start-up settled), samples the sockets
    of its process tree while every sweep call and every failing call runs, closes it, and
    takes both snapshots again. Each test judges its own part, under its own requirement (one
    observation per worker: implementation/shared.py)."""

    def __init__(self, servers, contract_fixture, profile, names, tmp_path_factory) -> None:
        fixture = type(contract_fixture).build(profile, tmp_path_factory.mktemp("observed"),
                                               contract_fixture.settings)
        try:
            self.canaries = dict(fixture.canaries)
            before_fixture = fixture.snapshot()
            self.home = servers.fresh_home()
            srv = servers.launch(fixture, home=self.home)
            self.sampled = Path("/proc/self/fd").is_dir()
            watch = SocketWatch(own_ports(srv), tuple(fixture.allowed_ports()))
            self.sockets = watch.found
            done = threading.Event()

            def sample() -> None:
                while not done.is_set():
                    for pid in process_tree(srv.pid):
                        try:
                            watch.sample(pid)
                        except OSError:
                            continue  # the process ended meanwhile
                    time.sleep(0.005)

            sampler = threading.Thread(target=sample, daemon=True)
            try:
                srv.initialize()
                time.sleep(0.2)  # let start-up settle: what a server writes while starting is its own affair
                before_home = snapshot(self.home)
                if self.sampled:
                    sampler.start()
                self.responses = run(srv, sweep_calls(profile, fixture, names) + failing_calls(profile, fixture,
                                                                                                 names))
            finally:
                done.set()
                if sampler.is_alive():
                    sampler.join(timeout=2)
                srv.close(timeout=5)
            self.home_changes = snapshot_diff(before_home, snapshot(self.home))
            self.fixture_changes = fixture.changes(before_fixture)
        finally:
            fixture.close()


@pytest.fixture(scope="session")
def observed(servers, contract_fixture, profile, names, tmp_path_factory) -> Once[Observed]:
    return Once(lambda: Observed(servers, contract_fixture, profile, names, tmp_path_factory))


def cases_test_the_server_opens_no_network_connection(profile):
    return _one(profile, "network")


@needs_proc
def test_the_server_opens_no_network_connection(case, own_servers, observed, profile):
    """Sockets of the server and its child processes, sampled while calls run; the fixture's
    own endpoints (an upstream double) and the server's own HTTP port are allowed. (Asking for
    own_servers deselects it under --server-url, as the home test: the suite starts the server.)"""
    req = case["req"]
    seen = observed.get()
    with Findings() as findings:
        findings.check(not seen.sockets, f"the server held network sockets: {sorted(seen.sockets)[:5]}", req=req)
    require_sweep(req, profile, seen.responses)  # no socket proves little if the sweep reached nothing


def cases_test_nothing_is_written_in_home_xdg_or_temp_after_start_up(profile):
    spec = profile.concerns.get("home")
    return [([spec["req"], spec["files"]] if spec.get("files") else spec["req"], spec, spec["req"])] if spec else []


def _records(home, changes, tokens):
    """The new or changed files under `home` that hold one of `tokens` (a record of served data)."""
    found = []
    for change in changes:
        kind, _, rel = change.partition(": ")
        path = home / rel
        if kind == "removed" or not path.is_file() or path.is_symlink():
            continue
        try:
            data = path.read_bytes()[:20_000_000].lower()
        except OSError:
            continue
        if any(token.encode("utf-8") in data for token in tokens):
            found.append(change)
    return found


def test_nothing_is_written_in_home_xdg_or_temp_after_start_up(case, own_servers, observed, profile):
    """With `files` in the spec, only a file holding served data (a canary of `records`) is the
    requirement's finding, and any other file the advisory's; without it, every file is."""
    req = case["req"]
    seen = observed.get()
    changes, home = seen.home_changes, seen.home
    with Findings() as findings:
        if case.get("files"):
            tokens = [seen.canaries[c].lower() for c in case.get("records", ()) if c in seen.canaries]
            records = _records(home, changes, tokens)
            inside = [r.partition(": ")[2] for r in records]
            others = [c for c in changes if c not in records  # not the directories records sit in
                      and not any(r.startswith(c.partition(": ")[2] + "/") for r in inside)]
            findings.check(not records, f"{len(records)} file(s) in HOME/XDG/TMPDIR written after start-up "
                           f"hold served data: {records[:5]}", req=req)
            findings.check(not others, f"{len(others)} change(s) in HOME/XDG/TMPDIR after "
                           f"start-up: {others[:5]}", req=case["files"])
        else:
            findings.check(not changes, f"{len(changes)} change(s) in HOME/XDG/TMPDIR after start-up: "
                           f"{changes[:5]}", req=req)
    require_sweep(req, profile, seen.responses)


def cases_test_a_full_run_leaves_the_fixture_unchanged(profile):
    return _one(profile, "unchanged")


def test_a_full_run_leaves_the_fixture_unchanged(case, servers, contract_fixture, profile, suite, names, request):
    """A private fixture, snapshotted before the server starts and after every tool ran on
    every item and every failing call (the observation the side-effect tests share); with
    --server-url, the shared fixture and a new session on the running server."""
    req = case["req"]
    if suite.server_url:
        before = contract_fixture.snapshot()
        srv = servers.start(contract_fixture)
        srv.initialize()
        try:
            responses = run(srv, sweep_calls(profile, contract_fixture, names)
                            + failing_calls(profile, contract_fixture, names))
        finally:
            srv.close(timeout=5)
        changes = contract_fixture.changes(before)
    else:
        seen = request.getfixturevalue("observed").get()
        changes, responses = seen.fixture_changes, seen.responses
    with Findings() as findings:
        findings.check(not changes, f"{len(changes)} change(s) to the fixture: {changes[:5]}", req=req)
    require_sweep(req, profile, responses)


def cases_test_an_edit_shows_in_the_next_call(profile):
    return _one(profile, "edit")


def test_an_edit_shows_in_the_next_call(case, server, client, contract_fixture, profile, names):
    req, item = case["req"], case["item"]
    first, second = f"rcfirst{secrets.token_hex(4)}", f"rcsecond{secrets.token_hex(4)}"
    with Findings() as findings:
        outputs = []
        for token in (first, second):
            contract_fixture.write(item, render(case["text"], {"token": token}))
            args = names.args(case["call"]["tool"], render(case["call"]["arguments"], {**item_values(item), "token": token}))
            response = server.call_tool(case["call"]["tool"], args)
            request = describe_call(case["call"]["tool"], args)
            if not called_ok(response):
                findings.fail(f"the call on the edited item did not succeed: {short(response, 200)}", req=req,
                              request=request)
                return
            outputs.append((json.dumps(tool_output(response, req=req)), request))
        findings.check(first in outputs[0][0], "the first call does not show the item as written", req=req,
                       request=outputs[0][1])
        findings.check(second in outputs[1][0] and first not in outputs[1][0],
                       "after an edit the next call does not show the edited item (output kept between calls?)",
                       req=req,
                       request=outputs[1][1])


def cases_test_repeated_calls_on_unchanged_data_are_identical(profile):
    spec = profile.concerns.get("repeat")
    if not isinstance(spec, list):
        return _one(profile, "repeat")
    return [(case["req"], case, f"{case['req']}-{case['call']['tool']}") for case in spec]


def test_repeated_calls_on_unchanged_data_are_identical(case, server, client, servers, contract_fixture, profile,
                                                       names):
    """The call `times` times on the worker's server (after the case's setup calls), and with
    `sessions: 2` once more on a new session: every output the same, volatile fields aside (or
    only the fields the case compares)."""
    req = case["req"]
    times = int(case.get("times", profile.limits.get("repeat_calls", 100)))
    values = contract_fixture.call_values()
    tool = case["call"]["tool"]
    args = names.args(tool, render(case["call"]["arguments"], values))
    request = describe_call(tool, args)
    volatile = list(case.get("volatile", profile.data.get("sample_call", {}).get("volatile", [])))

    def output(conn) -> str:
        response = conn.call_tool(tool, args)
        if not called_ok(response):
            with Findings() as findings:
                findings.fail(f"a repeated call did not succeed: {short(response, 200)}", req=req, request=request)
        body = strip_volatile(tool_output(response, req=req), volatile)
        return json.dumps(pick(body, case["compare"]) if "compare" in case else body, sort_keys=True)

    _set_up(server, case, names, values, req)
    first = output(server)
    _nonempty(first, case, req, request)
    outputs = {first: 1}
    for _ in range(times - 1):
        text = output(server)
        outputs[text] = outputs.get(text, 0) + 1
    with Findings() as findings:
        findings.check(len(outputs) == 1, f"{times} identical calls gave {len(outputs)} different outputs "
                       f"(counts {sorted(outputs.values(), reverse=True)[:5]}): first differs by "
                       f"{esc(_first_diff(list(outputs)), 200)}", req=req, request=request)
        if case.get("sessions", 1) > 1:
            other = servers.handshake(contract_fixture)
            try:
                other.initialize()
                _set_up(other, case, names, values, req)
                again = output(other)
            finally:
                other.close(timeout=3)
            findings.check(again == first, "the same call on another session gave another output: first differs "
                           f"by {esc(_first_diff([first, again]), 200)}", req=req, case="another-session",
                           request=request)


def _set_up(conn, case, names, values, req: str) -> None:
    """The case's setup calls; one that fails blocks `req` by the requirement it names."""
    for call in case.get("setup", []):
        args = names.args(call["tool"], render(call["arguments"], values))
        response = conn.call_tool(call["tool"], args)
        if not called_ok(response):
            raise blocked(f"the setup call failed (see {call['by']}): {short(response, 200)}", req=req,
                          by=call["by"], request=describe_call(call["tool"], args))


def _nonempty(first: str, case, req: str, request: str) -> None:
    """A first output whose list at the case's pointer is empty proves no repeat: blocked."""
    want = case.get("nonempty")
    if not want:
        return
    try:
        found = json_pointer(json.loads(first), want["pointer"])
    except KeyError:
        found = None
    if not found:
        raise blocked(f"the call found nothing at {want['pointer']} (see {want['by']}): the same nothing twice "
                      f"proves nothing", req=req, by=want["by"], request=request)


def _first_diff(texts: list[str]) -> str:
    if len(texts) < 2:
        return ""
    a, b = texts[0], texts[1]
    i = next((n for n, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"...{a[max(0, i - 40):i + 40]} | ...{b[max(0, i - 40):i + 40]}"
