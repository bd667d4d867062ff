"""vault-agent mcp (stdio): starting without a vault or an index, shutting down on stdin close
or SIGTERM with calls in flight, stdout for JSON-RPC only, mcp.enabled ignored, no --transport."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import threading
import time

import pytest

from contract_tests.transport.stdio import initialize_message
from contract_tests.vault_agent.common import (
    OLDEST_VERSION,
    TOOLS,
    error_code_of,
    per_requirement,
    profiles_mark,
    rpc_error,
    scan_own,
    sweep_verdict,
    wait_for,
)
from contract_tests.verdicts.checks import called_ok, short
from contract_tests.verdicts.findings import Findings, describe_call

pytestmark = profiles_mark


def _calls(ids) -> dict[str, dict]:
    note = ids.notes.get("alpha", "0" * 32)
    return {"search": {"query": "tokalpha"}, "get_note": {"noteId": note},
            "get_chunk": {"noteId": note, "chunkIndex": 0},
            "get_attachment": {"vaultRelativePath": "attachments/pic.png"},
            "related": {"type": "note", "id": note}}


def _started(own_servers, suite, fixture, values_list):
    """Start several stdio servers side by side and initialize each."""
    started = [own_servers.start_stdio(fixture, values=values) for values in values_list]
    answers: list[dict] = [{} for _ in started]

    def init(i: int) -> None:
        answers[i] = started[i].initialize(OLDEST_VERSION, timeout=30)
    threads = [threading.Thread(target=init, args=(i,)) for i in range(len(started))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return list(zip(started, answers))


BARE = ("VA-STDIO-001", "VA-STDIO-002", "VA-STDIO-005", "VA-RO-002")


@pytest.mark.e2e
@per_requirement(*BARE)
def test_without_a_vault_or_an_index_the_server_starts_and_every_tool_fails_actionably(
        req, suite, own_servers, contract_fixture, names, ids, profile, tmp_path_factory):
    sweep_verdict("bare", req, BARE, lambda findings: _bare_sweep(suite, own_servers, contract_fixture, names, ids,
                                                                  profile, tmp_path_factory.mktemp("bare"), findings))


def _bare_sweep(suite, own_servers, contract_fixture, names, ids, profile, tmp_path, findings) -> None:
    absent = tmp_path / "absent-index"
    (no_vault, init_a), (no_index, init_b) = _started(own_servers, suite, contract_fixture, [
        {"vault": "", "index_dir": str(tmp_path / "unused-index")}, {"index_dir": str(absent)}])
    calls = _calls(ids)
    for srv, init, req in ((no_vault, init_a, "VA-STDIO-001"), (no_index, init_b, "VA-STDIO-002")):
        if not findings.check("result" in init, f"initialize failed: {short(init, 160)}", req=req):
            continue
        for tool in TOOLS:
            args = names.args(tool, calls[tool])
            request = describe_call(tool, args)
            response = srv.call_tool(tool, args)
            scan_own(srv, contract_fixture, profile, findings, request, case=tool)
            error = rpc_error(response) or {}
            message = error.get("message")
            if req == "VA-STDIO-001":
                findings.check(error_code_of(response) == "VAULT_NOT_CONFIGURED" and error.get("code") == -32013,
                               f"without a vault: {short(response, 160)}", req=req, case=tool, request=request)
            elif tool in ("search", "related"):
                findings.check(error_code_of(response) == "INDEX_NOT_FOUND" and error.get("code") == -32001,
                               f"without an index: {short(response, 160)}", req=req, case=tool, request=request)
            else:
                findings.check(called_ok(response) or error_code_of(response),
                               f"without an index: neither an answer nor a structured error: "
                               f"{short(response, 160)}", req=req, case=tool, request=request)
                continue
            findings.check(isinstance(message, str) and message.strip(), "the error has no message", req=req,
                           case=tool, request=request)
    for srv in (no_vault, no_index):
        srv.close(timeout=10)
        findings.check(not srv.bad_lines, f"{len(srv.bad_lines)} line(s) on stdout that are not "
                       f"JSON-RPC, first: {short(srv.bad_lines[:1], 120)}", req="VA-STDIO-005")
    created = sorted(p.relative_to(absent).as_posix() for p in absent.rglob("*")) if absent.exists() else []
    findings.check(not created, f"the server created {created[:5]} in the absent index directory", req="VA-RO-002")


@pytest.mark.e2e
@pytest.mark.req("VA-STDIO-005")
def test_stdout_carries_only_json_rpc_while_every_tool_succeeds_and_fails(server, client, names, ids, suite):
    calls = _calls(ids)
    for tool in TOOLS:
        server.call_tool(tool, names.args(tool, calls[tool]))
        server.call_tool(tool, names.args(tool, {}))
    with Findings() as findings:
        findings.check(not server.bad_lines, f"{len(server.bad_lines)} line(s) on stdout that are "
                       f"not JSON-RPC, first: {short(server.bad_lines[:1], 120)}")


def _burst(srv, names) -> list[str]:
    """Searches and 4 MiB downloads, sent without waiting; their ids."""
    sent = []
    for n in range(24):
        tool, args = (("get_attachment", {"vaultRelativePath": "attachments/four.bin", "download": True})
                      if n % 8 == 0 else ("search", {"query": f"tokalpha lantern {n}"}))
        msg_id = f"rc-burst-{n}"
        srv.send({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
                  "params": {"name": tool, "arguments": names.args(tool, args)}})
        sent.append(msg_id)
    return sent


def _answered(srv) -> set[str]:
    return {m["id"] for m in list(srv.unsolicited)
            if isinstance(m, dict) and isinstance(m.get("id"), str) and ("result" in m or "error" in m)}


def _wait_exit(srv, bound: float) -> tuple[int | None, float]:
    """Wait for the process to exit, up to `bound` seconds, noting when its last answer came;
    (exit status or None, seconds from that answer to the exit or to giving up)."""
    last, seen = time.monotonic(), 0
    deadline = time.monotonic() + bound
    while srv.proc.poll() is None and time.monotonic() < deadline:
        count = len(_answered(srv))
        if count != seen:
            seen, last = count, time.monotonic()
        time.sleep(0.02)
    status = srv.proc.poll()
    lingered = time.monotonic() - last
    if status is None:
        srv.close(timeout=5)
    srv._stdout_done.wait(timeout=5)
    return status, lingered


def _close_stdin(srv) -> None:
    srv.proc.stdin.close()


STDIN = ("VA-STDIO-003", "VA-STDIO-004", "VA-STDIO-011")


def _stdin_sweep(suite, own_servers, fixture, names, profile, findings) -> None:
    srv = own_servers.start_stdio(fixture)
    srv.initialize(OLDEST_VERSION, timeout=30)
    sent = _burst(srv, names)
    _close_stdin(srv)
    bound = profile.limits["exit_bound_s"]
    code, lingered = _wait_exit(srv, bound)
    missing = [i for i in sent if i not in _answered(srv)]
    # A call read but not started may go unanswered (the seed only forbids starting it), so the
    # seed's part is that no answer is cut off (and that a call in progress completes:
    # VA-STDIO-010's own test); every call answered is the profile's reading.
    findings.check(not missing, f"{len(missing)} of 24 calls sent before stdin closed got no "
                   f"answer ({missing[:3]})", req="VA-STDIO-011")
    if code is None:
        findings.block(f"did not exit within {bound:.0f} s of stdin closing (then killed): the exit "
                       "status was not seen", req="VA-STDIO-003", by="still running")
        findings.fail(f"still running {bound:.0f} s after stdin closed", req="VA-STDIO-004")
        return
    cut = [line for line in srv.bad_lines if line.lstrip().startswith("{")]
    findings.check(not cut, f"{len(cut)} answer(s) on stdout cut off (not whole JSON), first: "
                   f"{short(cut[:1], 120)}", req="VA-STDIO-003")
    findings.check(code == 0, f"exit status {code} after stdin closed", req="VA-STDIO-003")
    findings.check(lingered <= profile.limits["exit_s"],
                   f"exited {lingered:.1f} s after its last answer (at most {profile.limits['exit_s']} s)",
                   req="VA-STDIO-004")


@pytest.mark.e2e
@per_requirement(*STDIN)
def test_closing_stdin_finishes_the_calls_in_flight_and_exits_zero(req, suite, own_servers, contract_fixture, names,
                                                                    profile):
    sweep_verdict("stdin", req, STDIN, lambda f: _stdin_sweep(suite, own_servers, contract_fixture, names, profile, f))


# -- a call surely in progress when stdin closes ----------------------------------------------------
IN_FLIGHT = "rc-in-flight"
HELD_BYTES = 64 * 1024  # read of an unfinished answer before stdin closes: the rest waits in the server


class _Raw:
    """The stdio server on pipes the test reads itself: stdout is read only when the test says,
    so a large answer stays half-written (the pipe full, the server's write waiting) for as long
    as the test wants; stderr is drained in the background."""

    def __init__(self, own_servers, fixture) -> None:
        argv, env, home = own_servers._launch(fixture, "server", None, None, (), (), None)
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, cwd=home, start_new_session=True)
        self.buffer, self.lines, self.err = b"", [], []
        threading.Thread(target=lambda: self.err.extend(self.proc.stderr), daemon=True).start()

    def send(self, message: dict) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def read(self, until, timeout: float) -> bool:
        """Read stdout until `until()` holds (True), stdout ends or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while not until():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if not select.select([fd], [], [], min(left, 1.0))[0]:
                continue
            chunk = os.read(fd, HELD_BYTES)
            if not chunk:  # the process closed stdout (it exited)
                return until()
            self.buffer += chunk
            *whole, self.buffer = self.buffer.split(b"\n")
            self.lines += [line for line in whole if line.strip()]
        return True

    def answer(self, msg_id: str) -> dict | None:
        for line in self.lines:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == msg_id \
                    and ("result" in message or "error" in message):
                return message
        return None

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass


@pytest.mark.e2e
@pytest.mark.req("VA-STDIO-010")
def test_a_call_in_progress_when_stdin_closes_completes(suite, own_servers, contract_fixture, names, profile):
    """The call is surely in progress: its answer (a 4 MiB download, over 5 MB of JSON) has begun
    on stdout and the suite stops reading, so the server cannot finish writing it; then stdin
    closes, and the suite reads on. The whole answer must come before the process exits."""
    raw = _Raw(own_servers, contract_fixture)
    args = names.args("get_attachment", {"vaultRelativePath": "attachments/four.bin", "download": True})
    request = describe_call("get_attachment", args)
    try:
        with Findings() as findings:
            raw.send(initialize_message(OLDEST_VERSION))
            if not raw.read(lambda: raw.answer("rc-init") is not None, 30) or "result" not in raw.answer("rc-init"):
                findings.block(f"initialize was not answered: {short(raw.answer('rc-init'), 160)}", by="initialize")
                return
            raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            raw.send({"jsonrpc": "2.0", "id": IN_FLIGHT, "method": "tools/call",
                      "params": {"name": "get_attachment", "arguments": args}})
            begun = raw.read(lambda: raw.answer(IN_FLIGHT) is not None or len(raw.buffer) >= HELD_BYTES,
                             profile.limits["tool_timeout_s"])
            early = raw.answer(IN_FLIGHT)
            if early is not None or not begun:
                findings.block("its answer came whole before stdin closed, so no call was in progress "
                               f"({short(early, 160)})" if early is not None else
                               f"no answer began within {profile.limits['tool_timeout_s']} s", by="get_attachment",
                               request=request)
                return
            held = len(raw.buffer)
            raw.proc.stdin.close()  # its answer is half-written: the call is in progress
            raw.read(lambda: raw.answer(IN_FLIGHT) is not None, profile.limits["exit_bound_s"])
            answer = raw.answer(IN_FLIGHT)
            findings.check(answer is not None and called_ok(answer),
                           f"the call in progress when stdin closed (its answer begun, {held:,} bytes of it read) "
                           + (f"did not complete: {short(answer, 160)}" if answer is not None else
                              f"did not complete: {len(raw.buffer):,} bytes of an unfinished line, then "
                              + ("the process exited with status " + str(raw.proc.poll())
                                 if raw.proc.poll() is not None else "nothing more")),
                           request=request)
    finally:
        raw.stop()


@pytest.mark.e2e
@pytest.mark.req("VA-STDIO-006")
def test_with_mcp_disabled_the_stdio_server_serves(suite, own_servers, contract_fixture, names):
    """mcp.enabled false (file and environment) changes nothing for stdio."""
    config = contract_fixture.write_config("mcp-disabled.toml", "[mcp]\nenabled = false\n")
    srv = own_servers.start_stdio(contract_fixture, values={"config": str(config)},
                      env={"VAULT_AGENT_MCP_ENABLED": "false"})
    init = srv.initialize(OLDEST_VERSION, timeout=30)
    args = names.args("search", {"query": "tokalpha"})
    response = srv.call_tool("search", args) if "result" in init else init
    srv.close(timeout=5)
    with Findings() as findings:
        findings.check(called_ok(response), f"with mcp.enabled false: {short(response, 160)}",
                       request=describe_call("search", args))


@pytest.mark.e2e
@pytest.mark.req("VA-STDIO-008")
@pytest.mark.parametrize("signal_", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_the_stdio_server_cleanly_with_calls_in_flight(signal_, suite, own_servers, contract_fixture,
                                                                     names, profile):
    """Sent once answers of a burst flow: a signal, unlike stdin's end, may arrive before the
    server has read every request, so only the calls it started must finish: status 0 and only
    whole JSON-RPC messages on stdout ("SIGTERM and SIGINT trigger the same graceful shutdown")."""
    srv = own_servers.start_stdio(contract_fixture)
    srv.initialize(OLDEST_VERSION, timeout=30)
    _burst(srv, names)
    flowing = wait_for(lambda: len(_answered(srv)) > 0, 30, 0.005)
    srv.proc.send_signal(signal_)
    bound = profile.limits["exit_bound_s"]
    code, _lingered = _wait_exit(srv, bound)
    name = signal.Signals(signal_).name
    with Findings() as findings:
        findings.check(flowing, "no call of the burst was answered within 30 s")
        if code is None:
            findings.block(f"did not exit within {bound:.0f} s of {name} (then killed): the exit "
                           "status was not seen", by="still running")
        else:
            findings.check(code == 0, f"exit status {code} after {name}")
        findings.check(not srv.bad_lines, f"{len(srv.bad_lines)} stdout line(s) that are not whole "
                       f"JSON-RPC messages after {name}")


@pytest.mark.e2e
@pytest.mark.req("VA-STDIO-007")
def test_the_stdio_command_refuses_a_transport_flag(suite, own_servers, contract_fixture):
    proc = own_servers.run(contract_fixture, "server", append=("--transport", "stdio"))
    out = proc.stdout
    with Findings() as findings:
        answered = any(line.strip().startswith("{") and json.loads(line).get("result") is not None
                       for line in out.splitlines() if line.strip().startswith("{"))
        findings.check(proc.returncode not in (0, None) and not proc.timed_out and not answered,
                       f"with --transport appended the command exited {proc.returncode} "
                       f"({'still running' if proc.timed_out else 'ran'}); it must refuse")
