"""`vault-agent` (console script `rc-vault-agent`, or `python -m reference.vault_agent`).

Commands: `index` and `reindex` (build the index locally, under the same writer lock the
server uses), `serve` (HTTP API, plus Streamable HTTP MCP when mcp.enabled), `mcp` (stdio MCP,
no transport flag, no MCP flags). Setting flags may come before or after the command.

Exit codes (Phase 1 cli.md#cli-output-and-exit-codes): 0 success, 1 runtime or indexing
failure, 2 validation or configuration error, 3 authentication, 4 not found.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .config import KEYS, MIN_API_KEY_CHARS, PROG, ConfigError, Settings, load_settings
from .errors import ERRORS, VaultError
from .safety import configure_logging, log_event

EXIT = {"INDEX_NOT_FOUND": 4, "NOTE_NOT_FOUND": 4, "CHUNK_NOT_FOUND": 4, "ATTACHMENT_NOT_FOUND": 4,
        "AUTH_REQUIRED": 3, "AUTH_FAILED": 3, "CONFIG_INVALID": 2, "API_KEY_REQUIRED": 2,
        "VAULT_NOT_CONFIGURED": 2}


def _settings_parser(*, mcp_flags: bool) -> argparse.ArgumentParser:
    """Flags for every configuration key; defaults are SUPPRESS so only given flags appear."""
    parser = argparse.ArgumentParser(add_help=False)
    group = parser.add_argument_group("settings (flags > VAULT_AGENT_* environment > TOML > defaults)")
    group.add_argument("--config", default=argparse.SUPPRESS, help="user-local TOML configuration file")
    for key in KEYS:
        if key.mcp and not mcp_flags:
            continue
        kwargs: dict[str, Any] = {"dest": "key:" + key.name, "default": argparse.SUPPRESS,
                                  "help": f"{key.name} (env {key.env})"}
        if key.kind == "bool":
            kwargs.update(nargs="?", const="true", metavar="true|false")
        group.add_argument(key.flag, **kwargs)
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    common = _settings_parser(mcp_flags=False)
    parser = argparse.ArgumentParser(prog=PROG, parents=[common],
                                     description="Reference vault-agent: local Markdown vault retrieval over HTTP and MCP.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("index", "reindex"):
        sub = commands.add_parser(name, parents=[common], help=f"{'incremental' if name == 'index' else 'full'} index build")
        sub.add_argument("--require-embeddings", action="store_true", default=argparse.SUPPRESS)
        sub.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    commands.add_parser("serve", parents=[_settings_parser(mcp_flags=True)], help="HTTP API (+ /mcp when enabled)")
    commands.add_parser("mcp", parents=[common], help="MCP over stdio (always available; no flags of its own)")
    return parser.parse_args(argv)


def _fail(code: str, detail: str | None = None) -> int:
    text = ERRORS[code].message if detail is None else f"{ERRORS[code].message} {detail}"
    print(f"{code}: {text}", file=sys.stderr)
    return EXIT.get(code, 1)


def _settings(args: argparse.Namespace) -> Settings:
    flags = {name[4:]: value for name, value in vars(args).items() if name.startswith("key:")}
    return load_settings(flags, config=getattr(args, "config", None), command=args.command)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        settings = _settings(args)
    except ConfigError as exc:
        configure_logging("info")
        return _fail("CONFIG_INVALID", str(exc))
    configure_logging(settings["server.log_level"])
    if args.command == "mcp":
        return run_mcp(settings)
    if args.command == "serve":
        return run_serve(settings)
    return run_index(settings, full=args.command == "reindex",
                     require=True if getattr(args, "require_embeddings", False) else None,
                     as_json=getattr(args, "json", False))


def run_index(settings: Settings, *, full: bool, require: bool | None, as_json: bool) -> int:
    from .core import Core

    if settings.vault_root is None or not settings.vault_root.is_dir():
        return _fail("CONFIG_INVALID", "vault.root must name an existing directory.")
    try:
        reply = Core(settings).index(full=full, require_embeddings=require)
    except VaultError as error:
        if as_json:
            print(json.dumps(error.body()))
        return _fail(error.code)
    except Exception:  # noqa: BLE001 - never a traceback (it would print paths)
        return _fail("INTERNAL_ERROR")
    data = reply.data
    log_event(event="index.done", mode=data["mode"], notes=data["notesIndexed"], chunks=data["chunksIndexed"],
              skipped=data["notesSkipped"], warnings=data["warningCount"])
    if as_json:
        print(json.dumps(reply.envelope(), ensure_ascii=False))
    else:
        print(f"{data['mode']} index: {data['notesIndexed']} notes, {data['chunksIndexed']} chunks indexed, "
              f"{data['notesSkipped']} skipped, {data['warningCount']} warnings")
        for item in reply.warnings:
            print(f"{item['code']}: {item['message']}", file=sys.stderr)
    return 0


def run_mcp(settings: Settings) -> int:
    import anyio

    from .core import Core
    from .mcp_server import build_server, serve_stdio

    # Starts without a vault or an index: every tool then answers with an actionable error.
    core = Core(settings) if settings.vault_root is not None else None
    log_event(event="mcp.start", transport="stdio")
    anyio.run(serve_stdio, build_server(core, "stdio"))
    return 0


def run_serve(settings: Settings) -> int:
    import uvicorn

    from .core import Core
    from .http_app import build_app

    if settings.vault_root is None or not settings.vault_root.is_dir():
        return _fail("CONFIG_INVALID", "vault.root must name an existing directory.")
    if not settings.loopback:
        if len(settings.api_key) < MIN_API_KEY_CHARS:
            return _fail("API_KEY_REQUIRED")
        print(f"{PROG}: warning: listening on a non-loopback host; every request needs the API key.",
              file=sys.stderr)
    core = Core(settings)
    if settings["index.bootstrap"] and not core.reader.exists():
        try:
            core.index(full=True)
        except VaultError as error:
            return _fail(error.code)
        except Exception:  # noqa: BLE001
            return _fail("INTERNAL_ERROR")
    port = settings["server.port"]
    state = core.state(scan=False)
    log_event(event="server.start", mcp_enabled=bool(settings["mcp.enabled"]), loopback=settings.loopback,
              api_key_required=bool(settings.api_key) or not settings.loopback, freshness=state.freshness,
              embeddings=state.embedding_state)
    uvicorn.run(build_app(core, settings, port), host=settings.host, port=port, log_level="critical",
                access_log=False, lifespan="on" if settings["mcp.enabled"] else "off")
    return 0


if __name__ == "__main__":
    sys.exit(main())
