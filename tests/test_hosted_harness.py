"""The hosted profile's harness pieces: options, the canister fixture, and the path oracle."""

from __future__ import annotations

import httpx
import jwt
import pytest

from contract_tests.contracts.specs import load_profile
from contract_tests.section_source_hosted.common import encoded_component_ok, explicit_cells
from contract_tests.synthetic.canister import build_canister
from contract_tests.synthetic.oracles import seed_normalize
from contract_tests.synthetic.upstream import note_url_path


@pytest.mark.parametrize("args,env,message", [
    (["--profile", "section-source-hosted", "--phase", "1Z"], {}, "has phases 1K, 1L, not 1Z"),
    (["--profile", "section-source-local", "--phase", "1K"], {}, "defines no phases"),
    (["--profile", "section-source-local", "--server-url", "http://127.0.0.1:9/mcp"], {},
     "local files the suite creates"),
    (["--profile", "retrieval-tools", "--server-url", "http://127.0.0.1:9/mcp"], {}, "stdio only"),
    (["--profile", "section-source-hosted", "--server-url", "http://127.0.0.1:9/mcp", "--canister-port", "9"], {},
     "set RC_JWT_SECRET"),
    (["--profile", "section-source-hosted", "--server-url", "http://127.0.0.1:9/mcp"], {"RC_JWT_SECRET": "x"},
     "give --canister-port"),
    (["--profile", "section-source-hosted", "--server-url", "127.0.0.1:9/mcp"], {}, "not an http(s) URL"),
    (["--profile", "section-source-hosted", "--server-url", "http://127.0.0.1:9/mcp", "--server-cmd", "x {port}"],
     {}, "exclude each other"),
])
def test_option_misuse_is_a_usage_error_that_says_why(pytester, monkeypatch, args, env, message):
    monkeypatch.delenv("RC_JWT_SECRET", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    from contract_tests.implementation.options import to_plugin_names
    result = pytester.runpytest_inprocess(*to_plugin_names(args))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in "\n".join(result.errlines + result.outlines)


def test_phased_requirements_apply_only_in_their_phase():
    profile = load_profile("section-source-hosted")
    assert profile.phases == ["1K", "1L"] and profile.default_phase == "1L"
    assert profile.applies("SSH-ACL-001", "http", "1L") and not profile.applies("SSH-ACL-001", "http", "1K")
    assert profile.applies("SSH-ACL-003", "http", "1K") and not profile.applies("SSH-ACL-003", "http", "1L")
    assert profile.applies("SSH-AUTH-001", "http", "1K") and profile.applies("SSH-AUTH-001", "http", "1L")
    assert not profile.applies("MCP-STDIO-001", "http", "1L")


def test_every_explicit_acl_cell_is_cited_by_a_phase_of_its_own():
    """Grants are 1L cells (SSH-ACL-001, phase 1L); denials are 1K cells (SSH-ACL-003/004, phase 1K)."""
    profile = load_profile("section-source-hosted")
    for phase, role, tool, cell in explicit_cells():
        req = "SSH-ACL-001" if cell["list"] or cell["call"] else "SSH-ACL-003"
        assert profile.applies(req, "http", phase), (phase, role, tool)


@pytest.fixture
def canister(tmp_path):
    profile = load_profile("section-source-hosted")
    fx = build_canister(tmp_path, profile.vectors(), profile.limits)
    yield fx
    fx.close()


def test_the_canister_serves_the_vault_by_vault_and_user(canister):
    fx = canister
    def get(path, vault, user="u"):
        return httpx.get(fx.upstream.url + note_url_path(path), headers={"X-Vault-Id": vault, "X-User-Id": user},
                         trust_env=False)
    assert get("notes/alpha.md", fx.vault_id).json()["content"] == fx.texts["notes/alpha.md"]
    assert fx.canaries["outside"] in get("notes/alpha.md", fx.other_vault_id).json()["content"]
    assert get(fx.other_vault_only, fx.vault_id).status_code == 404
    assert get(fx.other_user_only, fx.vault_id, fx.canister_user).status_code == 404
    assert get(fx.other_user_only, fx.vault_id, fx.user).status_code == 200  # the actor's, not the canister user's
    assert {"notes/headings.md", "notes/injection.md"} <= set(fx.notes)
    assert all(p in fx.texts for p in fx.stress.values())


def test_canaries_are_lower_case_and_cover_the_secrets(canister):
    fx = canister
    assert all(token == token.lower() for token in fx.canaries.values())
    assert fx.canaries["jwtsecret"] == fx.jwt_secret and fx.canaries["gateway"] == fx.gateway_secret
    assert fx.canaries["bearer"] in fx.default_token.lower()
    assert fx.canaries["path"] in fx.fake_vault_path


def test_tokens_carry_the_session_claims(canister):
    fx = canister
    claims = jwt.decode(fx.token("editor"), fx.jwt_secret, algorithms=["HS256"])
    assert (claims["sub"], claims["vault_id"], claims["role"], claims["canister_user_id"]) == \
        (fx.user, fx.vault_id, "editor", fx.canister_user)
    bare = jwt.decode(fx.token(None, canister_user=None), fx.jwt_secret, algorithms=["HS256"])
    assert "role" not in bare and "canister_user_id" not in bare
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(fx.token("viewer", kind="wrong_signature"), fx.jwt_secret, algorithms=["HS256"])
    with pytest.raises(jwt.ExpiredSignatureError):
        jwt.decode(fx.token("viewer", kind="expired"), fx.jwt_secret, algorithms=["HS256"])
    assert fx.session_headers() == {"Authorization": f"Bearer {fx.default_token}"}


@pytest.mark.parametrize("raw,must_reject,reads", [
    ("notes/alpha.md", False, {"notes/alpha.md"}),
    ("  notes\\\\alpha.md//", False, {"notes/alpha.md"}),
    ("a/./b.md", False, {"a/./b.md", "a/b.md"}),
    ("", True, set()), ("   ", True, set()), ("/etc/passwd", True, set()), ("\\\\server\\share", True, set()),
    ("C:/Users/x.md", True, set()), ("c:\\x.md", True, set()), ("a/../b.md", True, set()),
    ("a\\..\\b.md", True, set()), ("..", True, set()), (".", False, {"."}), ("./", False, {"."}),
    ("C:name.md", False, {"C:name.md"}), ("%2e%2e/x.md", False, {"%2e%2e/x.md"}),
    ("\ufeffnotes/a.md", False, {"notes/a.md", "\ufeffnotes/a.md"}), (None, True, set()), (12, True, set()),
])
def test_the_seed_normalization_oracle(raw, must_reject, reads):
    assert seed_normalize(raw) == (must_reject, reads)


@pytest.mark.parametrize("segment,ok", [("notes%2Falpha.md", True), ("a%20b.md", True), ("q'(x)!*.md", True),
                                        ("q%27%28x%29%21%2A.md", True), ("a b.md", False), ("a/b", False),
                                        ("a%2", False), ("%C3%BC.md", True), ("ü.md", False), ("a#b", False)])
def test_encode_uri_component_shape(segment, ok):
    assert encoded_component_ok(segment) is ok
