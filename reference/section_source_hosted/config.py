"""Settings: flags win over the environment, which wins over an optional TOML file.

Secrets come from the environment only; a config file that names one is refused, and no
message ever repeats a secret (or the canister URL, which may carry credentials).
"""

from __future__ import annotations

import argparse
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

PROG = "rc-section-source-hosted"
PHASES = ("1K", "1L")
DEFAULT_PHASE = "1L"
ENV_CANISTER = "RC_CANISTER_URL"
ENV_PHASE = "RC_PHASE"
ENV_CONFIG = "RC_CONFIG"
ENV_JWT_SECRET = "RC_JWT_SECRET"
ENV_GATEWAY_SECRET = "RC_GATEWAY_SECRET"
_SECRET_KEYS = ("jwt_secret", "gateway_secret", "canister_auth_secret")


class ConfigError(Exception):
    """A setting is missing or unusable. str() is one line for stderr, free of secrets."""


@dataclass(frozen=True)
class Settings:
    canister_url: str                    # scheme://host[:port][/prefix], no trailing slash
    phase: str
    jwt_secret: str = field(repr=False)
    gateway_secret: str | None = field(default=None, repr=False)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Reference hosted MCP server (Streamable HTTP at /mcp) for section-source-hosted. "
        f"Secrets come from ${ENV_JWT_SECRET} and ${ENV_GATEWAY_SECRET} only.",
    )
    parser.add_argument("--canister-url", help=f"canister base URL (else ${ENV_CANISTER}, else the config file)")
    parser.add_argument("--phase", help=f"1K or 1L (else ${ENV_PHASE}, else the config file, else {DEFAULT_PHASE})")
    parser.add_argument("--config", help=f"TOML file with canister_url and phase (else ${ENV_CONFIG})")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default: loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    return parser.parse_args(argv)


def _config_file(explicit: str | None) -> dict:
    name = explicit or os.environ.get(ENV_CONFIG)
    if not name:
        return {}
    try:
        data = tomllib.loads(Path(name).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError("config file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("config file is not readable") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("config file is not valid TOML") from exc
    if any(key in data for key in _SECRET_KEYS):
        raise ConfigError(f"config file must not hold secrets; set ${ENV_JWT_SECRET} / ${ENV_GATEWAY_SECRET}")
    return data


def _pick(flag: str | None, env: str, data: dict, key: str) -> object:
    if flag is not None:
        return flag
    if os.environ.get(env):
        return os.environ[env]
    return data.get(key)


def _canister_url(value: object) -> str:
    if value is None:
        raise ConfigError(f"no canister URL: pass --canister-url, set {ENV_CANISTER} or give canister_url in --config")
    if not isinstance(value, str):
        raise ConfigError("canister URL must be a string")
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError("canister URL must be an http(s) URL without query or fragment")
    if parts.username or parts.password:
        raise ConfigError("canister URL must not carry credentials")
    return value.strip().rstrip("/")


def _phase(value: object) -> str:
    phase = DEFAULT_PHASE if value is None else value
    if phase not in PHASES:
        raise ConfigError(f"phase must be one of {', '.join(PHASES)}")
    return phase


def load_settings(args: argparse.Namespace) -> Settings:
    data = _config_file(args.config)
    url = _canister_url(_pick(args.canister_url, ENV_CANISTER, data, "canister_url"))
    phase = _phase(_pick(args.phase, ENV_PHASE, data, "phase"))
    jwt_secret = os.environ.get(ENV_JWT_SECRET, "")
    if not jwt_secret:
        raise ConfigError(f"{ENV_JWT_SECRET} is not set (the JWT secret comes from the environment only)")
    gateway_secret = os.environ.get(ENV_GATEWAY_SECRET) or None
    return Settings(canister_url=url, phase=phase, jwt_secret=jwt_secret, gateway_secret=gateway_secret)
