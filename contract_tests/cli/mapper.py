"""`retrieval-contract map --server-cmd CMD [--out FILE]`: start a file-serving MCP server on a
fixture root, read its tools/list, and write the mapping `--mapping auto` proposes for it, for the
user to review and keep (then: retrieval-contract --profile generic-files --mapping FILE)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from contract_tests.contracts import specs as contracts
from contract_tests.contracts.expectations import Expectations
from contract_tests.contracts.mapping_auto import propose, render
from contract_tests.implementation.preflight import SERVER_FAULTS, tools_of
from contract_tests.implementation.sessions import connect
from contract_tests.implementation.state import SuiteState
from contract_tests.synthetic.fixtures import build_for

PROFILE = "generic-files"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="retrieval-contract map", description=__doc__)
    parser.add_argument("--server-cmd", required=True,
                        help="command that starts the server; {root} is the directory it serves, {python} this "
                             "interpreter, {port} the port (http)")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--server-path", default="/mcp", help="HTTP path of the MCP endpoint (default /mcp)")
    parser.add_argument("--out", help="write the mapping here (default: standard output)")
    args = parser.parse_args(argv)
    if args.transport == "http" and "{port}" not in args.server_cmd:
        parser.error("--transport http: --server-cmd must take the port the suite picks as {port}")
    profile = contracts.load_profile(PROFILE)
    state = SuiteState(profile=profile, transport=args.transport, server_cmd=args.server_cmd,
                       server_path=args.server_path, phase=None, expectations=Expectations())
    with tempfile.TemporaryDirectory(prefix="rc-map-") as tmp:
        fixture = build_for(profile, Path(tmp) / "fixture")
        home = Path(tmp) / "home"
        home.mkdir()
        server = None
        try:
            server = connect(state, fixture, home)
            response = server.initialize(timeout=20)
            if "result" not in response:
                print(f"retrieval-contract map: the server did not initialize: {response.get('error') or response}",
                      file=sys.stderr)
                return 3
            tools = tools_of(server)
        except SERVER_FAULTS as exc:
            tail = "\n".join(f"    {line}" for line in (server.transcript.stderr[-15:] if server else []))
            print(f"retrieval-contract map: the server could not be reached: {exc}\n  server stderr:\n{tail}",
                  file=sys.stderr)
            return 3
        finally:
            if server is not None and server.alive():
                server.close(timeout=3)
    if not tools:
        print("retrieval-contract map: the server lists no tools", file=sys.stderr)
        return 3
    served = {"cmd": args.server_cmd} | ({"transport": "http"} if args.transport == "http" else {}) | (
        {"path": args.server_path} if args.server_path != "/mcp" else {})
    text = render(propose(tools), served)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"retrieval-contract map: wrote {args.out} ({len(tools)} tools listed); review it, then run "
              f"retrieval-contract --profile {PROFILE} --mapping {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
