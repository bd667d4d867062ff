"""schemathesis runs the OpenAPI document of the vault-agent HTTP API against the running
reference (with a key, an embedding model and real note ids in reach) and must find nothing:
every response has a documented status, content type and schema, invalid input is rejected
and valid input accepted."""

from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from tests.test_vault_agent_support import Serve, build_model, build_vault, clean_env, run_cli

ROOT = Path(__file__).resolve().parent.parent
KEY = "s" * 40
schema = schemathesis.openapi.from_path(ROOT / "specs" / "openapi" / "vault-agent.openapi.yaml")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    base = tmp_path_factory.mktemp("oas")
    vault = build_vault(base)
    model = build_model(base / "model.json", vault)
    env = clean_env(XDG_CONFIG_HOME=str(base / "xdg"), HOME=str(base / "home"))
    flags = ["--vault-root", str(vault), "--index-dir", str(base / "idx"), "--exclude", "drafts/",
             "--embedding-enabled", "--embedding-model", str(model), "--api-key", KEY]
    assert run_cli("index", *flags, env=env).returncode == 0
    server = Serve(*flags, env=env)
    yield server.url
    server.stop()


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_reference_conforms_to_the_openapi_document(case, api):
    case.call_and_validate(base_url=api, headers={"Authorization": f"Bearer {KEY}"})


@schema.parametrize()
@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_route_refuses_a_request_without_the_key(case, api):
    response = case.call(base_url=api)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "AUTH_REQUIRED"
