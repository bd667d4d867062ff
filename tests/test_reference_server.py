"""The reference server's own behaviour beyond the suite: configuration and path rules."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reference.section_source.config import ConfigError, parse_args, vault_root
from reference.section_source.paths import UnsafePath, normalize_request_path


@pytest.mark.parametrize("raw,expected", [
    ("inbox/example.md", "inbox/example.md"), (" inbox\\example.md ", "inbox/example.md"),
    ("./inbox//./example.md", "inbox/example.md"), ("\u3000a.md\u00a0", "a.md"),
])
def test_safe_paths_normalize(raw, expected):
    assert normalize_request_path(raw) == expected


@pytest.mark.parametrize("raw", ["", "  ", "/etc/passwd", "C:/x.md", "a/../b.md", "..\\x.md", "a\x00.md",
                                 "~/x.md", 3, None, "a/" * 600])
def test_unsafe_paths_are_refused_without_echo(raw):
    with pytest.raises(UnsafePath) as info:
        normalize_request_path(raw)
    assert not isinstance(raw, str) or len(raw.strip()) < 3 or raw.strip() not in str(info.value)


def test_the_vault_flag_wins_over_the_environment_and_the_config_file(tmp_path, monkeypatch):
    flag, env, conf = (tmp_path / n for n in ("flag", "env", "conf"))
    for d in (flag, env, conf):
        d.mkdir()
    (tmp_path / "rc.toml").write_text('vault = "conf"\n')
    monkeypatch.setenv("RC_VAULT_ROOT", str(env))
    assert vault_root(parse_args(["--vault", str(flag), "--config", str(tmp_path / "rc.toml")])) == flag.resolve()
    assert vault_root(parse_args(["--config", str(tmp_path / "rc.toml")])) == env.resolve()
    monkeypatch.delenv("RC_VAULT_ROOT")
    assert vault_root(parse_args(["--config", str(tmp_path / "rc.toml")])) == conf.resolve()


def test_a_missing_vault_root_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.delenv("RC_VAULT_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError):
        vault_root(parse_args([]))
    with pytest.raises(ConfigError):
        vault_root(parse_args(["--vault", str(tmp_path / "nope")]))


def test_the_server_refuses_to_start_without_a_vault_and_says_why(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "reference.section_source.server", "--vault",
                           str(tmp_path / "missing")], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert proc.returncode == 2
    assert "vault root is not a directory" in proc.stderr
    assert "Traceback" not in proc.stderr and str(tmp_path) not in proc.stderr
    assert proc.stdout == ""
