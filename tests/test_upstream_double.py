"""Self-tests for the canister stand-in (contract_tests/synthetic/upstream.py)."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from contract_tests.synthetic.upstream import MODES, UpstreamDouble, encode_component, note_payload, note_url_path

VAULT = "vault-a"
PATH = "inbox/example.md"
ODD_PATH = "inbox/my notes/café ☃ #1.md"
HEADERS = {
    "Authorization": "Bearer tok-123",
    "X-Vault-Id": VAULT,
    "X-User-Id": "canister-user-7",
    "X-Gateway-Auth": "gw-secret-9",
    "Accept": "application/json",
    "Content-Type": "application/json",
}


@pytest.fixture
def double():
    with UpstreamDouble() as up:
        up.put_note(VAULT, PATH, note_payload(PATH, "# Example\n\nbody\n"))
        up.put_note(VAULT, ODD_PATH, note_payload(ODD_PATH, "# Odd\n"))
        yield up


# One client for the module: building an httpx.Client (its SSL context) costs ~50 ms.
CLIENT = httpx.Client(timeout=2.0, trust_env=False)


def get(double: UpstreamDouble, path: str, *, timeout: float = 2.0, headers=None) -> httpx.Response:
    return CLIENT.get(double.url + note_url_path(path), headers=headers or HEADERS, timeout=timeout)


def test_encode_component_matches_javascript():
    # encodeURIComponent("inbox/my notes/café ☃ #1.md") in JavaScript:
    assert encode_component(ODD_PATH) == "inbox%2Fmy%20notes%2Fcaf%C3%A9%20%E2%98%83%20%231.md"
    assert encode_component("a-b_c.d!e~f*g'h(i)j") == "a-b_c.d!e~f*g'h(i)j"


def test_binds_loopback_only(double):
    host, port = double.address
    assert host == "127.0.0.1" and port > 0
    assert double.url == f"http://127.0.0.1:{port}"


def test_serves_stored_note_and_records_headers(double):
    response = get(double, PATH)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"path": PATH, "content": "# Example\n\nbody\n"}
    [req] = double.requests
    assert req.method == "GET"
    assert req.path == "/api/v1/notes/inbox%2Fexample.md"
    assert req.note_path == PATH and req.query == "" and req.body == b""
    for name, value in HEADERS.items():
        assert req.headers[name.lower()] == value
    assert isinstance(req.at, float) and req.at <= time.monotonic()


def test_serves_path_with_spaces_unicode_and_hash(double):
    response = get(double, ODD_PATH)
    assert response.status_code == 200
    assert response.json()["path"] == ODD_PATH
    [req] = double.requests
    assert req.path == "/api/v1/notes/" + encode_component(ODD_PATH)
    assert req.note_path == ODD_PATH


def test_vault_and_user_scoping(double):
    assert get(double, PATH, headers={**HEADERS, "X-Vault-Id": "vault-b"}).status_code == 404
    no_vault = {k: v for k, v in HEADERS.items() if k != "X-Vault-Id"}
    assert get(double, PATH, headers=no_vault).status_code == 404
    double.put_note(VAULT, "private.md", note_payload("private.md", "# P\n"), user_id="owner")
    assert get(double, "private.md").status_code == 404
    assert get(double, "private.md", headers={**HEADERS, "X-User-Id": "owner"}).status_code == 200


def test_missing_note_is_404(double):
    response = get(double, "inbox/absent.md")
    assert response.status_code == 404
    assert double.payload_marker() in response.text


def test_other_endpoints_are_404_and_recorded(double):
    base = double.url
    answers = [
        CLIENT.get(base + "/api/v1/notes"),
        CLIENT.get(base + "/api/v1/notes/"),
        CLIENT.get(base + "/api/v1/notes/inbox/example.md"),   # unencoded slash: not one segment
        CLIENT.get(base + "/api/v1/search", params={"q": "x"}),
        CLIENT.post(base + "/api/v1/notes/" + encode_component(PATH), json={"body": "w"}),
        CLIENT.delete(base + "/api/v1/notes/" + encode_component(PATH)),
    ]
    assert [a.status_code for a in answers] == [404] * 6
    seen = [(r.method, r.path, r.query) for r in double.requests]
    assert seen == [
        ("GET", "/api/v1/notes", ""),
        ("GET", "/api/v1/notes/", ""),
        ("GET", "/api/v1/notes/inbox/example.md", ""),
        ("GET", "/api/v1/search", "q=x"),
        ("POST", "/api/v1/notes/inbox%2Fexample.md", ""),
        ("DELETE", "/api/v1/notes/inbox%2Fexample.md", ""),
    ]
    assert json.loads(double.requests[4].body) == {"body": "w"}
    assert double.note_reads() == []
    double.clear()
    assert double.requests == []


@pytest.mark.parametrize("mode,status", [("404", 404), ("401", 401), ("403", 403), ("500", 500)])
def test_status_modes(double, mode, status):
    double.respond_with(mode)
    response = get(double, PATH)
    assert response.status_code == status
    assert double.payload_marker() in response.text
    assert "body" not in response.json()


def test_malformed_json(double):
    double.respond_with("malformed-json")
    response = get(double, PATH)
    assert response.status_code == 200
    assert double.payload_marker() in response.text
    with pytest.raises(ValueError):
        json.loads(response.text)


def test_foreign_path(double):
    double.respond_with("foreign-path")
    response = get(double, PATH)
    assert response.status_code == 200
    payload = response.json()
    assert payload["path"] != PATH and payload["path"].startswith("other-vault-")
    assert double.payload_marker() in payload["path"]
    assert payload["content"] == "# Example\n\nbody\n"  # the stored note, renamed


def test_absolute_path(double):
    double.respond_with("absolute-path")
    payload = get(double, PATH).json()
    assert payload["path"].startswith("/") and double.payload_marker() in payload["path"]


def test_raw_body_echo(double):
    double.respond_with("raw-body-echo")
    response = get(double, PATH)
    assert response.status_code == 500
    assert double.payload_marker() in response.text
    assert "Bearer tok-123" in response.text and "gw-secret-9" in response.text


def test_timeout_holds_then_closes(double):
    double.respond_with("timeout", delay_s=0.5)
    with pytest.raises(httpx.TimeoutException):  # a 0.5 s hold outlasts a 0.2 s client timeout
        get(double, PATH, timeout=0.2)
    assert len(double.requests) == 1  # recorded even though never answered
    double.respond_with("timeout", delay_s=0.2)
    with pytest.raises(httpx.RemoteProtocolError):  # closed without a response
        get(double, PATH, timeout=2.0)


def test_stop_releases_held_requests():
    up = UpstreamDouble(timeout_delay_s=30).start()
    up.respond_with("timeout")
    with pytest.raises(httpx.TimeoutException):
        get(up, PATH, timeout=0.1)
    started = time.monotonic()
    up.stop()
    assert time.monotonic() - started < 2


def test_mode_for_one_path_only(double):
    double.respond_with("403", for_path=PATH)
    assert get(double, PATH).status_code == 403
    assert get(double, ODD_PATH).status_code == 200
    double.respond_with("500")
    assert get(double, PATH).status_code == 403          # per-path override wins
    double.respond_with("normal", for_path=PATH)
    assert get(double, PATH).status_code == 200
    assert get(double, ODD_PATH).status_code == 500
    double.reset_modes()
    assert get(double, ODD_PATH).status_code == 200


def test_unknown_mode_rejected(double):
    assert set(MODES) >= {"normal", "timeout", "raw-body-echo"}
    with pytest.raises(ValueError):
        double.respond_with("teapot")


def test_markers_differ_between_instances():
    assert UpstreamDouble().payload_marker() != UpstreamDouble().payload_marker()


def test_wait_for_requests(double):
    assert double.wait_for_requests(1, timeout_s=0.05) == []
    get(double, PATH)
    assert len(double.wait_for_requests(1)) == 1
