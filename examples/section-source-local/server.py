"""A minimal section-source-local server on the SDK's high-level MCPServer.

Run: python examples/section-source-local/server.py --vault PATH  (stdio)
It reuses the reference's builder (the SectionSource algorithm) and its vault path check;
everything MCP-facing is here. README.md lists the MCPServer pitfalls this file works around.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for `reference`
from reference.section_source import builder  # noqa: E402
from reference.section_source.paths import NoteNotFound, UnsafePath, normalize_request_path, read_note  # noqa: E402

# Pitfall 2: MCPServer derives the input schema from the signature and silently drops extra
# arguments. Declare the exact schema, and check every call against it (middleware below).
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "Vault-relative note path"}},
    "required": ["path"],
    "additionalProperties": False,
}
_INPUT = Draft202012Validator(INPUT_SCHEMA)


def error_result(message: str) -> CallToolResult:
    """Pitfall 1: raising ToolError would prefix "Error executing tool …" and break the JSON
    error body; return the error result yourself."""
    body = json.dumps({"error": message, "code": "RUNTIME_ERROR"})
    return CallToolResult(content=[TextContent(type="text", text=body)], is_error=True)


def make_server(vault: Path) -> MCPServer:
    def get_section_source(path: str) -> CallToolResult:
        try:
            relative = normalize_request_path(path)
            output = builder.build_section_source(relative, read_note(vault, relative))
        except UnsafePath:
            return error_result("Invalid path: must be a vault-relative note path inside the vault")
        except NoteNotFound:
            return error_result("Note not found")
        except (builder.InputTooLarge, builder.InputTooComplex) as exc:
            return error_result(str(exc))
        except Exception:  # noqa: BLE001 - never a traceback, never note text
            return error_result("Runtime error")
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(output, ensure_ascii=False))])

    tool = Tool.from_function(
        get_section_source,
        description="Return body-free SectionSource v0 metadata for one vault-relative note.",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                    open_world_hint=False),
        structured_output=False,
    )
    tool.parameters = INPUT_SCHEMA

    async def check_arguments(ctx, call_next):
        """Runs before MCPServer validates (and trims) the arguments."""
        if ctx.method == "tools/call" and isinstance(ctx.params, dict):
            arguments = ctx.params.get("arguments") or {}
            if ctx.params.get("name") == "get_section_source" and not _INPUT.is_valid(arguments):
                return error_result("Invalid input: exactly one string argument `path` is accepted")
        return await call_next(ctx)

    # Pitfall 3: MCPServer advertises resources and prompts even with none registered; list
    # none, and expose no section source as a resource.
    return MCPServer("example-section-source-local", tools=[tool], middleware=[check_arguments])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", required=True)
    vault = Path(parser.parse_args().vault).resolve(strict=True)
    make_server(vault).run()


if __name__ == "__main__":
    main()
