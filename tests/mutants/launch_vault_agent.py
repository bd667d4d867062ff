"""Start the vault-agent reference with one deliberate defect, or as a correct variant:
`python launch_vault_agent.py MUTANT COMMAND [flags]` (COMMAND: index, serve, mcp, reindex).

Every command the suite runs (the server under test, index, serve, public, hold) goes through
this launcher with the same name, so a patch is in force wherever its defect lives. Each mutant
declares beside its patch the ids the suite must report for it (tests/test_mutants.py).
"""

from __future__ import annotations

import os
from pathlib import Path
import sys
import time
from contextlib import asynccontextmanager
from dataclasses import replace

try:
    from tests.mutants._dispatch import mutant, run, variant
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run, variant  # type: ignore[no-redef]

from reference.vault_agent import cli, config, core, errors, http_app, mcp_server, safety, validate

PROFILE = "vault-agent"


@mutant("VA-PAR-003", "VA-ERR-002", profile=PROFILE)
def va_mcp_code_differs():
    """Over MCP a missing chunk is reported as NOTE_NOT_FOUND; HTTP says CHUNK_NOT_FOUND."""
    original = mcp_server.rpc_error

    def rpc_error(error):
        if error.code == "CHUNK_NOT_FOUND":
            error = errors.VaultError("NOTE_NOT_FOUND")
        return original(error)
    mcp_server.rpc_error = rpc_error


@mutant("VA-ERR-001", profile=PROFILE)
def va_code_out_of_range():
    """Application errors carry their HTTP status as the JSON-RPC code's tail: -32404, -32413, ..."""
    original = errors.VaultError.rpc_code

    def rpc_code(self):
        code = original.fget(self)
        return code if code in (errors.VALIDATION_RPC, errors.INVALID_PARAMS_RPC) else -32000 - self.http_status
    errors.VaultError.rpc_code = property(rpc_code)


@mutant("VA-ERR-007", profile=PROFILE)
def va_abs_path_when_vault_gone():
    """When the vault directory has vanished, a note that cannot be read names its absolute path."""
    original = safety.resolve_note_file

    def resolve_note_file(rules, rel):
        if not os.path.isdir(rules.root):
            raise errors.VaultError("NOTE_NOT_FOUND", path=str(rules.root / rel))
        return original(rules, rel)
    safety.resolve_note_file = resolve_note_file
    core.resolve_note_file = resolve_note_file


@mutant("VA-LOG-001", profile=PROFILE)
def va_query_in_logs():
    """Every search logs its query on stderr."""
    original = core.Core.search

    def search(self, args):
        print(f"debug: search query={args.get('query')!r}", file=sys.stderr, flush=True)
        return original(self, args)
    core.Core.search = search


def _default(name, value):
    config.KEYS = tuple(replace(k, default=value) if k.name == name else k for k in config.KEYS)
    config.BY_NAME = {k.name: k for k in config.KEYS}


@mutant("VA-HTTP-001", "VA-CFG-001", profile=PROFILE, transport="http")
def va_mcp_on_by_default():
    """mcp.enabled defaults to true: serve answers MCP at /mcp unless told otherwise."""
    _default("mcp.enabled", True)


@mutant("VA-HTTP-005", profile=PROFILE, transport="http")
def va_public_without_key():
    """Every host counts as loopback: a 0.0.0.0 bind starts and serves without an API key."""
    config.Settings.loopback = property(lambda self: True)


@mutant("VA-SIZE-001", "VA-SIZE-003", profile=PROFILE)
def va_allow_large_ignored():
    """allowLarge is read as false whatever the caller sends."""
    original = validate.flag
    validate.flag = lambda args, name: False if name == "allowLarge" else original(args, name)


@mutant("VA-SIZE-004", profile=PROFILE)
def va_payload_cap_ignored():
    """The 50 MiB MCP cap is never applied: a 64 MiB download with allowLarge is sent whole
    (a message of about 170 MiB, which the suite never holds)."""
    original = core.Core.check_download
    core.Core.check_download = staticmethod(lambda st, allow_large, cap: original(st, allow_large, None))
    mcp_server.MCP_PAYLOAD_CAP = 1 << 40  # and the whole result's check after it


@mutant("VA-SIZE-005", profile=PROFILE, fresh=True)
def va_cap_after_full_read():
    """The 50 MiB MCP cap is checked after the file was read and base64-encoded."""
    import base64

    original = core.Core.get_attachment

    def get_attachment(self, args, *, cap=core.MCP_PAYLOAD_CAP):
        meta, real, st, download, allow_large = self.attachment(args)
        if download and allow_large:
            encoded = base64.b64encode(real.read_bytes())
            if cap is not None and 2 * len(encoded) > cap:
                raise errors.VaultError("QUERY_TOO_LARGE", limit=cap, size=st.st_size)
        return original(self, args, cap=cap)
    core.Core.get_attachment = get_attachment


@mutant("VA-FRESH-001", profile=PROFILE)
def va_freshness_warning_dropped():
    """A stale index reports freshness stale but no warning."""
    original = core.Core.freshness_warnings
    core.Core.freshness_warnings = staticmethod(lambda state: [] if state.freshness == "stale" else original(state))


@mutant("VA-FRESH-002", profile=PROFILE, options=("--request-timeout", "4"))  # the wait for a state that
# never shows is 1.5 request timeouts per phase: 6 s, not 30
def va_writer_lock_unseen():
    """Readers never look at the writer lock: while an index run holds it, search reports the
    freshness of the last index instead of pending or updating."""
    core.writer_phase = lambda index_dir: None


@mutant("VA-STDIO-010", "VA-STDIO-011", profile=PROFILE)
def va_stdin_close_kills():
    """At the end of stdin the process exits at once, dropping every call in flight (an answer
    half-written included)."""
    original = mcp_server.stdio_server

    @asynccontextmanager
    async def stdio_server():
        async with original() as (read, write):
            class Reader:
                def __aiter__(self):
                    return self._lines()

                async def _lines(self):
                    async for item in read:
                        yield item
                    os._exit(0)
            yield Reader(), write
    mcp_server.stdio_server = stdio_server


@mutant("VA-STDIO-003", profile=PROFILE)
def va_stdin_close_exit_status_1():
    """After stdin closes and every call is answered, vault-agent mcp exits with status 1."""
    original = cli.run_mcp

    def run_mcp(settings):
        original(settings)
        return 1
    cli.run_mcp = run_mcp


@mutant("VA-FRESH-003", profile=PROFILE)
def va_incompatible_index_searched():
    """search and related answer from an incompatible index (freshness incompatible) instead of failing."""
    original = core.Core._queryable

    def _queryable(self, state):
        if state.freshness != "incompatible":
            original(self, state)
    core.Core._queryable = _queryable


@mutant("VA-OUT-006", profile=PROFILE)
def va_note_without_frontmatter():
    """get_note answers the note's text with its frontmatter block cut off."""
    def edit(_core, reply):
        text = reply.data["content"]
        if text.startswith("---\n") and "\n---\n" in text[4:]:
            return replace(reply, data={**reply.data, "content": text[text.index("\n---\n", 4) + 5:]})
        return reply
    _edit_reply("get_note", edit)


@mutant("VA-OUT-007", profile=PROFILE)
def va_chunk_runs_to_the_note_end():
    """get_chunk answers its chunk followed by every later chunk of the note."""
    original = core.Core.get_chunk

    def get_chunk(self, args):
        reply = original(self, args)
        parts, index = [reply.data["content"]], reply.data.get("chunkIndex")
        while isinstance(index, int):
            try:
                parts.append(original(self, {**args, "chunkIndex": index + len(parts)}).data["content"])
            except errors.VaultError:
                break
        return replace(reply, data={**reply.data, "content": "\n\n".join(parts)})
    core.Core.get_chunk = get_chunk


@mutant("VA-SRCH-002", profile=PROFILE)
def va_default_limit_20():
    """search and related without a limit answer up to 20 results."""
    validate.DEFAULT_LIMIT = 20


@mutant("VA-HTTP-012", profile=PROFILE, transport="http")
def va_public_health_open():
    """On a non-loopback bind GET /health is served without the API key."""
    original = http_app.Gate._auth

    def _auth(self, app):
        guarded = original(self, app)

        async def gate(scope, receive, send):
            if scope["type"] == "http" and scope["path"] == "/health" and not self.settings.loopback:
                return await app(scope, receive, send)
            return await guarded(scope, receive, send)
        return gate
    http_app.Gate._auth = _auth


@mutant("VA-HTTP-013", profile=PROFILE, transport="http")
def va_endpoint_path_unchecked():
    """mcp.http.endpoint is checked only for collisions with API paths: a path without a leading
    /, with .. or with a null byte is taken as given."""
    original = config.endpoint_path_problem

    def endpoint_path_problem(path):
        return original("/" + path.lstrip("/").replace("..", "").replace("\x00", ""))
    config.endpoint_path_problem = endpoint_path_problem


@mutant("VA-HTTP-002", profile=PROFILE, transport="http")
def va_endpoint_on_an_api_path():
    """mcp.http.endpoint may name an API path (/search, /status): serve starts with the MCP
    endpoint and the API path on one route."""
    original = config.endpoint_path_problem

    def endpoint_path_problem(path):
        trimmed = path.rstrip("/") or "/"
        if any(trimmed == api or trimmed.startswith(api + "/") for api in config.API_PATHS):
            return None
        return original(path)
    config.endpoint_path_problem = endpoint_path_problem


@mutant("VA-STDIO-004", "MCP-STDIO-002", profile=PROFILE)
def va_exit_lingers():
    """After its last answer the stdio server lingers 8 s before it exits (past the 5 s of both
    requirements, well within the 75 s the suite waits before it gives up on the exit)."""
    original = cli.run_mcp

    def run_mcp(settings):
        code = original(settings)
        time.sleep(8)
        return code
    cli.run_mcp = run_mcp


@mutant("VA-API-003", profile=PROFILE)
def va_body_limit_ignored():
    """The HTTP API reads JSON bodies of any size: a padded 65 KiB search is answered 200."""
    http_app.MAX_BODY = 1 << 30


@mutant("VA-HTTP-014", profile=PROFILE, transport="http")
def va_wildcard_origin_accepted():
    """cors.allowed_origins may hold "*": serve starts with it and grants every origin."""
    original = config._validate

    def _validate(values, *, mcp_keys):
        origins = values["cors.allowed_origins"]
        explicit = [o for o in origins if "*" not in o]
        checked = {**values, "cors.allowed_origins": explicit,
                   "cors.enabled": values["cors.enabled"] and bool(explicit)}
        return original(checked, mcp_keys=mcp_keys)
    config._validate = _validate
    original_ok = http_app.Gate._origin_ok
    http_app.Gate._origin_ok = lambda self, origin: "*" in self.cors_origins or original_ok(self, origin)


@mutant("VA-API-004", profile=PROFILE)
def va_get_not_implemented():
    """The HTTP API answers every GET (health, status, notes, chunks, attachments) with 501 and a
    text body."""
    original = http_app.build_app

    def build_app(core_, settings, port):
        app = original(core_, settings, port)

        async def gated(scope, receive, send):
            endpoint = settings["mcp.http.endpoint"]
            if scope["type"] == "http" and scope["method"] == "GET" and scope["path"] != endpoint:
                await send({"type": "http.response.start", "status": 501,
                            "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
                await send({"type": "http.response.body", "body": b"Not Implemented"})
                return
            await app(scope, receive, send)
        return gated
    http_app.build_app = build_app


@mutant("MCP-HTTP-004", profile=PROFILE, transport="http")
def va_no_origin_check():
    """Any Origin is accepted."""
    http_app.Gate._origin_ok = lambda self, origin: True


@mutant("VA-PROTO-002", profile=PROFILE)
def va_version_echoed():
    """An initialize asking for 2024-11-05 (older than 2025-03-26) is answered with 2024-11-05."""
    mcp_server.OLDEST_VERSION = "1900-01-01"


@mutant("VA-RO-002", profile=PROFILE)
def va_index_created():
    """vault-agent mcp builds an index at start when none exists."""
    original = cli.run_mcp

    def run_mcp(settings):
        if settings.vault_root is not None and settings.vault_root.is_dir():
            instance = core.Core(settings)
            if not instance.reader.exists():
                instance.index(full=True)
        return original(settings)
    cli.run_mcp = run_mcp


@mutant("VA-PATH-003", profile=PROFILE)
def va_prefix_containment():
    """get_attachment's only containment check is a bare prefix test without a separator (the
    resolved path starts with the vault's): vault_evil/ counts as inside vault/."""
    original = safety.resolve_attachment

    def resolve_attachment(rules, raw):
        rel = safety.check_relative(raw)
        root_real = safety.real_root(rules.root)
        real = os.path.realpath(os.path.join(root_real, rel))
        if real.startswith(root_real) and not real.startswith(root_real + os.sep) and os.path.isfile(real):
            return rel, Path(real), os.stat(real)
        return original(rules, raw)
    safety.resolve_attachment = core.resolve_attachment = resolve_attachment


@mutant("VA-VIS-001", profile=PROFILE)
def va_user_excludes_not_for_attachments():
    """get_attachment applies the default exclusions only: a file under a vault.exclude folder is
    served (search still leaves excluded notes out)."""
    original = safety.resolve_attachment

    def resolve_attachment(rules, raw):
        return original(safety.Rules.make(rules.root, [], rules.skip_dir), raw)
    safety.resolve_attachment = core.resolve_attachment = resolve_attachment


@mutant("VA-OUT-003", profile=PROFILE)
def va_query_echoed():
    """Every search payload carries the raw query back."""
    original = core.Core.search

    def search(self, args):
        reply = original(self, args)
        reply.data["query"] = args.get("query")
        return reply
    core.Core.search = search


@mutant("VA-OUT-004", profile=PROFILE)
def va_raw_scores():
    """Scores are raw ranking values (0 to 100), not normalised to 0..1."""
    original = core.Core.search

    def search(self, args):
        reply = original(self, args)
        for result in reply.data.get("results", []):
            result["score"] = round(result["score"] * 100 + 1, 6)
        return reply
    core.Core.search = search


@mutant("VA-OUT-005", profile=PROFILE)
def va_plain_text_notes():
    """Notes and chunks come as text/plain."""
    core.NOTE_TYPE = "text/plain"


@mutant("VA-STDIO-009", profile=PROFILE, fresh=True)
def va_stdio_starts_http():
    """vault-agent mcp also opens an HTTP listener on a loopback port."""
    import socket

    original = cli.run_mcp

    def run_mcp(settings):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        try:
            return original(settings)
        finally:
            listener.close()
    cli.run_mcp = run_mcp


@mutant("VA-OUT-001", profile=PROFILE)
def va_long_snippets():
    """Snippets may run to 600 characters: only long chunks show it (short ones get at most half)."""
    core.SNIPPET_MAX = 600


@mutant("VA-HTTP-009", profile=PROFILE, transport="http")
def va_loopback_skips_key():
    """On a loopback bind a configured API key is not asked for."""
    original = http_app.Gate.__init__

    def init(self, app, settings, mcp_path):
        original(self, app, settings, mcp_path)
        if settings.loopback:
            self.key = b""
    http_app.Gate.__init__ = init


@mutant("VA-CFG-003", profile=PROFILE, transport="http")
def va_unknown_keys_ignored():
    """Unknown configuration keys are dropped silently instead of stopping start-up."""
    original = config._flatten

    def flatten(table, prefix=""):
        return {k: v for k, v in original(table, prefix).items() if k in config.BY_NAME or k in config.INERT_KEYS}
    config._flatten = flatten


@mutant("VA-CHUNK-001", profile=PROFILE)
def va_frontmatter_in_chunk():
    """get_chunk answers the first chunk with the note's frontmatter block in front of it."""
    original = core.Core.get_chunk

    def get_chunk(self, args):
        reply = original(self, args)
        if reply.data.get("chunkIndex") == 0:
            text = (self._rules().root / reply.data["path"]).read_text(encoding="utf-8")
            if text.startswith("---\n"):
                reply.data["content"] = text[:text.index("\n---\n", 4) + 5] + reply.data["content"]
        return reply
    core.Core.get_chunk = get_chunk


@mutant("VA-MODE-002", profile=PROFILE)
def va_silent_embedding_fallback():
    """With embeddings configured but unavailable, a call without a mode falls back to lexical
    without the EMBEDDING_UNAVAILABLE warning."""
    original = core.Core._mode

    def _mode(self, requested, state, default):
        used, warnings = original(self, requested, state, default)
        return (used, []) if requested is None else (used, warnings)
    core.Core._mode = _mode


@mutant("VA-MODE-002", profile=PROFILE)
def va_unreachable_embeddings_incompatible():
    """With embeddings configured but unreachable (embedding.require false), search and related
    without a mode fail with INDEX_INCOMPATIBLE instead of falling back to lexical."""
    original = core.Core._mode

    def _mode(self, requested, state, default):
        if requested is None and state.model is None and self.settings["embedding.enabled"]:
            raise errors.VaultError("INDEX_INCOMPATIBLE")
        return original(self, requested, state, default)
    core.Core._mode = _mode


@mutant("VA-ERR-002", profile=PROFILE)
def va_malformed_id_internal():
    """A note id that is not of the server's own shape fails as INTERNAL_ERROR (on both
    transports), not INVALID_ID or NOTE_NOT_FOUND (failure class id_malformed)."""
    original = validate.note_id

    def note_id(args, name="noteId"):
        value = args.get(name)
        if isinstance(value, str) and value and not validate.NOTE_ID.fullmatch(value):
            raise errors.VaultError("INTERNAL_ERROR")
        return original(args, name)
    validate.note_id = note_id


@mutant("VA-LOG-002", profile=PROFILE)
def va_relative_path_in_logs():
    """Every get_attachment logs the vault-relative path it was asked for (no absolute path)."""
    original = core.Core.get_attachment

    def get_attachment(self, args, **kwargs):
        print(f"event=attachment path={args.get('vaultRelativePath')}", file=sys.stderr, flush=True)
        return original(self, args, **kwargs)
    core.Core.get_attachment = get_attachment


def _generate_key(write, announce=False):
    """Serve on a non-loopback host with no key by generating one: `write(settings, key)` stores it."""
    import secrets
    original = cli.run_serve

    def run_serve(settings):
        if not settings.loopback and not settings.api_key:
            key = secrets.token_urlsafe(32)
            write(settings, key)
            if announce:
                print(f"vault-agent: generated API key {key}", file=sys.stderr, flush=True)
            settings = replace(settings, values={**settings.values, "server.api_key": key})
        return original(settings)
    cli.run_serve = run_serve


@mutant("VA-HTTP-010", profile=PROFILE, transport="http")
def va_generated_key_in_custom_config():
    """Started on 0.0.0.0 with no key, serve generates one and appends it to the --config file."""
    def write(settings, key):
        with open(settings.config_path, "a", encoding="utf-8") as handle:
            handle.write(f'\n[server]\napi_key = "{key}"\n')
    _generate_key(write)


def _store_in_user_config(_settings, key):
    path = config.user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[server]\napi_key = "{key}"\n', encoding="utf-8")


@mutant("VA-HTTP-011", profile=PROFILE, transport="http")
def va_generated_key_printed():
    """Started on 0.0.0.0 with no key, serve generates one, stores it in the user-local
    configuration and prints it at start-up."""
    _generate_key(_store_in_user_config, announce=True)


def _wikilinks(text):
    import re
    return [m.group(1).strip() for m in re.finditer(r"\[\[([^\]|#]+)", text)]


def _edit_reply(method, edit):
    """Wrap core.Core.<method> so `edit(core, reply)` returns the reply it answers."""
    original = getattr(core.Core, method)

    def wrapped(self, args, **kwargs):
        return edit(self, original(self, args, **kwargs))
    setattr(core.Core, method, wrapped)


def _with_links(reply, links):
    return replace(reply, data={**reply.data, "links": links})


@mutant("VA-LINK-001", profile=PROFILE)
def va_links_all_resolved():
    """get_note lists every wikilink as resolved, the ambiguous and the missing ones too."""
    def edit(_core, reply):
        targets = _wikilinks(reply.data["content"])
        links = {"resolved": [{"target": t} for t in targets], "unresolved": []}
        return _with_links(reply, links) if targets else reply
    _edit_reply("get_note", edit)


@mutant("VA-LINK-002", profile=PROFILE)
def va_chunk_links_of_whole_note():
    """get_chunk summarises the links of the whole note, not only those its chunk contains."""
    def edit(engine, reply):
        targets = _wikilinks((engine._rules().root / reply.data["path"]).read_text(encoding="utf-8"))
        links = {"resolved": [], "unresolved": [{"target": t} for t in targets]}
        return _with_links(reply, links) if targets else reply
    _edit_reply("get_chunk", edit)


@mutant("VA-LINK-003", profile=PROFILE)
def va_unresolved_link_warning():
    """get_note warns about the wikilinks no single note matches."""
    def edit(_core, reply):
        if not any(t != "gamma" for t in _wikilinks(reply.data["content"])):
            return reply
        return replace(reply, warnings=[*reply.warnings, {"code": "WIKILINK_UNRESOLVED",
                                                          "message": "A wikilink matches no single note."}])
    _edit_reply("get_note", edit)


# -- the correct variant ------------------------------------------------------------------------
SNAKE = {"noteId": "note_id", "chunkIndex": "chunk_index", "allowLarge": "allow_large",
         "vaultRelativePath": "vault_relative_path"}
CAMEL = {snake: camel for camel, snake in SNAKE.items()}


def _snake_schema(schema):
    props = {SNAKE.get(k, k): v for k, v in schema["properties"].items()}
    return {**schema, "properties": props, "required": [SNAKE.get(r, r) for r in schema.get("required", [])]}


def _variant():
    """Not a defect: every choice the vault-agent documents leave open, taken the other way."""
    import mcp_types
    from mcp.shared.exceptions import MCPError

    # snake_case parameter names (the seed's prose), renamed to the core's camelCase on the way in.
    mcp_server.TOOLS = {name: (description, _snake_schema(schema))
                        for name, (description, schema) in mcp_server.TOOLS.items()}
    original_runner = mcp_server._runner

    def runner(instance, name):
        run_tool = original_runner(instance, name)

        def run_renamed(args):
            args = {CAMEL.get(k, k): v for k, v in args.items()}
            try:
                return run_tool(args)
            except errors.VaultError as error:
                field = error.details.get("field")
                if error.protocol and field in args:  # a wrong type: the validation error, -32000
                    raise errors.VaultError(error.code, field=field) from None
                raise
        return run_renamed
    mcp_server._runner = runner

    # '..' and absolute paths are INVALID_PATH (mcp-tools.md), not PATH_OUTSIDE_VAULT.
    original_check = safety.check_relative

    def check_relative(rel):
        try:
            return original_check(rel)
        except errors.VaultError as error:
            if error.code == "PATH_OUTSIDE_VAULT":
                raise errors.VaultError("INVALID_PATH", field="vaultRelativePath") from None
            raise
    safety.check_relative = check_relative

    # An unsupported version is an error (mcp-transports.md), not a counter-offer.
    async def version_error(ctx, call_next):
        params = ctx.params if isinstance(ctx.params, dict) else {}
        asked = params.get("protocolVersion")
        if ctx.method == "initialize" and isinstance(asked, str) and asked < mcp_server.OLDEST_VERSION:
            raise MCPError(code=mcp_types.INVALID_REQUEST, message="Unsupported MCP protocol version.",
                           data={"protocolVersion": asked})
        return await mcp_server._version_floor(ctx, call_next)
    original_build = mcp_server.build_server

    def build_server(instance, transport):
        server = original_build(instance, transport)
        server.middleware[:] = [m for m in server.middleware if m is not mcp_server._version_floor] + [version_error]
        return server
    mcp_server.build_server = build_server
    http_app.build_server = build_server

    # get_note and get_chunk refuse an incompatible index instead of resolving from the vault.
    original_lookup = core.Core._lookup

    def lookup(self, nid):
        found = original_lookup(self, nid)
        if found[0].freshness == "incompatible":
            raise errors.VaultError("INDEX_INCOMPATIBLE")
        return found
    core.Core._lookup = lookup

    # Statuses where the documents disagree: mcp-tools.md's table.
    for code, status in (("INDEX_NOT_FOUND", 404), ("PATH_OUTSIDE_VAULT", 400), ("AUTH_FAILED", 403)):
        errors.ERRORS[code] = replace(errors.ERRORS[code], http=status)

    # No structuredContent: the payload is the one JSON text block.
    class Types:
        def __getattr__(self, name):
            return getattr(mcp_types, name)

        @staticmethod
        def CallToolResult(content, structured_content=None, **kw):  # noqa: N802 - the SDK's name
            return mcp_types.CallToolResult(content=content, **kw)
    mcp_server.types = Types()

    # A non-loopback bind without a key generates one and stores it in the default user-local
    # configuration, printing nothing of it (Phase 1 server-api.md), instead of refusing to start.
    _generate_key(_store_in_user_config)


@variant(profile=PROFILE)
def va_variant_open_choices():
    """Not a defect, over stdio: snake_case parameters, -32000 for wrong types, INVALID_PATH for
    '..' and absolute paths, an error for an unsupported version, get_note refusing an
    incompatible index, mcp-tools.md's HTTP statuses, no structuredContent, a generated key."""
    _variant()


@variant(profile=PROFILE, transport="http")
def va_variant_open_choices_http():
    """Not a defect, over Streamable HTTP: the same choices as va_variant_open_choices."""
    _variant()


# -- a variant that speaks only 2025-03-26 and takes the sides issue #15 found open ----------------
PINNED_VERSION = "2025-03-26"


def _pinned():
    """Not a defect: protocol 2025-03-26 only (mcp-transports.md pins it), two codes for the '..'
    class, no error `details`, `pending` after an edit, the vault root in serve's startup line, and
    an exit some seconds after stdin closes."""
    import mcp_types
    from mcp.shared.exceptions import MCPError

    # Any other initialize protocolVersion is an invalid request (-32600), as mcp-transports.md says.
    async def pinned(ctx, call_next):
        params = ctx.params if isinstance(ctx.params, dict) else {}
        asked = params.get("protocolVersion")
        if ctx.method == "initialize" and isinstance(asked, str) and asked != PINNED_VERSION:
            raise MCPError(code=mcp_types.INVALID_REQUEST, message="Unsupported MCP protocol version.",
                           data={"supported": [PINNED_VERSION]})
        return await mcp_server._version_floor(ctx, call_next)
    original_build = mcp_server.build_server

    def build_server(instance, transport):
        server = original_build(instance, transport)
        server.middleware[:] = [m for m in server.middleware if m is not mcp_server._version_floor] + [pinned]
        return server
    mcp_server.build_server = build_server
    http_app.build_server = build_server

    # A '..' path that stays inside the vault is malformed (INVALID_PATH, mcp-tools.md); one that
    # climbs out resolves outside (PATH_OUTSIDE_VAULT): one class, two codes the documents allow.
    original_check = safety.check_relative

    def check_relative(rel):
        try:
            return original_check(rel)
        except errors.VaultError as error:
            if error.code == "PATH_OUTSIDE_VAULT" and not rel.startswith("/") \
                    and not os.path.normpath(rel).startswith(".."):
                raise errors.VaultError("INVALID_PATH", field="vaultRelativePath") from None
            raise
    safety.check_relative = check_relative

    # No `details` on errors: optional over HTTP (status-api.md) and MCP (mcp-tools.md).
    errors.VaultError.body = lambda self: {"error": {"code": self.code, "message": self.message}}
    mcp_server.rpc_error = lambda error: MCPError(code=error.rpc_code, message=error.message,
                                                  data={"errorCode": error.code})

    # A known edit is pending (a watcher waiting for its debounce), not stale.
    original_state = core.Core.state

    def state(self, *, scan=True):
        found = original_state(self, scan=scan)
        return replace(found, freshness="pending") if found.freshness == "stale" else found
    core.Core.state = state

    # serve's startup line names the vault root (Phase 1 indexing.md allows it).
    original_serve = cli.run_serve

    def run_serve(settings):
        print(f"vault-agent: serving the vault at {settings.vault_root}", file=sys.stderr, flush=True)
        return original_serve(settings)
    cli.run_serve = run_serve

    # Exits 3 s after stdin closes: the documents set no time.
    original_mcp = cli.run_mcp

    def run_mcp(settings):
        code = original_mcp(settings)
        time.sleep(3)
        return code
    cli.run_mcp = run_mcp


@variant(profile=PROFILE)
def va_variant_pinned_version():
    """Not a defect, over stdio: only protocol 2025-03-26, two codes for '..', no error details,
    pending after an edit, exiting 3 s after stdin closes."""
    _pinned()


@variant(profile=PROFILE, transport="http")
def va_variant_pinned_version_http():
    """Not a defect, over Streamable HTTP: only protocol 2025-03-26, and the sides of
    va_variant_pinned_version, with the vault root in serve's startup line."""
    _pinned()


# -- a variant that reads ahead and drops what it had not started, and calls an exclude change stale --
def _read_ahead():
    """Not a defect: stdin is read ahead into a queue and tool calls start one at a time; when
    stdin closes, the queued calls not yet started are dropped ("does not start new invocations
    after stdin is closed"), the ones started complete, and the process exits 0."""
    import anyio

    original = mcp_server.stdio_server

    def is_call(item):
        message = getattr(getattr(item, "message", None), "root", getattr(item, "message", None))
        return getattr(message, "method", None) == "tools/call"

    @asynccontextmanager
    async def stdio_server():
        async with original() as (read, write):
            send, receive = anyio.create_memory_object_stream(1000)
            closed = anyio.Event()

            async def pump():
                async with send:
                    async for item in read:
                        await send.send(item)
                    closed.set()

            class Reader:
                def __aiter__(self):
                    return self._items()

                async def _items(self):
                    async for item in receive:
                        if closed.is_set() and is_call(item):
                            continue  # read, never started
                        yield item
                        if is_call(item):
                            await anyio.sleep(0.01)  # one call started at a time
            async with anyio.create_task_group() as tg:
                tg.start_soon(pump)
                yield Reader(), write
                tg.cancel_scope.cancel()
    mcp_server.stdio_server = stdio_server


@variant(profile=PROFILE)
def va_variant_read_ahead_stale_excludes():
    """Not a defect, over stdio: calls read but not started when stdin closes go unanswered, and
    an index built under another vault.exclude is stale (answered with a warning), not incompatible."""
    _read_ahead()
    # The exclude change is not a reason for incompatibility: the notes the new rules leave out
    # are then index records with no file to match, so the state reads stale, with its warning.
    original = core.incompatibilities
    core.incompatibilities = lambda manifest, wanted, **kw: [r for r in original(manifest, wanted, **kw)
                                                              if r != "INDEX_EXCLUDES_CHANGED"]


if __name__ == "__main__":
    sys.exit(run("launch_vault_agent.py", cli.main))
