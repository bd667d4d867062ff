"""Where the vault is: a flag, then an environment variable, then a config file."""

from __future__ import annotations

import argparse
import os
import tomllib
from pathlib import Path

ENV_VAULT = "RC_VAULT_ROOT"
ENV_CONFIG = "RC_CONFIG"
DEFAULT_CONFIG = "retrieval-contract.toml"


class ConfigError(Exception):
    """The vault root cannot be determined or is unusable."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="rc-section-source-local",
        description="Reference stdio MCP server for the section-source-local profile.",
    )
    parser.add_argument("--vault", help=f"vault root (else ${ENV_VAULT}, else the config file)")
    parser.add_argument(
        "--config",
        help=f"TOML file with `vault = \"...\"` (else ${ENV_CONFIG}, else ./{DEFAULT_CONFIG})",
    )
    parser.add_argument("--http", action="store_true",
                        help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default: loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    return parser.parse_args(argv)


def _from_config_file(explicit: str | None) -> Path | None:
    name = explicit or os.environ.get(ENV_CONFIG)
    path = Path(name) if name else Path(DEFAULT_CONFIG)
    if not path.is_file():
        if name:
            raise ConfigError("config file not found")
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError("config file is not valid TOML") from exc
    vault = data.get("vault")
    if not isinstance(vault, str) or not vault.strip():
        raise ConfigError("config file has no `vault` string")
    return (path.parent / vault).expanduser()


def vault_root(args: argparse.Namespace) -> Path:
    """Resolve the vault root in precedence order and check it is a readable directory."""
    chosen = args.vault or os.environ.get(ENV_VAULT)
    root = Path(chosen).expanduser() if chosen else _from_config_file(args.config)
    if root is None:
        raise ConfigError(f"no vault root: pass --vault, set {ENV_VAULT} or write {DEFAULT_CONFIG}")
    real = Path(os.path.realpath(root))
    if not real.is_dir():
        raise ConfigError("vault root is not a directory")
    if not os.access(real, os.R_OK | os.X_OK):
        raise ConfigError("vault root is not readable")
    return real
