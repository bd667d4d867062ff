"""Helpers shared by the hosted profile's test modules: sessions per role, upstream capture,
and the seed's path normalization as the oracle for what may be read upstream."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from contract_tests.contracts.specs import policy
from contract_tests.section_source_hosted import PROFILES
from contract_tests.synthetic import canaries
from contract_tests.synthetic.oracles import seed_normalize  # noqa: F401
from contract_tests.synthetic.upstream import RecordedRequest, read_path  # noqa: F401
from contract_tests.transport.http import HttpServer
from contract_tests.verdicts.checks import check, fail, result_of, short
from contract_tests.verdicts.running import own

TOOL = "get_section_source"
PROFILE, = PROFILES  # the folder's one profile
profiles_mark = pytest.mark.profiles(PROFILE)
UNKNOWN_ROLES = ("rc-unknown-role", "Viewer", "owner", "superadmin")
INVALID_PATH = "Invalid path"

# Characters encodeURIComponent leaves alone; `!*'()` may be escaped too (equivalent to servers).
_UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")
_MAY_ESCAPE = set("!*'()")


def acl() -> dict[str, Any]:
    return policy("acl-matrix.yaml")


def blocked() -> dict[str, Any]:
    """The SectionSource surfaces a hosted server must not add (not the self-hosted list)."""
    return policy("hosted-blocked-surfaces.yaml")


def explicit_cells() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(phase, role, tool, cell) of every ACL matrix cell the seed states; cells picked as the
    safer reading where the seed is silent are not asserted (a server may expose its existing
    adjacent tools)."""
    return [(phase, role, tool, cell) for phase, data in acl()["phases"].items()
            for role, tools in data["roles"].items() for tool, cell in tools.items()
            if cell["basis"] == "explicit"]


ROLES = tuple(role["name"] for role in acl()["roles"])


def encoded_component_ok(raw_segment: str) -> bool:
    """True if a request path segment is encodeURIComponent-style: every character outside
    the unreserved set (and `!*'()`) percent-encoded, `/` included."""
    i = 0
    while i < len(raw_segment):
        ch = raw_segment[i]
        if ch == "%":
            if not re.fullmatch(r"%[0-9A-Fa-f]{2}", raw_segment[i:i + 3]):
                return False
            i += 3
            continue
        if ch not in _UNRESERVED and ch not in _MAY_ESCAPE:
            return False
        i += 1
    return True


def refused(response: dict[str, Any]) -> bool:
    """True if the server turned the request away: an HTTP 4xx, or a JSON-RPC error (seed 001
    requires an authenticated session and names no status; 401 or 403 is SSH-AUTH-003's)."""
    status = response.get("rc_http_status")
    return (isinstance(status, int) and 400 <= status < 500) or ("error" in response and "result" not in response)


def http_refusal(response) -> tuple[bool, str]:
    """(refused, what was seen) for a raw httpx response to a request without a valid token:
    refused is an HTTP 4xx, or a JSON-RPC error and no result in the answer."""
    from contract_tests.transport.http import messages_of
    if 400 <= response.status_code < 500:
        return True, f"HTTP {response.status_code}"
    answers = []
    for text in messages_of(response):
        try:
            answers.append(json.loads(text))
        except ValueError:
            continue
    errors = [m for m in answers if isinstance(m, dict) and "error" in m]
    results = [m for m in answers if isinstance(m, dict) and "result" in m]
    if errors and not results:
        return True, f"HTTP {response.status_code} with a JSON-RPC error"
    return False, f"HTTP {response.status_code}" + (" with a JSON-RPC result" if results else "")


def open_session(servers, server, fixture, token: str | None = None, *, req: str,
                 may_refuse: bool = False) -> HttpServer | None:
    """A new initialized session on the running server, authenticated with `token`.

    With `may_refuse` (unknown roles, tokens without a role), a server that refuses the
    session with 401 or 403 gives None: refusing grants nothing, so it conforms.
    """
    conn = servers.session(server, fixture, token)
    response = conn.initialize()
    if "result" not in response:
        conn.close()
        if may_refuse and refused(response):
            return None
        fail(f"a session with a valid token was not initialized: {short(response.get('error'))}", req=req)
    return conn


def tool_names(conn) -> list[str]:
    response = conn.request("tools/list", {})
    result = response.get("result")
    if result is None:
        return []
    return [t.get("name") for t in result.get("tools", [])]


def capture(fixture, action):
    """Run `action()` with a clean upstream record; return (its value, the requests it caused)."""
    fixture.upstream.clear()
    value = action()
    return value, fixture.upstream.requests


def failed(response: dict[str, Any]) -> bool:
    result = result_of(response)
    return result is None or result.get("isError") is True


def error_message(response: dict[str, Any]) -> str | None:
    """The `error` string of an UPSTREAM_ERROR envelope (None if the response is not one)."""
    result = result_of(response)
    if not result or not result.get("isError"):
        return None
    for block in result.get("content", []):
        try:
            body = json.loads(block.get("text", ""))
        except ValueError:
            continue
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            return body["error"]
    return None


def no_probe_in(response: dict[str, Any], probes: dict[str, str], what: str, *, req: str | None = None) -> None:
    req = own(req)
    texts = [t.lower() for t in canaries.strings(response)]
    for name, probe in probes.items():
        check(not (probe and any(probe.lower() in t for t in texts)), f"{what}: the response carries the {name}",
              req=req)


def one_read(requests: list[RecordedRequest], what: str, *, req: str | None = None) -> RecordedRequest:
    req = own(req)
    check(len(requests) == 1, f"{what}: expected exactly one upstream request, got {len(requests)}: "
          f"{[f'{r.method} {r.path}' for r in requests][:4]}", req=req)
    return requests[0]
