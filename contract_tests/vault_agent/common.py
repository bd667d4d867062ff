"""Helpers of the vault-agent tests: note ids found by search, the spec's failure classes with
their placeholders filled, the HTTP API route of each tool, and servers started from the
profile's commands (index, serve, public, hold) as well as the one under test."""

from __future__ import annotations

import json
import re
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import yaml

from contract_tests.contracts import specs as contracts
from contract_tests.synthetic import canaries
from contract_tests.synthetic.vault_agent import NOTES, token
from contract_tests.transport import stdio as stdio_harness
from contract_tests.transport.http import MCP_HEADERS, HttpServer, free_port
from contract_tests.transport.limits import patience
from contract_tests.transport.stdio import initialize_message
from contract_tests.transport.system import process_tree
from contract_tests.vault_agent import PROFILES
from contract_tests.verdicts import running
from contract_tests.verdicts.checks import called_ok, payload, result_of
from contract_tests.verdicts.findings import Finding, Findings, RequirementFailure, describe_call
from contract_tests.verdicts.running import own

PROFILE, = PROFILES  # the folder's one profile
profiles_mark = pytest.mark.profiles(PROFILE)
TOOLS = ("search", "get_note", "get_chunk", "get_attachment", "related")
VALIDATION_RPC, INVALID_PARAMS, METHOD_NOT_FOUND = -32000, -32602, -32601
OLDEST_VERSION = "2025-03-26"


def protocol_version() -> str:
    """The protocol version the run speaks (negotiated by the preflight from the versions the
    profile's documents allow, or --protocol-version)."""
    return stdio_harness.protocol_version()


@cache
def rpc_codes() -> dict[str, int]:
    """Phase 1 code -> the JSON-RPC code mcp-tools.md's tables give it (validation codes -32000)."""
    data = yaml.safe_load((contracts.contracts_root() / "specs" / "catalogues" / "vault-agent-errors.yaml")
                          .read_text(encoding="utf-8"))
    return {e["code"]: e["jsonrpc_code"] for e in data["errors"] if e.get("jsonrpc_code") is not None}


def blocked(message: str, request: str | None = None, by: str | None = None, *,
            req: str | None = None) -> RequirementFailure:
    req = own(req)
    return RequirementFailure([Finding(req, message, None, request, "blocked", by)])


def declared_codes(klass: dict[str, Any]) -> list[str]:
    """The codes a failure class may give: the declared one(s) (`error_codes`, a string or a
    list) among those the documents allow (`code` or `codes`), else all those."""
    allowed = [klass["code"]] if "code" in klass else list(klass.get("codes", []))
    declared = contracts.DECLARATION.get("error_codes", {}).get(klass["id"])
    declared = [declared] if isinstance(declared, str) else list(declared or [])
    return [c for c in allowed if c in declared] or allowed


# -- one test per requirement of a shared sweep ----------------------------------------------------
_SWEEPS: dict[Any, tuple[list[Finding], BaseException | None]] = {}


def per_requirement(*reqs: str):
    """Parametrize a test over the requirements one sweep checks, one test each: a requirement
    that held never reads not-run because another of the sweep failed (one defect, one finding)."""
    return pytest.mark.parametrize("req", [pytest.param(r, marks=pytest.mark.req(r), id=r) for r in reqs])


def sweep_verdict(key: Any, req: str, cited: tuple[str, ...], run) -> None:
    """Run `run(findings)` once per worker for `key`; fail (or block) `req` with its own findings.
    Findings of requirements the sweep does not cite (a leak it saw) go with the first it cites."""
    if key not in _SWEEPS:
        findings = Findings()
        stopped: BaseException | None = None
        try:
            run(findings)
        except RequirementFailure as failure:
            findings.items.extend(failure.findings)
        except pytest.skip.Exception as exc:
            stopped = exc
        _SWEEPS[key] = (findings.items, stopped, running.checked_requirements())
    items, stopped, checked = _SWEEPS[key]
    if stopped is not None:
        raise stopped
    mine = [f for f in items if f.req == req or (req == cited[0] and f.req not in cited)]
    if mine:
        raise RequirementFailure(mine)
    if req not in checked:  # "no finding" is a pass only where a check of `req` ran in the sweep
        raise blocked("the sweep ran no check of this requirement (what it needs did not come up)", req=req,
                      by="the sweep")
    running._checked(req, None)  # this test's verdict rests on the sweep's checks of it


# -- leaks, attributed to the request that carried them ---------------------------------------------
def scan_own(srv, fixture, profile, findings: Findings, request: str | None, case: str | None = None) -> None:
    """Scan what `srv` wrote since its last scan and file each leak with the request that made
    it; the autouse canary guard then finds nothing of it left to attribute to another test."""
    mark = srv.transcript.mark()
    out, err = srv.transcript.since(getattr(srv, "rc_scanned", (0, 0, 0)))
    srv.rc_scanned = mark
    for req, leak in canaries.scan_output(out, fixture.canaries, profile.output_canaries, srv.sent_params,
                                          profile.echo_allowed):
        findings.fail(f"server output leaked: {leak}", req=req, case=case, request=request)
    rules = profile.leak_requirements("stderr")
    for leak in canaries.scan_lines(err, fixture.canaries, "stderr", rules):
        findings.fail(f"server log leaked: {leak}", req=rules[leak.cls], case=case, request=request)


# -- note ids ------------------------------------------------------------------------------------
class Ids:
    """Note ids (opaque: mcp-tools.md) found by searching each note's own token, and the chunk
    indexes search showed for it."""

    def __init__(self, server, names) -> None:
        self.notes: dict[str, str] = {}
        self.chunks: dict[str, list[int]] = {}
        self.problems: list[str] = []
        for name, path in NOTES.items():
            if name == "empty":
                continue  # no searchable text (Phase 1: it "may" appear as a note-type result)
            args = names.args("search", {"query": token(name), "limit": 50})
            response = server.call_tool("search", args)
            if not called_ok(response):
                self.problems.append(f"search {token(name)} failed: {json.dumps(response)[:200]}")
                continue
            results = mcp_payload(response).get("results") or []
            mine = [r for r in results if isinstance(r, dict) and r.get("path") == path]
            if not mine or not isinstance(mine[0].get("noteId"), str):
                self.problems.append(f"search {token(name)} did not find {path} (found "
                                     f"{sorted({r.get('path') for r in results if isinstance(r, dict)})[:5]})")
                continue
            self.notes[name] = mine[0]["noteId"]
            self.chunks[name] = sorted({r["chunkIndex"] for r in mine if isinstance(r.get("chunkIndex"), int)})

    def note(self, name: str, *, req: str | None = None) -> str:
        req = own(req)
        if name not in self.notes:
            raise blocked(f"the id of {NOTES[name]} is unknown: search did not find it", req=req, by="VA-SRCH-001")
        return self.notes[name]

    def unknown(self, *, req: str | None = None) -> str:
        """An id of a real note's shape that names no note: its last character changed."""
        req = own(req)
        real = self.note("alpha", req=req)
        return real[:-1] + ("1" if real[-1] != "1" else "2")


_NOTE = re.compile(r"\{note:(\w+)\}")


def render_case(value: Any, ids: Ids, fixture, *, req: str | None = None) -> Any:
    """Fill a failure case's placeholders: {note:NAME}, {unknown_note}, {long_query}, {root}."""
    req = own(req)
    if isinstance(value, str):
        value = _NOTE.sub(lambda m: ids.note(m.group(1), req=req), value)
        if "{unknown_note}" in value:
            value = value.replace("{unknown_note}", ids.unknown(req=req))
        return value.replace("{long_query}", "q" * 1001).replace("{root}", str(fixture.root))
    if isinstance(value, dict):
        return {k: render_case(v, ids, fixture, req=req) for k, v in value.items()}
    if isinstance(value, list):
        return [render_case(v, ids, fixture, req=req) for v in value]
    return value


def failure_classes(profile) -> list[dict[str, Any]]:
    return list(profile.data.get("failure_classes", []))


# -- MCP answers ----------------------------------------------------------------------------------
def mcp_payload(response: dict[str, Any]) -> dict[str, Any]:
    """The payload of a successful call: structuredContent, else the one JSON text block."""
    value = payload(result_of(response), req="VA-PAR-006")
    return value if isinstance(value, dict) else {}


def rpc_error(response: dict[str, Any]) -> dict[str, Any] | None:
    error = response.get("error")
    return error if isinstance(error, dict) and "rc_http_status" not in response else None


def error_code_of(response: dict[str, Any]) -> str | None:
    error = rpc_error(response) or {}
    data = error.get("data")
    code = data.get("errorCode") if isinstance(data, dict) else None
    return code if isinstance(code, str) else None


# -- the HTTP API --------------------------------------------------------------------------------
def _flag(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _path_param(value: str) -> str:
    """One path segment; '/' stays raw unless a dot segment could be normalised away."""
    dots = any(part in (".", "..") for part in value.split("/"))
    return quote(value, safe="" if dots else "/")


def http_call(client: httpx.Client, tool: str, args: dict[str, Any]) -> httpx.Response | None:
    """The HTTP API request of a tool call (Phase 1 routes), or None when the call cannot be said
    over HTTP (an empty or non-string path parameter: HTTP has no types there)."""
    if tool in ("search", "related"):
        return client.post(f"/{tool}", json=args)
    query = "&".join(f"{k}={quote(_flag(args[k]), safe='')}" for k in ("download", "allowLarge") if k in args)
    suffix = f"?{query}" if query else ""
    if tool == "get_note":
        note = args.get("noteId")
        return client.get(f"/notes/{quote(note, safe='')}{suffix}") if isinstance(note, str) and note else None
    if tool == "get_chunk":
        note, index = args.get("noteId"), args.get("chunkIndex")
        if not isinstance(note, str) or not note or not isinstance(index, int) or isinstance(index, bool):
            return None
        return client.get(f"/chunks/{quote(note, safe='')}/{index}")
    path = args.get("vaultRelativePath")
    return client.get(f"/attachments/{_path_param(path)}{suffix}") if isinstance(path, str) and path else None


def http_body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def is_json(response: httpx.Response) -> bool:
    return "json" in response.headers.get("content-type", "")


# -- servers started from the profile's commands -------------------------------------------------
def serve_refusals(own_servers, fixture, cases: dict[str, tuple[dict[str, str], dict[str, str]]],
                   timeout: float | None = None) -> dict[str, str | None]:
    """Start serve once per case ({name: (values, env)}) side by side on a free port each, and
    say how each ended: None when it refused to start (exited non-zero within `timeout`
    seconds, default the request timeout), else what it did instead: "kept running" (still
    running at the deadline, or answering HTTP on its port before it: it has started), or
    "exited 0"."""
    outcomes: dict[str, str | None] = {}
    timeout = patience() if timeout is None else timeout

    def one(name: str) -> None:
        values, env = cases[name]
        port = free_port()
        proc = own_servers.spawn(fixture, "serve", values={"port": str(port), **values}, env=env)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                code = proc.poll()
                if code is not None:
                    outcomes[name] = None if code != 0 else "exited 0"
                    return
                if _answers_http(port):
                    break
                time.sleep(0.2)
            code = proc.poll()
            outcomes[name] = "kept running" if code is None else None if code != 0 else "exited 0"
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.finished()
    threads = [threading.Thread(target=one, args=(name,)) for name in cases]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout + 40)
    return {name: outcomes.get(name, "kept running") for name in cases}


def _answers_http(port: int) -> bool:
    """True once anything answers an HTTP request on 127.0.0.1:`port` (any status)."""
    try:
        httpx.get(f"http://127.0.0.1:{port}/", timeout=1.0)
    except httpx.HTTPError:
        return False
    return True


def api_base(srv: HttpServer) -> str:
    url = httpx.URL(srv.url)
    return f"{url.scheme}://{url.host}:{url.port}"


def initialize_http(base: str, path: str, version: str = OLDEST_VERSION, **headers: str) -> httpx.Response:
    return httpx.post(base + path, json=initialize_message(version), headers={**MCP_HEADERS, **headers}, timeout=30)


def answers_mcp(response: httpx.Response) -> bool:
    """True when an HTTP answer carries a JSON-RPC result for the initialize it was sent."""
    from contract_tests.transport.http import messages_of
    for text in messages_of(response):
        try:
            message = json.loads(text)
        except ValueError:
            continue
        if isinstance(message, dict) and isinstance(message.get("result"), dict) \
                and "protocolVersion" in message["result"]:
            return True
    return False


# -- memory ------------------------------------------------------------------------------------
def reset_peak(pid: int) -> bool:
    ok = True
    for member in process_tree(pid):
        try:
            Path(f"/proc/{member}/clear_refs").write_text("5")
        except OSError:
            ok = False
    return ok


def peak_kib(pid: int) -> int:
    total = 0
    for member in process_tree(pid):
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
    return total


def wait_for(predicate, timeout: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


__all__ = ["Ids", "PROFILE", "TOOLS", "describe_call", "profiles_mark", "render_case", "rpc_codes"]
