"""Helpers shared by the retrieval-tools test modules."""

from __future__ import annotations

import json
import subprocess
from functools import cache
from typing import Any

import pytest

from contract_tests.checks import check, fail, payload, result_of, schema_errors, short
from contract_tests.contracts import contracts_root, load_profile, policy, validator
from contract_tests.harness.process import private_environment, render_command

PROFILE = "retrieval-tools"
profiles_mark = pytest.mark.profiles(PROFILE)
TOOLS = ("search", "open_file", "get_snippet", "list_dir")
FILE_TOOLS = ("open_file", "get_snippet", "list_dir")
# Corpus categories that are unsafe for every tool; the others were written for notes
# (directories, non-notes, empty paths) and are legitimate for some retrieval tools.
UNSAFE_CATEGORIES = ("traversal", "encoded", "backslash", "windows", "nul-and-control", "absolute",
                     "overlong", "unicode", "sibling-prefix", "symlink")


@cache
def catalogue() -> dict[str, Any]:
    import yaml
    path = contracts_root() / "specs" / load_profile(PROFILE).data["errors"]
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def codes() -> set[str]:
    return {entry["code"] for entry in catalogue()["errors"]}


def attacks() -> dict[str, Any]:
    return policy("path-attacks.yaml")


def file_args(tool: str, repo: str, path: str) -> dict[str, Any]:
    args: dict[str, Any] = {"repo": repo, "path": path}
    if tool == "get_snippet":
        args.update(start_line=1, end_line=5)
    return args


def ok(response: dict[str, Any], req: str, tool: str) -> dict[str, Any]:
    """Assert a success; return the validated envelope."""
    result = result_of(response)
    if result is None:
        fail(req, f"{tool}: expected a result, got JSON-RPC error {short(response.get('error'))}")
    if result.get("isError"):
        fail(req, f"{tool}: expected success, got error {short(_error_object(response) or result)}")
    envelope = payload(result, req)
    errors = schema_errors(validator(load_profile(PROFILE).data["schemas"]["outputs"][tool]), envelope)
    check(not errors, req, f"{tool}: envelope violates the output schema: {errors[:2]}")
    return envelope


def _error_object(response: dict[str, Any]) -> dict[str, Any] | None:
    result = result_of(response)
    if result is None:
        error = response.get("error") or {}
        data = error.get("data")
        if -32099 <= int(error.get("code", 0)) <= -32000 and isinstance(data, dict):
            return data.get("error")
        return None
    if not result.get("isError"):
        return None
    try:
        body = json.loads(result["content"][0]["text"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return body.get("error") if isinstance(body, dict) else None


def error(response: dict[str, Any], req: str, what: str) -> dict[str, Any]:
    """Assert a structured error on either accepted channel; return {code, message, details}."""
    result = result_of(response)
    if result is not None and not result.get("isError"):
        fail(req, f"{what}: expected a structured error, got a successful result")
    obj = _error_object(response)
    if obj is None:
        fail(req, f"{what}: the failure is not a structured error object: {short(response.get('error') or result)}")
    errors = schema_errors(validator(load_profile(PROFILE).data["schemas"]["error"]), obj)
    check(not errors, req, f"{what}: error object invalid: {errors[:2]}")
    check(obj["code"] in codes(), req, f"{what}: code {obj['code']!r} is not in the catalogue")
    return obj


def start_with_roots(suite, fixture, tmp_path, root_name, bad_value):
    """Start the server with one root spoiled (None: the variable unset); return the finished process."""
    placeholder = root_name.lower()
    values = dict(fixture.placeholders())
    if bad_value is not None:
        values[placeholder] = bad_value
    elif "{" + placeholder + "}" in suite.command:
        pytest.skip(f"the server command passes {{{placeholder}}} itself; the variable cannot be left unset")
    env = private_environment(tmp_path / "home") | suite.profile.environment(values)
    if bad_value is None:
        env.pop(root_name, None)
    argv = render_command(suite.command, values)
    return subprocess.run(argv, input="", capture_output=True, text=True, timeout=30, env=env, cwd=tmp_path)
