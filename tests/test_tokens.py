"""Self-tests for the hosted profile's JWT helpers (contract_tests/synthetic/tokens.py)."""

from __future__ import annotations

import jwt
import pytest

from contract_tests.synthetic import tokens

CLAIMS = dict(sub="user-1", vault_id="vault-a", role="viewer")


def test_new_secret_is_random_and_long():
    a, b = tokens.new_secret(), tokens.new_secret()
    assert a != b and len(a.encode()) >= 32


def test_mint_decodes_with_the_right_secret():
    secret = tokens.new_secret()
    token = tokens.mint(secret, canister_user_id="cu-9", ttl_s=60, extra={"scope": "mcp"}, **CLAIMS)
    assert jwt.get_unverified_header(token)["alg"] == "HS256"
    claims = tokens.decode(token, secret)
    assert {k: claims[k] for k in ("sub", "vault_id", "role", "canister_user_id", "scope")} == {
        "sub": "user-1", "vault_id": "vault-a", "role": "viewer",
        "canister_user_id": "cu-9", "scope": "mcp"}
    assert claims["exp"] - claims["iat"] == 60


def test_canister_user_id_omitted_unless_given():
    secret = tokens.new_secret()
    assert "canister_user_id" not in tokens.decode(tokens.mint(secret, **CLAIMS), secret)


def test_wrong_signature_fails():
    secret = tokens.new_secret()
    token = tokens.wrong_signature(secret, **CLAIMS)
    assert jwt.decode(token, options={"verify_signature": False})["sub"] == "user-1"
    with pytest.raises(jwt.InvalidSignatureError):
        tokens.decode(token, secret)


def test_expired_fails():
    secret = tokens.new_secret()
    with pytest.raises(jwt.ExpiredSignatureError):
        tokens.decode(tokens.expired(secret, **CLAIMS), secret)
    with pytest.raises(jwt.ExpiredSignatureError):  # beyond a generous leeway too
        tokens.decode(tokens.expired(secret, **CLAIMS), secret, leeway=600)


def test_malformed_fails():
    secret = tokens.new_secret()
    token = tokens.malformed()
    assert token.count(".") == 2 and token != tokens.malformed()
    with pytest.raises(jwt.DecodeError):
        tokens.decode(token, secret)


def test_unsigned_fails():
    secret = tokens.new_secret()
    token = tokens.unsigned(secret, **CLAIMS)
    assert jwt.get_unverified_header(token)["alg"] == "none"
    assert token.endswith(".")
    with pytest.raises(jwt.InvalidAlgorithmError):
        tokens.decode(token, secret)
