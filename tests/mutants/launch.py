"""Start the reference server with one deliberate defect: `python launch.py MUTANT [server args]`.

Each mutant patches one function of the reference from the outside, so the reference itself
stays clean; tests/test_mutants.py runs the suite against each and expects it to fail on
the requirement ids listed in MUTANTS.
"""

from __future__ import annotations

import json
import os
import posixpath
import random
import sys
from pathlib import Path

import mcp_types as types

try:
    from tests.mutants._dispatch import mutant, run, variant
except ImportError:  # run as a script from tests/mutants
    from _dispatch import mutant, run, variant  # type: ignore[no-redef]

from reference.section_source import builder, paths, server, tools


def _patch_tool(name, fn):
    setattr(tools, name, fn)
    description = tools.TOOLS[name][0]
    tools.TOOLS[name] = (description, fn)


def _wrap_source(transform):
    original = tools.get_section_source

    def patched(vault, raw_path):
        return transform(vault, raw_path, original(vault, raw_path))

    _patch_tool("get_section_source", patched)


@mutant("SSL-OUT-002", "SSL-SEC-001", "SSL-E2E-002", profile="section-source-local")
def body_in_output():
    """Adds a `body` field with note text to every section."""
    def add(vault, raw, out):
        text = paths.read_note(vault, paths.normalize_request_path(raw))
        for section in out["sections"]:
            section["body"] = text[:400]
        return out
    _wrap_source(add)


@mutant("SSL-OUT-001", "SSL-OUT-007", profile="section-source-local")
def snippet_field():
    """Adds a top-level `snippet` with the note's last characters."""
    def add(vault, raw, out):
        text = paths.read_note(vault, paths.normalize_request_path(raw))
        out["snippet"] = text[-120:]
        return out
    _wrap_source(add)


@mutant("SSL-SEC-002", profile="section-source-local")
def frontmatter_in_output():
    """Puts the whole frontmatter into `title`."""
    def add(vault, raw, out):
        front, _ = builder.split_frontmatter(paths.read_note(vault, paths.normalize_request_path(raw)))
        if front:
            out["title"] = json.dumps(front, default=str)
        return out
    _wrap_source(add)


@mutant("SSL-ERR-004", profile="section-source-local")
def absolute_path_in_error():
    """Names the note's absolute path in the not-found error."""
    original = paths.resolve_note

    def resolve(vault_real, relative):
        try:
            return original(vault_real, relative)
        except paths.NoteNotFound:
            server.MSG_MISSING = f"Note not found: {vault_real / relative}"
            raise
    paths.resolve_note = resolve


@mutant("SSL-ERR-005", "SSL-ERR-004", profile="section-source-local")
def unsafe_path_echoed():
    """Echoes the rejected path in the error."""
    original = paths.normalize_request_path

    def normalize(raw):
        try:
            return original(raw)
        except paths.UnsafePath:
            server.MSG_PATH = f"Invalid path: {raw}"
            raise
    tools.normalize_request_path = normalize


@mutant("SSL-IN-005", profile="section-source-local")
def traversal_resolved():
    """Collapse `..` instead of rejecting it (the containment check still runs)."""
    def normalize(raw):
        if not isinstance(raw, str) or not raw.strip():
            raise paths.UnsafePath("path is required")
        text = raw.strip().replace("\\", "/").lstrip("/")
        return posixpath.normpath(text)
    tools.normalize_request_path = normalize


@mutant("SSL-TOOL-004", profile="section-source-local")
def open_input_schema():
    """The input schema does not say additionalProperties false (extra arguments are still
    refused when called): an advisory only."""
    schema = dict(server.INPUT_SCHEMA)
    schema.pop("additionalProperties", None)
    server.INPUT_SCHEMA = schema  # what tools/list shows; calls still validate against the closed one


@mutant("SSL-IN-005", profile="section-source-local")
def one_attack_accepted():
    """One path climbs out and back in (`inbox/../inbox/example.md`) and is served; every other
    traversal is still refused (a single failing attack an implementer may baseline)."""
    original = tools.normalize_request_path

    def normalize(raw):
        if raw == "inbox/../inbox/example.md":
            return "inbox/example.md"
        return original(raw)
    tools.normalize_request_path = normalize


@mutant("SSL-OUT-005", profile="section-source-local")
def one_vector_wrong():
    """One golden vector's title is wrong; every other note is right (a single failing vector)."""
    from contract_tests.contracts.specs import load_profile
    target = load_profile("section-source-local").vectors()[0]["path"]

    def off(vault, raw, out):
        if out.get("path") == target:
            out["title"] = (out.get("title") or "") + " (off)"
        return out
    _wrap_source(off)


@mutant("SSL-IN-006", profile="section-source-local")
def symlink_followed():
    """No real-path containment: a symlink out of the vault is followed."""
    def resolve(vault_real, relative):
        candidate = vault_real / relative
        if not candidate.is_file():
            raise paths.NoteNotFound("note not found")
        return candidate
    paths.resolve_note = resolve


@mutant("SSL-IN-006", "SSL-IN-008", profile="section-source-local")
def sibling_prefix_accepted():
    """Containment by string prefix, and `..` allowed: vault_evil/ passes as inside."""
    def normalize(raw):
        if not isinstance(raw, str) or not raw.strip():
            raise paths.UnsafePath("path is required")
        return raw.strip().replace("\\", "/").lstrip("/")

    def resolve(vault_real, relative):
        real = os.path.realpath(vault_real / relative)
        if not real.startswith(str(vault_real)) or not os.path.isfile(real):
            raise paths.NoteNotFound("note not found")
        return Path(real)
    tools.normalize_request_path = normalize
    paths.resolve_note = resolve


@mutant("SSL-IN-006", profile="section-source-local")
def prefix_containment():
    """`..` is still refused; the real path is kept inside the vault by `startswith(vault)` with
    no separator (CVE-2025-53110), so a symlink into vault_evil/ passes as inside."""
    def resolve(vault_real, relative):
        real = os.path.realpath(vault_real / relative)
        if not real.startswith(str(vault_real)):
            raise paths.UnsafePath("path is outside the vault")
        if not os.path.isfile(real):
            raise paths.NoteNotFound("note not found")
        return Path(real)
    paths.resolve_note = resolve


@mutant("SSL-ERR-006", profile="section-source-local")
def plain_text_validation_error():
    """A missing or non-string path fails with the plain-text validation message an SDK's typed
    tool parameters give by default, not the RUNTIME_ERROR JSON error."""
    original = server._run_tool

    def run_tool(vault, name, arguments):
        path = (arguments or {}).get("path")
        if not isinstance(path, str) and set(arguments or {}) <= {"path"}:
            text = "1 validation error for get_section_sourceArguments\npath\n  Input should be a valid string"
            return "invalid_input", types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                                         is_error=True), {}
        return original(vault, name, arguments)
    server._run_tool = run_tool


@mutant("SSL-TOOL-004", "SSL-IN-003", profile="section-source-local")
def extra_input_accepted():
    """The input schema allows extra properties, and calls with them are served."""
    schema = dict(server.INPUT_SCHEMA, additionalProperties=True)
    server.INPUT_SCHEMA = schema
    server._INPUT = server.Draft202012Validator(schema)


@mutant("SSL-PERF-001", "SSL-PERF-002", profile="section-source-local")
def vault_scan():
    """Reads every note of the vault on each call."""
    original = paths.read_note

    def read(vault_real, relative):
        for note in sorted(vault_real.rglob("*.md")):  # "index" the vault on every call
            if note.is_file():
                note.read_bytes()
        return original(vault_real, relative)
    tools.read_note = read


@mutant("SSL-DI-002", profile="section-source-local")
def cache_file_written():
    """Writes a cache file under `XDG_CACHE_HOME`."""
    original = tools.get_section_source

    def cached(vault, raw):
        out = original(vault, raw)
        cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "rc-section-source"
        cache.mkdir(parents=True, exist_ok=True)
        (cache / (out["path"].replace("/", "_") + ".json")).write_text(json.dumps(out))
        return out
    _patch_tool("get_section_source", cached)


def _log_to_file():
    """Operational log lines (tool, outcome, counts: no note data) also go to a file under
    XDG_STATE_HOME, created on the first call."""
    import logging
    state = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state")) / "rc-section-source"
    state.mkdir(parents=True, exist_ok=True)
    logging.getLogger("rc.reference").addHandler(logging.FileHandler(state / "server.log", delay=True))


@mutant("SSL-DI-004", profile="section-source-local")
def log_file_written():
    """Writes its operational log to a file under XDG_STATE_HOME (no note data): the advisory
    only, as seed 000 forbids records, not every file."""
    _log_to_file()


@mutant("SSL-DI-001", profile="section-source-local")
def sidecar_in_vault():
    """Writes an index file into the vault."""
    original = tools.get_section_source

    def sidecar(vault, raw):
        out = original(vault, raw)
        (vault / ".section-source-index.json").write_text(json.dumps({"last": out["path"]}))
        return out
    _patch_tool("get_section_source", sidecar)


@mutant("SSL-DI-003", profile="section-source-local")
def stale_cache():
    """Memoizes results, so edits never show."""
    original = tools.get_section_source
    memo = {}

    def memoized(vault, raw):
        key = json.dumps(raw)
        if key not in memo:
            memo[key] = original(vault, raw)
        return memo[key]
    _patch_tool("get_section_source", memoized)


@mutant("SSL-STR-001", "SSL-STR-002", profile="section-source-local")
def caps_ignored():
    """Lifts the input and section caps."""
    builder.MAX_SECTIONS = 10**9
    builder.MAX_INPUT_CHARS = 10**9


@mutant("SSL-STR-003", "SSL-OUT-005", profile="section-source-local")
def unstable_ids():
    """Salts ids with random digits on each call."""
    def salt(vault, raw, out):
        tag = f"{random.randrange(10**6):06d}"
        for section in out["sections"]:
            section["heading_id"] = section["heading_id"][:-4] + tag[:4]
            section["section_id"] = section["section_id"][:-4] + tag[:4]
        return out
    _wrap_source(salt)


@mutant("SSL-RES-001", profile="section-source-local")
def resource_registered():
    """Serves section sources as an MCP resource."""
    original = server.build_server

    def build(vault):
        srv = original(vault)

        async def list_resources(ctx, params):
            return types.ListResourcesResult(resources=[types.Resource(
                uri="section-source://inbox/example.md", name="section-source inbox/example.md")])

        async def read_resource(ctx, params):
            out = tools.get_section_source(vault, "inbox/example.md")
            return types.ReadResourceResult(contents=[types.TextResourceContents(
                uri=str(params.uri), text=json.dumps(out))])

        srv.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)
        srv.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)
        return srv
    server.build_server = build


@mutant("SSL-ERR-003", profile="section-source-local")
def error_reveals_more():
    """Only get_section_source says when a path is a symlink out of the vault."""
    original = tools.TOOLS["get_section_source"][1]

    def revealing(vault, raw):
        try:
            return original(vault, raw)
        except paths.UnsafePath as exc:
            if "outside the vault" in str(exc):
                raise RuntimeError("symlink target outside the vault") from exc
            raise
    tools.TOOLS["get_section_source"] = (tools.TOOLS["get_section_source"][0], revealing)


@mutant("SSL-BLK-001", profile="section-source-local")
def blocked_tool():
    """Lists a `get_section_body` tool."""
    def body(vault, raw):
        text = paths.read_note(vault, paths.normalize_request_path(raw))
        return {"path": raw, "body": text}
    tools.TOOLS["get_section_body"] = ("Return a section body.", body)


def _serve_http_with(**app_options):
    import uvicorn

    def serve(srv, host, port):
        bind = app_options.pop("bind", host)
        uvicorn.run(srv.streamable_http_app(host=host, **app_options), host=bind, port=port, log_level="warning")
    server.serve_http = serve


@mutant("MCP-HTTP-004", profile="section-source-local", transport="http")
def http_origin_unchecked():
    """Serves HTTP without Origin and Host validation."""
    from mcp.server.transport_security import TransportSecuritySettings
    _serve_http_with(transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))


@mutant("MCP-HTTP-005", profile="section-source-local", transport="http")
def http_binds_all_interfaces():
    """Serves HTTP on 0.0.0.0."""
    _serve_http_with(bind="0.0.0.0")


@mutant("MCP-HTTP-002", profile="section-source-local", transport="http")
def http_delete_keeps_the_session():
    """Answers DELETE with 200 but keeps the session: a request with its id still gets a result."""
    import uvicorn

    def serve(srv, host, port):
        app = srv.streamable_http_app(host=host)

        async def gate(scope, receive, send):
            if scope["type"] == "http" and scope["method"] == "DELETE":
                await send({"type": "http.response.start", "status": 200, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
            return await app(scope, receive, send)
        uvicorn.run(gate, host=host, port=port, log_level="warning")
    server.serve_http = serve


@mutant("MCP-INIT-002", profile="section-source-local", transport="http", preflight=True)
def http_only_2025_03_26():
    """Speaks only protocol 2025-03-26 and answers initialize for any other version with
    JSON-RPC -32600 (as the public vault-agent does, per its own documents), where MCP asks
    section-source servers for a counter-offer. The suite must still negotiate and run."""
    import uvicorn

    def serve(srv, host, port):
        app = srv.streamable_http_app(host=host)

        async def gate(scope, receive, send):
            if scope["type"] != "http" or scope["method"] != "POST":
                return await app(scope, receive, send)
            body, more = b"", True
            while more:
                message = await receive()
                body, more = body + message.get("body", b""), message.get("more_body", False)
            try:
                request = json.loads(body)
            except ValueError:
                request = None
            if isinstance(request, dict) and request.get("method") == "initialize" \
                    and (request.get("params") or {}).get("protocolVersion") != "2025-03-26":
                error = {"jsonrpc": "2.0", "id": request.get("id"),
                         "error": {"code": -32600, "message": "Unsupported protocol version"}}
                await send({"type": "http.response.start", "status": 200,
                            "headers": [(b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": json.dumps(error).encode()})
                return
            replayed = False

            async def replay():
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()
            await app(scope, replay, send)
        uvicorn.run(gate, host=host, port=port, log_level="warning")
    server.serve_http = serve


@mutant("MCP-STDIO-001", profile="section-source-local")
def stdout_log():
    """Writes a log line to stdout before serving."""
    os.write(1, b"reference server starting\n")






# --- a correct variant: choices seed 000 leaves open, taken the other way -------------------

@variant(profile="section-source-local")
def variant_open_choices():
    """Not a mutant: a conforming server the suite must pass (tests/test_variants.py).

    - whitespace around a path, and backslashes, are refused rather than trimmed or turned
      into slashes;
    - failures are JSON-RPC errors whose data is {"error", "code": "RUNTIME_ERROR"};
    - no tool annotations, no adjacent tools, and an input schema without
      additionalProperties false (extra arguments are still refused when called);
    - an operational log file under XDG_STATE_HOME, holding no note data (SSL-DI-004 is an
      advisory).
    """
    _log_to_file()
    from mcp.shared.exceptions import MCPError

    original_normalize = tools.normalize_request_path

    def normalize(raw):
        if isinstance(raw, str) and (raw != raw.strip() or "\\" in raw):
            raise paths.UnsafePath("not a canonical path")
        return original_normalize(raw)
    tools.normalize_request_path = normalize

    original_error = server._error

    def error(message):
        raise MCPError(-32001, message, {"error": message, "code": "RUNTIME_ERROR"})
    server._error = error
    for name in [n for n in tools.TOOLS if n != "get_section_source"]:
        del tools.TOOLS[name]
    schema = dict(server.INPUT_SCHEMA)
    schema.pop("additionalProperties", None)
    server.INPUT_SCHEMA = schema
    server.READ_ONLY = None
    del original_error

if __name__ == "__main__":
    sys.exit(run("launch.py", server.main))
