"""Unit tests of the harness pieces the suite's verdicts rest on."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from contract_tests.synthetic import canaries
from contract_tests.transport import fsevents
from contract_tests.transport.process import render_command
from contract_tests.transport.stdio import StdioServer

TOKENS = {"body": "rcbodyabc123", "path": "rcpathdef456"}


def test_canaries_are_found_through_json_escapes_and_nested_json_text():
    inner = json.dumps({"heading": "x rcbodyabc123 y"})
    line = json.dumps({"result": {"content": [{"text": inner.replace("r", "\\u0072", 0)}]}})
    escaped = line.replace("rcbodyabc123", "\\u0072cbodyabc123")
    leaks = canaries.scan_lines([escaped], TOKENS, "stdout", ["body"])
    assert [leak.cls for leak in leaks] == ["body"]


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_token_spelt_in_escapes_at_any_json_depth_is_found_by_scan_output(depth):
    """The fast path (no token, no \\u escape: nothing to decode) never hides a leak: a token
    spelt with \\u escapes inside JSON text inside JSON text is still found."""
    text = "x \\u0072cbodyabc123 y"  # the JSON source of "x rcbodyabc123 y"
    value = json.loads(f'"{text}"')
    for _ in range(depth):
        value = json.dumps({"heading": value}).replace("rcbodyabc123", "\\u0072cbodyabc123")
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": value}]}})
    assert "rcbodyabc123" not in line
    found = canaries.scan_output([line], TOKENS, {"results": {"body": "X-1"}})
    assert [req for req, _leak in found] == ["X-1"]
    assert canaries.scan_output([line.replace("\\\\u0072", "r0")], TOKENS, {"results": {"body": "X-1"}}) == []


def test_canaries_are_found_case_insensitively_and_redacted_in_excerpts():
    leaks = canaries.scan_lines(["path /tmp/RC-FIXTURE-RCPATHDEF456/vault"], TOKENS, "stderr", ["path"])
    assert leaks and "rcpathdef456" not in leaks[0].excerpt.lower()
    assert "<CANARY:path>" in leaks[0].excerpt


def _error_echo(sent: str, echoed: str) -> list:
    reply = {"jsonrpc": "2.0", "id": 1, "result": {"isError": True, "content": [
        {"type": "text", "text": json.dumps({"error": {"code": "X", "message": "m", "details": {"path": echoed}}})}]}}
    return canaries.scan_output([json.dumps(reply)], TOKENS, {"errors": {"path": "RT-OUT-002"}},
                                {1: {"arguments": {"path": sent}}}, ["errors"])


@pytest.mark.parametrize("sent", ["/x/rc-rcpathdef456//docs/./a.md/", "/x/rc-rcpathdef456/docs/a.md"])
def test_an_error_may_echo_the_callers_own_path_normalised(sent):
    assert _error_echo(sent, "/x/rc-rcpathdef456/docs/a.md") == []


@pytest.mark.parametrize("echoed", ["/x/rc-rcpathdef456/outside/a.md", "/real/rc-rcpathdef456/docs/a.md"])
def test_an_error_naming_a_path_the_caller_did_not_send_is_a_leak(echoed):
    """`..` resolved, or the root's real path: not the caller's input."""
    assert [req for req, _leak in _error_echo("/x/rc-rcpathdef456/docs/../outside/a.md", echoed)] == ["RT-OUT-002"]


def test_render_command_keeps_paths_with_spaces_in_one_argument():
    argv = render_command("{python} -m srv --vault {vault}", {"vault": "/tmp/a b/vault"})
    assert argv == [sys.executable, "-m", "srv", "--vault", "/tmp/a b/vault"]


def test_an_empty_command_is_refused():
    with pytest.raises(ValueError):
        render_command("   ", {})


@pytest.mark.skipif(not fsevents.available(), reason="needs Linux inotify")
def test_the_open_watcher_sees_a_file_opened_by_another_process(tmp_path):
    (tmp_path / "sub").mkdir()
    target = tmp_path / "sub" / "note.md"
    target.write_text("x")
    with fsevents.OpenWatcher(tmp_path) as watcher:
        assert watcher.opened() == set()
        import subprocess
        subprocess.run([sys.executable, "-c", f"open({str(target)!r}).read()"], check=True)
        assert target in watcher.opened()


def test_a_raw_stdio_server_records_non_json_stdout_lines(tmp_path):
    script = ("import sys, json\n"
              "print('not json', flush=True)\n"
              "for line in sys.stdin:\n"
              "    msg = json.loads(line)\n"
              "    print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': {}}), flush=True)\n")
    server = StdioServer([sys.executable, "-c", script])
    try:
        assert server.request("ping", timeout=10)["result"] == {}
    finally:
        assert server.close(timeout=5) == 0
    assert server.bad_lines == ["not json"]


def test_sse_messages_split_only_on_sse_line_ends():
    import httpx

    from contract_tests.transport.http import messages_of
    body = 'event: message\r\ndata: {"a": "x\u2028y\u0085z"}\r\n\r\ndata: {"b": 1}\n\n'
    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, text=body)
    assert [json.loads(m) for m in messages_of(response)] == [{"a": "x\u2028y\u0085z"}, {"b": 1}]


def test_an_http_answer_without_a_json_rpc_body_fails_the_request_at_once():
    """A 400/401 with a plain body must not leave the request waiting for its timeout; the
    error is marked as the harness's (rc_http_status) and never enters the transcript."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from contract_tests.transport.http import HttpServer

    class Plain(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server naming
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status = 401 if self.headers.get("Authorization") != "Bearer ok" else 400
            body = b"no thanks"
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Plain)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
        for token, status in (("nope", 401), ("ok", 400)):
            conn = HttpServer(url, headers={"Authorization": f"Bearer {token}"})
            started = time.monotonic()
            response = conn.request("tools/list", {}, timeout=10)
            assert time.monotonic() - started < 3
            assert response["rc_http_status"] == status and "error" in response
            assert not any("harness" in line for line in conn.transcript.stdout)
            assert conn.request("ping", timeout=10)["rc_http_status"] == status  # still usable
            conn.close()
    finally:
        httpd.shutdown()


def test_a_bodiless_delete_sends_no_content_type():
    """Fastify (the public vault-agent) refuses `Content-Type: application/json` with an empty
    body (FST_ERR_CTP_EMPTY_JSON_BODY, HTTP 400): a DELETE that ends the session carries no
    Content-Type, so MCP-HTTP-002 judges the server, not the suite's header."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from contract_tests.transport.http import HttpServer

    seen: list[str | None] = []

    class Strict(BaseHTTPRequestHandler):
        def do_DELETE(self):  # noqa: N802 - http.server naming
            seen.append(self.headers.get("Content-Type"))
            self.send_response(400 if self.headers.get("Content-Type") else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Strict)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        conn = HttpServer(f"http://127.0.0.1:{httpd.server_address[1]}/mcp")
        conn.session_id = "s-1"
        assert conn.delete() == 200
        conn.close()  # the close path's DELETE too
        assert seen == [None, None]
    finally:
        httpd.shutdown()


def test_every_fixture_kind_of_the_spec_schema_is_registered_and_no_other():
    from contract_tests.contracts import specs as contracts
    from contract_tests.synthetic import fixtures  # noqa: F401 - registers the kinds
    from contract_tests.synthetic.adapter import KINDS
    assert set(KINDS) == set(contracts.schema("spec.schema.json")["properties"]["fixture"]["enum"])


def test_escaped_text_never_prints_two_different_strings_alike():
    from contract_tests.verdicts.findings import esc
    variants = ["inbox/example.md", "inbox/example.md\u0085", "inbox/example.md\u00a0", "inbox/exam\u0301ple.md",
                "inbox/example.md\ufeff", "inbox/example.md\u200b", "inbox\\example.md"]
    assert len({esc(v) for v in variants}) == len(variants)
    assert esc("plain/path.md") == "plain/path.md"


def test_shortened_server_text_still_escapes_newlines_ansi_and_controls_so_it_cannot_forge_report_lines():
    from contract_tests.verdicts.findings import esc
    hostile = "ok\nPASSED forged::test\r\x1b[32mPASSED\x1b[0m\u2028\x00" * 10_000
    for limit in (None, 5, 40, 200):
        shown = esc(hostile, limit)
        assert not any(ch in shown for ch in "\n\r\x1b\u2028\x00"), limit
        if limit is not None:  # only the shown part is rendered, and the true length is said
            assert shown.endswith(f"... ({len(hostile)} chars)") and len(shown) < limit + 30


def test_a_difference_shows_both_sides_where_they_differ():
    from contract_tests.verdicts.findings import difference
    a, b = "x" * 200 + "abc", "x" * 200 + "abd"
    text = difference(a, b)
    assert "character 202" in text and "abc" in text and "abd" in text


def test_a_relative_script_in_the_command_is_found_from_where_the_suite_runs(tmp_path, monkeypatch):
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "server.js").write_text("")
    monkeypatch.chdir(tmp_path)
    argv = render_command("node dist/server.js --vault {vault} --name docs", {"vault": "/v"})
    assert argv == ["node", str(tmp_path / "dist" / "server.js"), "--vault", "/v", "--name", "docs"]


def test_a_line_over_the_cap_is_never_assembled_and_its_canary_is_still_found():
    """A 5 MB line read with a 1 MB cap: an Oversize record with the kept prefix, the size, the
    request id from the prefix and an excerpt around a token far past the prefix (split across
    chunk boundaries as it may be); the lines around it arrive whole."""
    import os
    import threading

    from contract_tests.transport.reader import read_lines
    read, write = os.pipe()
    big = b'{"jsonrpc": "2.0", "id": "rc-7", "result": "' + b"a" * 5_000_000 + b"CanaryTok" + b'"}'
    data = b'{"id": "rc-1"}\n' + big + b"\n" + b"tail without a line end"
    threading.Thread(target=lambda: (os.write(write, data), os.close(write)), daemon=True).start()
    lines, records = [], []
    read_lines(read, lambda: 1_000_000, lines.append, records.append, lambda: [b"canarytok"])
    assert lines == [b'{"id": "rc-1"}', b"tail without a line end"]
    (record,) = records
    assert record.size == len(big) and record.request_id() == "rc-7" and len(record.prefix) == 64 * 1024
    assert any("CanaryTok" in e for e in record.excerpts) and "CanaryTok" in record.text()


def test_a_flood_is_counted_past_the_caps_but_a_canary_in_it_is_kept():
    from contract_tests.transport import limits
    from contract_tests.transport.transcript import Transcript
    transcript = Transcript()
    transcript.watch(["tok-secret"])
    saved = limits.LIMITS.max_lines
    limits.LIMITS.max_lines = 10
    try:
        for n in range(1000):
            transcript.add("stderr", f"line {n}" + (" TOK-SECRET here" if n == 500 else ""))
        transcript.add("stdout", "an answer", force=True)
    finally:
        limits.LIMITS.max_lines = saved
    assert len(transcript.stderr) == 11 and transcript.dropped["stderr"] == 990
    assert "TOK-SECRET" in transcript.stderr[-1] and "an answer" in transcript.stdout
    assert "990 stderr lines" in transcript.flood_note()


def test_the_breaker_stops_after_silent_requests_slow_answers_or_stalled_servers():
    from contract_tests.transport.limits import HEALTH, LIMITS
    try:
        HEALTH.reset()
        HEALTH.not_answered("ping", 30)  # a method a server may leave unanswered: not counted
        HEALTH.not_answered("tools/call", 20)
        HEALTH.answered("tools/list")    # another method's answer does not reset tools/call
        assert HEALTH.deadline("tools/call", 60) == LIMITS.unanswered_seconds - 20
        HEALTH.not_answered("tools/call", 25, 'tools/call read {"path": "a"}')
        assert HEALTH.check() and 'the last: tools/call read {"path": "a"}' in HEALTH.check()
        HEALTH.reset()
        for _ in range(LIMITS.slow_limit):
            HEALTH.answered("tools/call", 9.0)
        assert "too slowly" in HEALTH.check()
        HEALTH.reset()
        for n in range(LIMITS.unanswered_limit):
            HEALTH.stalled(f"server {n}")
        assert "mid-run" in HEALTH.check()
    finally:
        HEALTH.reset()


# A server that answers initialize, tools/list and every tools/call but those whose arguments
# climb out with "..": those it never answers, as a real server that hangs on one kind of path.
HANGS_ON_DOTS = ("import sys, json\n"
                 "for line in sys.stdin:\n"
                 "    msg = json.loads(line)\n"
                 "    if 'id' not in msg:\n"
                 "        continue\n"
                 "    params = msg.get('params') or {}\n"
                 "    if msg['method'] == 'tools/call' and '..' in json.dumps(params.get('arguments')):\n"
                 "        continue\n"
                 "    result = {'initialize': {'protocolVersion': params.get('protocolVersion'), 'capabilities': "
                 "{'tools': {}}, 'serverInfo': {'name': 'hangs', 'version': '0'}}, 'tools/list': {'tools': [{'name': "
                 "'read', 'inputSchema': {'type': 'object'}}]}, 'tools/call': {'content': []}}.get(msg['method'], {})\n"
                 "    print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': result}), flush=True)\n")
HUNG_CALL = 'tools/call read {"path": "../outside/secret.md"}'


def _run_exit(worker_output: dict | None = None) -> tuple[int, list[str]]:
    """The exit status and run_stopped the report collector gives a run with no finding, from
    this process's HEALTH (and, as under xdist, a worker's output)."""
    from types import SimpleNamespace

    from contract_tests.contracts import specs as contracts
    from contract_tests.contracts.expectations import Expectations
    from contract_tests.implementation.state import SuiteState
    from contract_tests.reports.collector import ReportCollector
    state = SuiteState(contracts.load_profile("retrieval-tools"), "stdio", None, "/mcp", None, Expectations())
    collector = ReportCollector(SimpleNamespace(getoption=lambda name: None), state, None)
    if worker_output is not None:
        collector.pytest_testnodedown(SimpleNamespace(workeroutput=worker_output), None)
    session = SimpleNamespace(exitstatus=pytest.ExitCode.OK)
    collector.pytest_sessionfinish(session, 0)
    return session.exitstatus, collector.stopped


def _hang_once(then_call: bool) -> None:
    """Over one connection: initialize, tools/list, a call answered, the call the server never
    answers, and (with `then_call`) one more call, which is refused."""
    from contract_tests.transport.stdio import NoResponse, ServerStopped
    server = StdioServer([sys.executable, "-c", HANGS_ON_DOTS])
    try:
        assert "result" in server.initialize(timeout=10)
        assert server.request("tools/list", {}, timeout=10)["result"]["tools"]
        assert "result" in server.call_tool("read", {"path": "inbox/a.md"}, timeout=10)
        with pytest.raises(NoResponse) as hung:
            server.call_tool("read", {"path": "../outside/secret.md"}, timeout=1)
        assert hung.value.request == HUNG_CALL and HUNG_CALL in server.stalled, server.stalled
        if then_call:
            with pytest.raises(ServerStopped) as refused:
                server.call_tool("read", {"path": "inbox/b.md"}, timeout=10)
            assert HUNG_CALL in str(refused.value) and "nothing more is sent" in str(refused.value)
    finally:
        server.close(timeout=5)


def test_a_connection_that_stops_answering_stops_the_run_once_a_later_request_is_refused_naming_the_call():
    """One connection, as the generic-files sweep uses: the call the server never answers is
    named (tool and arguments) in why the connection stalled, a later call on it is refused, and
    the run exits 9 with run_stopped naming that call, though the breaker never tripped."""
    from contract_tests.transport.limits import HEALTH
    from contract_tests.verdicts.findings import EXIT_RUN_STOPPED
    try:
        HEALTH.reset()
        _hang_once(then_call=True)
        assert HEALTH.stopped is None  # one stalled connection: the breaker did not trip
        (why,) = HEALTH.reasons()
        assert HUNG_CALL in why and "not sent" in why, why
        code, stopped = _run_exit()
        assert code == EXIT_RUN_STOPPED and stopped == [why], (code, stopped)
    finally:
        HEALTH.reset()


def test_a_worker_hands_the_controller_the_stall_that_cost_it_a_request(monkeypatch):
    """Under xdist the stall is in a worker's HEALTH: its session end hands the reason over
    (workeroutput), and the controller's report, whose own HEALTH saw nothing, exits 9 with it."""
    from types import SimpleNamespace

    from contract_tests import plugin
    from contract_tests.transport.limits import HEALTH
    from contract_tests.verdicts.findings import EXIT_RUN_STOPPED
    try:
        HEALTH.reset()
        _hang_once(then_call=True)
        worker = SimpleNamespace(config=SimpleNamespace(workerinput={}, workeroutput={}))
        plugin.pytest_sessionfinish(worker)
        handed = worker.config.workeroutput.get("rc_stopped")
        assert handed and HUNG_CALL in handed[0], handed
        HEALTH.reset()  # the controller ran no test
        code, stopped = _run_exit(worker.config.workeroutput)
        assert code == EXIT_RUN_STOPPED and stopped == handed, (code, stopped)
    finally:
        HEALTH.reset()


def test_an_sdk_session_names_the_call_it_got_no_answer_to_and_its_later_requests_are_refused():
    """The SDK's requests (sdk.SdkClient) stall and are refused as the raw ones are."""
    from contract_tests.transport.limits import HEALTH
    from contract_tests.transport.sdk import SdkClient
    from contract_tests.transport.stdio import NoResponse, ServerStopped
    server = StdioServer([sys.executable, "-c", HANGS_ON_DOTS])
    try:
        HEALTH.reset()
        client = SdkClient(server, timeout=10)
        try:
            assert client.call_tool("read", {"path": "inbox/a.md"})["content"] == []
            client.timeout = 1
            with pytest.raises(NoResponse) as hung:
                client.call_tool("read", {"path": "../outside/secret.md"})
            assert hung.value.request == HUNG_CALL and HUNG_CALL in server.stalled, server.stalled
            assert HEALTH.reasons() == []
            with pytest.raises(ServerStopped):
                client.call_tool("read", {"path": "inbox/b.md"})
            (why,) = HEALTH.reasons()
            assert HUNG_CALL in why, why
        finally:
            client.close()
    finally:
        server.close(timeout=5)
        HEALTH.reset()


def test_a_stall_no_later_request_met_leaves_the_exit_status_as_it_was():
    """A request the server left unanswered, after which nothing more was asked of that
    connection (a check that judges the silence itself), loses no check: no reason to stop, and
    the run's exit status is what its verdicts make it."""
    from contract_tests.transport.limits import HEALTH
    try:
        HEALTH.reset()
        _hang_once(then_call=False)
        assert HEALTH.stalls == 1 and HEALTH.reasons() == [], HEALTH.reasons()
        assert _run_exit() == (pytest.ExitCode.OK, [])
    finally:
        HEALTH.reset()


def test_shared_evidence_is_made_once_and_its_error_met_by_every_test():
    """target/shared.Once: the first get() makes it, later ones reuse it; an error the making
    raised is raised again to each later get(), never made again."""
    from contract_tests.implementation.shared import Once
    made = []
    once = Once(lambda: made.append(1) or len(made))
    assert once.get() == 1 and once.get() == 1 and made == [1]
    failing = Once(lambda: made.append(2) or 1 / 0)
    for _ in range(2):
        with pytest.raises(ZeroDivisionError):
            failing.get()
    assert made == [1, 2]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")
def test_a_socket_watch_finds_what_inet_sockets_finds_and_reads_the_tables_once_per_new_socket(monkeypatch):
    """harness.system.SocketWatch: the same network sockets as inet_sockets (a loopback
    connection found; one to an allowed upstream port left out), and the network tables read
    only while a socket is new, not at every sample."""
    import socket

    from contract_tests.transport import system
    reads = []
    real = system._inet_rows
    monkeypatch.setattr(system, "_inet_rows", lambda pid, inodes: reads.append(set(inodes)) or real(pid, inodes))
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        watch, upstream = system.SocketWatch(), system.SocketWatch(remote_ports=(port,))
        for _ in range(3):
            watch.sample(os.getpid())
        assert len(reads) == 1 and any(":0000" in f for f in watch.found), (reads, watch.found)
        with socket.create_connection(("127.0.0.1", port)):
            watch.sample(os.getpid())
            watch.sample(os.getpid())
            assert len(reads) == 2, reads
            assert sorted(watch.found) == sorted(system.inet_sockets(os.getpid()))
            upstream.sample(os.getpid())
            assert not any(f.endswith(f":{port:04X}") for f in upstream.found), upstream.found


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")
def test_process_tree_through_children_files_equals_the_full_scan(monkeypatch):
    import subprocess
    import sys

    from contract_tests.transport import system
    grand = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(5)']); time.sleep(5)"
    proc = subprocess.Popen([sys.executable, "-c", grand])
    try:
        deadline = time.monotonic() + 10
        while len(system.process_tree(proc.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        fast = system.process_tree(os.getpid())
        monkeypatch.setattr(system, "_CHILDREN_FILES", False)
        assert sorted(system.process_tree(os.getpid())) == sorted(fast) and len(fast) >= 3
    finally:
        proc.kill()
        proc.wait()


def test_a_quiet_run_prints_what_each_step_in_progress_says(tmp_path, monkeypatch):
    """transport/progress.py: a step's note lands in its process's file beside the stop file; the
    ticker prints a line only after INTERVAL s in which no test finished, naming every step."""
    import io
    import time as clock

    from contract_tests.transport import limits, progress
    monkeypatch.setenv(limits.STOP_FILE, str(tmp_path / "stopped"))
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    monkeypatch.setitem(progress._last, "written", 0.0)
    progress.note("generic-files sweep", 5, 100)
    progress.note("generic-files sweep", 6, 100)  # within THROTTLE of the first: not written
    assert progress.in_progress(tmp_path) == ["gw1: generic-files sweep: 5 of 100 calls"]
    monkeypatch.setattr(progress, "INTERVAL", 0.5)
    out = io.StringIO()
    ticker = progress.Ticker(6, stream=out).start()
    ticker.finished()
    clock.sleep(2.3)
    ticker.stop()
    lines = [line for line in out.getvalue().splitlines() if line]
    assert lines and all(line.endswith("1 of 6 tests done; gw1: generic-files sweep: 5 of 100 calls")
                         for line in lines), lines
    progress.note("generic-files sweep", 100, 100)  # the last is always written: nothing in progress
    assert progress.in_progress(tmp_path) == []
