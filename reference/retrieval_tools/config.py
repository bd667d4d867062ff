"""Where the two roots are: DOCS_ROOT and CODE_ROOT from the environment, else `docs_root`
and `code_root` from a TOML file (--config, else $RT_CONFIG, else ./retrieval-tools.toml).

The environment wins per variable. Relative roots in the file resolve against the file's
directory. Every failure is one ConfigError whose message names the variable and the reason
(never a directory listing, never the root's contents).
"""

from __future__ import annotations

import argparse
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ENV_DOCS = "DOCS_ROOT"
ENV_CODE = "CODE_ROOT"
ENV_CONFIG = "RT_CONFIG"
DEFAULT_CONFIG = "retrieval-tools.toml"
PROG = "retrieval-tools"
# repo name -> (environment variable, config-file key)
SOURCES = {"docs": (ENV_DOCS, "docs_root"), "code": (ENV_CODE, "code_root")}


class ConfigError(Exception):
    """The roots cannot be determined or one is unusable. str() is one line for stderr."""


@dataclass(frozen=True)
class Roots:
    """Real (symlink-resolved) paths of the two repository roots."""

    docs: Path
    code: Path

    def get(self, repo: str) -> Path:
        return self.docs if repo == "docs" else self.code


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Read-only retrieval MCP server (stdio) over a docs root and a code root.",
    )
    parser.add_argument(
        "--config",
        help=f"TOML file with docs_root and code_root (else ${ENV_CONFIG}, else ./{DEFAULT_CONFIG}); "
        f"${ENV_DOCS} and ${ENV_CODE} win over it",
    )
    return parser.parse_args(argv)


def root_problem(path: Path) -> str | None:
    """Why `path` cannot serve as a root ("does not exist", ...), or None when it can."""
    try:
        if not path.exists():
            return "does not exist"
        if not path.is_dir():
            return "is not a directory"
    except OSError:
        return "is not readable"
    if not os.access(path, os.R_OK | os.X_OK):
        return "is not readable"
    try:
        with os.scandir(path) as entries:
            next(entries, None)
    except OSError:
        return "is not readable"
    return None


def _read_config(path: Path, label: str) -> dict:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{label} file does not exist") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{label} file is not readable") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{label} file is not valid TOML") from exc
    return data


def load_roots(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Roots:
    """Resolve both roots in precedence order and check each is a readable directory."""
    env = os.environ if environ is None else environ
    chosen: dict[str, Path] = {}
    for repo, (var, _key) in SOURCES.items():
        value = env.get(var, "")
        if value.strip():
            chosen[repo] = Path(value).expanduser()

    named = args.config or env.get(ENV_CONFIG, "").strip() or None
    label = "--config" if args.config else (ENV_CONFIG if named else DEFAULT_CONFIG)
    config_path = Path(named) if named else Path(DEFAULT_CONFIG)
    config: dict = {}
    if named or (len(chosen) < len(SOURCES) and config_path.is_file()):
        config = _read_config(config_path, label)

    for repo, (var, key) in SOURCES.items():
        if repo in chosen:
            continue
        if key not in config:
            raise ConfigError(f"{var} is not set (set it in the environment or as {key} in {DEFAULT_CONFIG})")
        value = config[key]
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{var} is invalid ({key} in the config file must be a non-empty string)")
        chosen[repo] = (config_path.parent / Path(value).expanduser()).absolute()

    real: dict[str, Path] = {}
    for repo, (var, _key) in SOURCES.items():
        path = chosen[repo].absolute()
        problem = root_problem(path)
        if problem:
            raise ConfigError(f"{var} {problem}")
        real[repo] = Path(os.path.realpath(path))
    return Roots(docs=real["docs"], code=real["code"])
