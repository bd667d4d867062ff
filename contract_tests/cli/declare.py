"""`retrieval-contract declare`: propose an implementation declaration from what a server does.

It starts the server on the profile's fixture, calls what the profile needs to know (a failure
of every class, the tools' input schemas, one call per output list, the seed-silent choices)
and prints a declaration (schemas/declaration.schema.json) for the implementer to review and
keep. Inconsistencies it sees (one class, several codes) are written as comments: the
declaration states intent; the suite then holds the server to it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from contract_tests.contracts import specs as contracts
from contract_tests.contracts.expectations import Expectations
from contract_tests.implementation import preflight
from contract_tests.implementation.commands import Commands
from contract_tests.implementation.names import ParameterNames, find_list
from contract_tests.implementation.sessions import connect
from contract_tests.synthetic.fixtures import build_for
from contract_tests.transport.privileges import unprivileged_prefix
from contract_tests.transport.stdio import use_protocol_version
from contract_tests.verdicts.checks import (
    _error_document,  # noqa: PLC2701 - the channel detection is the suite's own
    called_ok,
    error_code,
    json_pointer,
    not_a_failure,
    tool_output,
)
from contract_tests.verdicts.findings import EXIT_SERVER_UNUSABLE


class DeclareError(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _state(args: argparse.Namespace, profile: contracts.Profile):
    from contract_tests.implementation.state import SuiteState
    transport = args.transport or profile.transports[0]
    phase = args.phase or profile.default_phase
    given = {}
    for item in args.rc_command or []:
        role, sep, command = item.partition("=")
        if not sep or not command.strip() or role not in profile.command_roles:
            raise DeclareError(f"--rc-command {item!r}: expected ROLE=CMD with ROLE one of "
                               f"{', '.join(profile.command_roles) or '(none: the profile has no further commands)'}", 4)
        given[role] = command
    missing = [r for r, spec in profile.command_roles.items() if r not in given and not spec.get("optional")]
    if missing:
        raise DeclareError(f"profile {profile.id} needs these commands besides --server-cmd: {', '.join(missing)}; "
                           "give each with --rc-command ROLE=CMD", 4)
    return SuiteState(profile=profile, transport=transport, server_cmd=args.server_cmd, server_path=args.server_path,
                      phase=phase, expectations=Expectations(), commands=given, given_commands=given,
                      protocol_version_given=args.protocol_version)


class Probe:
    def __init__(self, state, base: Path) -> None:
        self.state, self.base, self.started = state, base, []

    def start(self, fixture, *, unprivileged: bool = False, extra: dict[str, str] | None = None):
        home = self.base / f"home-{len(self.started)}"
        home.mkdir()
        prefix = None
        if unprivileged:
            prefix, _why = unprivileged_prefix()
            if prefix is None:
                return None
        server = connect(self.state, fixture, home, prefix=prefix, extra=extra)
        self.started.append(server)
        response = server.initialize(timeout=20)
        return server if "result" in response else None

    def close(self) -> None:
        for server in self.started:
            if server.alive():
                server.close(timeout=3)


def propose(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """(the proposed declaration, notes for the reviewer)."""
    profile = contracts.load_profile(args.profile)
    allowed = profile.data.get("declarable", {})
    state = _state(args, profile)
    settings = {"commands": Commands(dict(state.commands))} if profile.command_roles else {}
    checked = preflight.run(state, settings)  # a server that cannot start or hangs: exit 6, not a traceback
    if not checked.ok:
        raise DeclareError(checked.message(), EXIT_SERVER_UNUSABLE)
    use_protocol_version(checked.protocol_version or profile.protocol_versions[0])
    declaration: dict[str, Any] = {"profile": profile.id}
    if args.implementation:
        declaration["implementation"] = args.implementation
    if state.given_commands and "commands" in allowed:
        declaration["commands"] = dict(state.given_commands)
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="rc-declare-") as tmp:
        base = Path(tmp)
        fixture = build_for(profile, base / "fixture", settings)
        probe = Probe(state, base)
        try:
            server = probe.start(fixture)
            if server is None:
                raise DeclareError("the server did not answer initialize on the declaration's fixture", EXIT_SERVER_UNUSABLE)
            listed = server.request("tools/list", {}).get("result", {}).get("tools", [])
            names = ParameterNames(profile, listed)
            if "extra_tools" in allowed:
                ours = set(profile.required_tools + profile.adjacent_tools)
                extra = sorted(t["name"] for t in listed if t["name"] not in ours)
                if extra:
                    declaration["extra_tools"] = extra
            if "parameters" in allowed:
                chosen = {}
                for (tool, logical), name in names.names.items():
                    if name != profile.data["parameters"][tool][logical][0]:
                        chosen.setdefault(tool, {})[logical] = name
                if chosen:
                    declaration["parameters"] = chosen
                notes += [f"parameters: {p}" for p in names.problems]
            channels: Counter[str] = Counter()
            if profile.data.get("failure_classes"):
                codes, channels = _failure_classes(profile, probe, fixture, names, notes)
                if "error_codes" in allowed and codes:
                    declaration["error_codes"] = codes
            else:
                missing = server.call_tool(profile.required_tools[0], {"path": "rc-declare/missing-note.md"})
                if not not_a_failure(missing):
                    channels[_error_document(missing)[0]] += 1
            if "error_channel" in allowed and channels:
                declaration["error_channel"] = channels.most_common(1)[0][0]
                if len(channels) > 1:
                    notes.append(f"error_channel: failures came on several channels {dict(channels)}")
            if "outputs" in allowed:
                outputs = _outputs(profile, server, names)
                if outputs:
                    declaration["outputs"] = outputs
            if "trim_paths" in allowed:
                padded = server.call_tool(profile.required_tools[0], {"path": f" {fixture.items()[0]} "})
                declaration["trim_paths"] = called_ok(padded)
            if "choices" in allowed:
                choices = _choices(profile, probe, server, fixture, names)
                if choices:
                    declaration["choices"] = choices
        finally:
            probe.close()
            close = getattr(fixture, "close", None)
            if close:
                close()
    return declaration, notes


def _failure_classes(profile, probe, fixture, names, notes) -> tuple[dict[str, str], Counter]:
    servers = {False: None, True: None}
    channels: Counter[str] = Counter()
    codes: dict[str, str] = {}
    for klass in profile.data.get("failure_classes", []):
        unprivileged = bool(klass.get("unprivileged"))
        if servers[unprivileged] is None:
            twin = fixture.twin("locked" if unprivileged else "all") if hasattr(fixture, "twin") else fixture
            servers[unprivileged] = probe.start(twin, unprivileged=unprivileged) or False
        server = servers[unprivileged]
        if not server:
            notes.append(f"error_codes: {klass['id']} not observed (the server could not run without file permissions)")
            continue
        seen: Counter[str] = Counter()
        for case in klass["cases"]:
            arguments = {k: (v.replace("{root}", str(fixture.root)) if isinstance(v, str) else v)
                         for k, v in case["arguments"].items()}
            response = server.call_tool(case["tool"], names.args(case["tool"], arguments))
            if not_a_failure(response):
                notes.append(f"error_codes: {klass['id']}: {case['tool']} {json.dumps(arguments)} did not fail")
                continue
            channel, document = _error_document(response)
            channels[channel] += 1
            code = error_code(document, profile) if document is not None else None
            if code:
                seen[code] += 1
        if seen and not klass.get("code"):
            codes[klass["id"]] = seen.most_common(1)[0][0]
            if len(seen) > 1:
                notes.append(f"error_codes: {klass['id']} gave several codes {dict(seen)}; the suite will hold "
                             f"the server to {codes[klass['id']]}")
    return codes, channels


_OUTPUT_CALLS = {"search.matches": ("search", {"query": "needle-common", "repo": "both"}),
                 "open_file.lines": ("open_file", {"repo": "docs", "path": "README.md"}),
                 "get_snippet.lines": ("get_snippet", {"repo": "docs", "path": "lines.md", "start_line": 1, "end_line": 3}),
                 "list_dir.entries": ("list_dir", {"repo": "docs"})}


def _outputs(profile, server, names) -> dict[str, str]:
    out = {}
    for name, pointers in profile.data.get("outputs", {}).items():
        if name not in _OUTPUT_CALLS:
            continue  # a single value (e.g. get_snippet.end): found where present, never proposed
        tool, arguments = _OUTPUT_CALLS[name]
        response = server.call_tool(tool, names.args(tool, arguments))
        if not called_ok(response):
            continue
        document = tool_output(response, req="declare")
        if find_list(profile, name, document) is not None and _first_hit(document, pointers) == pointers[0]:
            continue  # the default works: nothing to declare
        result = document.get("result") if isinstance(document, dict) else None
        lists = [k for k, v in (result or {}).items() if isinstance(v, list)] if isinstance(result, dict) else []
        if isinstance(result, list):
            out[name] = "/result"
        elif lists:
            out[name] = f"/result/{lists[0]}"
    return out


def _first_hit(document, pointers):
    for pointer in pointers:
        try:
            if isinstance(json_pointer(document, pointer), list):
                return pointer
        except KeyError:
            continue
    return None


def _choices(profile, probe, server, fixture, names) -> dict[str, Any]:
    known = profile.data.get("declarable", {}).get("choices", {})
    out: dict[str, Any] = {}
    call = lambda tool, args: server.call_tool(tool, names.args(tool, args))  # noqa: E731
    if "open_hidden" in known:
        out["open_hidden"] = "allow" if called_ok(call("open_file", {"repo": "docs", "path": ".hidden.md"})) else "refuse"
    if "open_binary" in known:
        out["open_binary"] = "result" if called_ok(call("open_file", {"repo": "docs", "path": "image.png"})) else "error"
    if "unknown_arguments" in known:
        response = call("open_file", {"repo": "docs", "path": "README.md", "rc_unknown_option": True})
        out["unknown_arguments"] = "ignore" if called_ok(response) else "refuse"
    if "relative_roots" in known and hasattr(fixture, "repo_root"):
        home = probe.base / "relative-home"
        home.mkdir()
        import os
        relative = os.path.relpath(fixture.repo_root("docs"), home)
        srv = probe.start(fixture, extra={"docs_root": relative})
        out["relative_roots"] = "serve" if srv is not None else "refuse"
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="retrieval-contract declare", description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", required=True, choices=contracts.available_profiles())
    parser.add_argument("--server-cmd", required=True, help="the command that starts the server (placeholders as for the suite)")
    parser.add_argument("--transport", choices=("stdio", "http"))
    parser.add_argument("--phase")
    parser.add_argument("--server-path", default="/mcp")
    parser.add_argument("--implementation", help="a name for the implementation")
    parser.add_argument("--rc-command", action="append", default=[], metavar="ROLE=CMD",
                        help="a command the profile needs besides --server-cmd (as for the suite)")
    parser.add_argument("--protocol-version", help="the MCP handshake version to speak (as for the suite)")
    parser.add_argument("--out", help="write the declaration here (it is printed too; default: standard output only)")
    args = parser.parse_args(argv)
    try:
        declaration, notes = propose(args)
    except DeclareError as exc:
        print(f"retrieval-contract declare: {exc}", file=sys.stderr)
        return exc.status
    text = "# Proposed by `retrieval-contract declare`: review every value, then keep it with --declare.\n"
    text += "".join(f"# note: {n}\n" for n in notes)
    text += yaml.safe_dump(declaration, sort_keys=False, allow_unicode=True)
    text += _unobserved(contracts.load_profile(args.profile), declaration)
    problems = list(contracts.validator("declaration.schema.json").iter_errors(declaration))
    if problems:
        print(f"retrieval-contract declare: the proposal is not a valid declaration: {problems[0].message}",
              file=sys.stderr)
        return 2
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"retrieval-contract declare: wrote {args.out}", file=sys.stderr)
    return 0


def _unobserved(profile: contracts.Profile, declaration: dict[str, Any]) -> str:
    """Every seed-silent choice the proposal does not state, as a comment with the values the
    documents allow: undeclared, the suite accepts each of them; declared, it holds the server
    to the one you name."""
    allowed = profile.data.get("declarable", {})
    lines = []
    for name, meaning in allowed.get("choices", {}).items():
        if name not in declaration.get("choices", {}):
            lines.append(f"#   {name}: {meaning}")
    for key, meaning in allowed.items():
        if key not in ("choices",) and key not in declaration and isinstance(meaning, str):
            lines.append(f"#   {key}: {meaning}")
    if not lines:
        return ""
    return ("# Not observed (undeclared, every value the documents allow passes; declare the one you take,\n"
            "# choices under `choices:`):\n" + "\n".join(lines) + "\n")
