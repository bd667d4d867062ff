"""Settings from four layers, highest first: CLI flags, VAULT_AGENT_* environment variables,
the user-local TOML file, built-in defaults (Phase 1 configuration.md#configuration-file,
Phase 3 configuration.md). Every key has all three sources; KEYS is the one table of them.

The TOML file is `--config PATH`, else $VAULT_AGENT_CONFIG, else
$XDG_CONFIG_HOME/vault-agent/config.toml (~/.config/...). It is only read, never written.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

PROG = "vault-agent"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
MIN_API_KEY_CHARS = 32  # server-api.md#authentication, for non-loopback binds
# Phase 1/2 API paths the MCP endpoint must not shadow (Phase 3 configuration.md; /sync is Phase 2).
API_PATHS = ("/search", "/notes", "/chunks", "/attachments", "/related", "/health", "/index",
             "/reindex", "/status", "/sync")


class ConfigError(Exception):
    """CONFIG_INVALID: the message names the key and the rule, never the rejected value."""


@dataclass(frozen=True)
class Key:
    name: str
    kind: str  # str | bool | int | list | path | url | level | endpoint
    default: Any
    env: str
    flag: str
    mcp: bool = False  # an MCP key: `vault-agent mcp` neither takes its flag nor reads it


def _env(name: str) -> str:
    return "VAULT_AGENT_" + name


KEYS: tuple[Key, ...] = (
    Key("vault.root", "path", None, _env("VAULT_ROOT"), "--vault-root"),
    Key("vault.exclude", "list", [], _env("VAULT_EXCLUDE"), "--exclude"),
    Key("server.endpoint", "url", "http://127.0.0.1:8787", _env("SERVER_ENDPOINT"), "--endpoint"),
    Key("server.host", "str", "127.0.0.1", _env("SERVER_HOST"), "--host"),
    Key("server.port", "int", 8787, _env("SERVER_PORT"), "--port"),
    Key("server.api_key", "str", "", _env("API_KEY"), "--api-key"),
    Key("server.log_level", "level", "info", _env("LOG_LEVEL"), "--log-level"),
    Key("index.dir", "path", None, _env("INDEX_DIR"), "--index-dir"),
    Key("index.bootstrap", "bool", True, _env("INDEX_BOOTSTRAP"), "--index-bootstrap"),
    Key("embedding.enabled", "bool", False, _env("EMBEDDING_ENABLED"), "--embedding-enabled"),
    Key("embedding.endpoint", "url", "http://127.0.0.1:11434/v1/embeddings", _env("EMBEDDING_ENDPOINT"), "--embedding-endpoint"),
    Key("embedding.model", "path", None, _env("EMBEDDING_MODEL"), "--embedding-model"),
    Key("embedding.require", "bool", False, _env("EMBEDDING_REQUIRE"), "--embedding-require"),
    Key("embedding.allow_private_network_endpoint", "bool", False,
        _env("EMBEDDING_ALLOW_PRIVATE_NETWORK_ENDPOINT"), "--embedding-allow-private-network-endpoint"),
    Key("cors.enabled", "bool", False, _env("CORS_ENABLED"), "--cors-enabled"),
    Key("cors.allowed_origins", "list", [], _env("CORS_ALLOWED_ORIGINS"), "--cors-allowed-origins"),
    Key("mcp.enabled", "bool", False, _env("MCP_ENABLED"), "--mcp-enabled", mcp=True),
    Key("mcp.http.endpoint", "endpoint", "/mcp", _env("MCP_HTTP_ENDPOINT"), "--mcp-http-endpoint", mcp=True),
)
BY_NAME = {key.name: key for key in KEYS}
# Phase 2 sections the reference accepts (so a shared config file loads) but does not act on:
# it has no file watcher and no Git sync.
INERT_KEYS = {
    "watch.enabled": bool, "watch.debounce_ms": int, "watch.max_batch_delay_ms": int, "watch.ignore_initial": bool,
    "sync.enabled": bool, "sync.repo": str, "sync.remote": str, "sync.branch": str, "sync.interval_seconds": int,
    "sync.webhook_enabled": bool, "sync.webhook_secret": str, "sync.pull_timeout_seconds": int,
    "sync.failure_backoff_seconds": int,
}


@dataclass(frozen=True)
class Settings:
    values: dict[str, Any]
    config_path: Path | None = None
    sources: dict[str, str] = field(default_factory=dict)  # key -> flag|env|toml|default

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    @property
    def vault_root(self) -> Path | None:
        return self.values["vault.root"]

    @property
    def host(self) -> str:
        return self.values["server.host"]

    @property
    def loopback(self) -> bool:
        return self.host in LOOPBACK_HOSTS

    @property
    def api_key(self) -> str:
        return self.values["server.api_key"]

    @property
    def watch_enabled(self) -> bool:
        return bool(self.values.get("watch.enabled", True))


def user_config_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / PROG / "config.toml"


def user_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / PROG


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        # mcp.http is a table of its own; every other table holds leaf values.
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def _bool(text: str, name: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise ConfigError(f"{name} must be true, false, 1 or 0")


def _coerce(key: Key, raw: Any, source: str) -> Any:
    """Turn a flag/env string or a TOML value into the key's type, or raise ConfigError."""
    name = key.name
    textual = source in ("flag", "env")
    if key.kind == "bool":
        if textual:
            return _bool(str(raw), name)
        if not isinstance(raw, bool):
            raise ConfigError(f"{name} must be a boolean")
        return raw
    if key.kind == "int":
        if textual:
            try:
                raw = int(str(raw).strip())
            except ValueError:
                raise ConfigError(f"{name} must be an integer") from None
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise ConfigError(f"{name} must be an integer")
        return raw
    if key.kind == "list":
        if textual:
            return [part.strip() for part in str(raw).split(",") if part.strip()]
        if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
            raise ConfigError(f"{name} must be a list of strings")
        return list(raw)
    if not isinstance(raw, str):
        raise ConfigError(f"{name} must be a string")
    if key.kind == "path":
        # An empty path means "not set" (Phase 1: an empty index.dir is the default directory).
        return Path(raw).expanduser() if raw.strip() else None
    return raw


def _validate(values: dict[str, Any], *, mcp_keys: bool) -> None:
    port = values["server.port"]
    if not 1 <= port <= 65535:
        raise ConfigError("server.port must be an integer from 1 through 65535")
    for name in ("server.endpoint", "embedding.endpoint"):
        parts = urlsplit(values[name])
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"{name} must be an http or https URL")
    if values["server.log_level"] not in ("debug", "info", "warn", "error"):
        raise ConfigError("server.log_level must be debug, info, warn or error")
    if values["embedding.enabled"] and values["embedding.model"] is None:
        raise ConfigError("embedding.model (the path of a local model file) is required when embedding.enabled is true")
    origins = values["cors.allowed_origins"]
    if values["cors.enabled"]:
        if not origins:
            raise ConfigError("cors.allowed_origins must list at least one origin when cors.enabled is true")
        for origin in origins:
            parts = urlsplit(origin)
            if origin == "*" or "*" in origin or parts.scheme not in ("http", "https") or not parts.netloc \
                    or parts.path not in ("", "/") or parts.query or parts.fragment:
                raise ConfigError("cors.allowed_origins entries must be explicit scheme://host[:port] origins (no wildcard)")
    if mcp_keys:
        endpoint_path_problem(values["mcp.http.endpoint"])


def endpoint_path_problem(path: str) -> None:
    """Raise ConfigError unless `path` is a usable MCP endpoint path that shadows no API path."""
    if not path.startswith("/") or ".." in path or "\x00" in path or any(c in path for c in "?# \t\r\n\\"):
        raise ConfigError("mcp.http.endpoint must start with '/' and hold no '..', NUL, '?', '#', '\\' or whitespace")
    trimmed = path.rstrip("/") or "/"
    for api in API_PATHS:
        if trimmed == "/" or trimmed == api or trimmed.startswith(api + "/"):
            raise ConfigError("mcp.http.endpoint must not collide with an HTTP API path")


def load_settings(flags: dict[str, Any], *, config: str | None = None, env: dict[str, str] | None = None,
                  command: str = "serve") -> Settings:
    """Resolve every key. `flags` maps key names to raw flag strings (only flags given)."""
    env = dict(os.environ) if env is None else env
    config_path = Path(config).expanduser() if config else (
        Path(env["VAULT_AGENT_CONFIG"]).expanduser() if env.get("VAULT_AGENT_CONFIG") else user_config_file())
    toml: dict[str, Any] = {}
    if config and not config_path.is_file():
        raise ConfigError("--config must name a readable TOML file")
    if config_path.is_file():
        try:
            toml = _flatten(tomllib.loads(config_path.read_text(encoding="utf-8")))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
            raise ConfigError("the configuration file is not valid UTF-8 TOML") from None
    mcp_keys = command != "mcp"  # `vault-agent mcp` does not read mcp.* at all
    for name, value in toml.items():
        if name in INERT_KEYS:
            if not isinstance(value, INERT_KEYS[name]) or isinstance(value, bool) != (INERT_KEYS[name] is bool):
                raise ConfigError(f"{name} has the wrong type")
        elif name not in BY_NAME:
            raise ConfigError(f"unknown configuration key {name}" if name.isascii() and len(name) < 80
                              else "unknown configuration key")
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in KEYS:
        if key.mcp and not mcp_keys:
            values[key.name], sources[key.name] = key.default, "default"
            continue
        if key.name in flags:
            raw, source = flags[key.name], "flag"
        elif env.get(key.env, "") != "" or (key.env in env and key.kind in ("str", "path")):
            raw, source = env[key.env], "env"
        elif key.name in toml:
            raw, source = toml[key.name], "toml"
        else:
            values[key.name], sources[key.name] = key.default, "default"
            continue
        values[key.name], sources[key.name] = _coerce(key, raw, source), source
    for name in INERT_KEYS:
        if name in toml:
            values[name] = toml[name]
    _validate(values, mcp_keys=mcp_keys)
    return Settings(values, config_path if config_path.is_file() else None, sources)


def vault_identity(root: Path) -> str:
    """sha256 of the vault root's real path, first 16 bytes as hex (indexing.md#vault-identity)."""
    return hashlib.sha256(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def index_file(settings: Settings) -> Path | None:
    """{index.dir or user data dir/indexes}/{vaultIdentity}/index.sqlite; None without a vault."""
    root = settings.vault_root
    if root is None:
        return None
    base = settings["index.dir"] or (user_data_dir() / "indexes")
    return Path(base) / vault_identity(root) / "index.sqlite"
