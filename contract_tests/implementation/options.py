"""The suite's options, in one table: each has its console name (`retrieval-contract --profile`)
and its plugin name, prefixed `--rc-` under plain pytest (`pytest --pyargs contract_tests
--rc-profile ...`), so that no other installed plugin's option (pytest-profiling's `--profile`,
say) can collide with one of ours."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contract_tests.transport import limits

PREFIX = "--rc-"
DEFAULT_PROFILE = "section-source-local"  # without --profile or the ini value rc_profile


@dataclass(frozen=True)
class Option:
    name: str                       # the console script's name, e.g. --profile
    help: str
    settings: dict[str, Any] = field(default_factory=dict)  # addoption keywords besides help
    shapes_run: bool = False        # repeated on the report's rerun lines

    @property
    def plugin_name(self) -> str:
        return self.name if self.name.startswith(PREFIX) else PREFIX + self.name.removeprefix("--")

    @property
    def takes_value(self) -> bool:
        return self.settings.get("action") not in ("store_true", "store_false")

    @property
    def usage(self) -> str:
        """`--name VALUE` as the console script takes it."""
        if not self.takes_value:
            return self.name
        return f"{self.name} {self.settings.get('metavar') or self.name.lstrip('-').upper().replace('-', '_')}"


def _table() -> tuple[Option, ...]:
    default_limits = limits.Limits()
    return (
        Option("--profile", f"profile to check (default: ini rc_profile, else {DEFAULT_PROFILE})"),
        Option("--server-cmd", "command that starts the server under test; placeholders: {python} (this "
               "interpreter), {port} (HTTP) and the profile's own ({vault}; {docs_root}, {code_root}, {root}; "
               "{notebooks}, {store}, {stream_timeout_s}; {index_dir}, {config}, {api_key})"),
        Option("--rc-command", "a command the profile needs besides --server-cmd (vault-agent: index, serve, "
               "public, hold; open-notebook: load), with the same placeholders; repeatable; overrides the "
               "declaration's `commands`", {"action": "append", "default": [], "metavar": "ROLE=CMD"}),
        Option("--transport", "how to reach --server-cmd: stdio, or Streamable HTTP on a port the suite picks "
               "({port} placeholder); default: the profile's first transport", {"choices": ("stdio", "http")}),
        Option("--server-path", "HTTP path of the MCP endpoint (default /mcp)", {"default": "/mcp"}),
        Option("--server-url", "URL of a running Streamable HTTP server (profiles with the http transport); "
               "tests that must start their own server skip"),
        Option("--canister-port", "with --server-url on a hosted profile: loopback port for the suite's canister "
               "double, the URL the running server was configured with (secrets from RC_JWT_SECRET, "
               "RC_GATEWAY_SECRET)", {"default": 0, "type": int}),
        Option("--phase", "phase to accept, for profiles that define phases"),
        Option("--expectations", "YAML file of known failures, by requirement id or REQ-ID[case id]",
               shapes_run=True),
        Option("--declare", "YAML declaration of the choices the seed leaves to the implementation "
               "(schemas/declaration.schema.json); without it the suite checks consistency only", shapes_run=True),
        Option("--mapping", "generic-files: YAML mapping of a file-serving server's tools (schemas/mapping.schema.json): "
               "its command with {root}, which tools read, list, search or stat, their path arguments, how a denial "
               "shows; `auto` proposes one from tools/list (printed, and written to the report folder)",
               {"metavar": "FILE|auto"}, shapes_run=True),
        Option("--load-cmd", "open-notebook: the same as --rc-command load=CMD (a command run once per fixture the "
               "suite builds, before any server starts on it)"),
        Option("--report", "directory for results.json, results.md and junit.xml"),
        Option("--docs-url", "base URL of the published docs site: results.md links each requirement to its page"),
        Option("--baseline", "a results.json of an earlier run: report only the requirements whose verdict changed"),
        Option("--req", "comma-separated requirement ids: run only tests citing them"),
        Option("--case", "comma-separated case ids (vector, attack, tool-and-root ids): sweeps try only these"),
        Option("--strict", "advisories (requirements of the profile's own reading, basis: profile) fail the run",
               {"action": "store_true", "default": False}),
        Option("--shard", "i/n: run the i-th of n deterministic parts of the run (by profile, transport, phase, "
               "tier and test id); join the parts' results.json with `retrieval-contract merge-reports`"),
        Option("--protocol-version", "the MCP handshake version to speak (default: the first the server accepts "
               "of the versions the profile's documents allow, offered newest first)", {"metavar": "VERSION"}),
        Option("--request-timeout", f"how long a request waits for its answer unless a check asks for longer "
               f"(default {default_limits.request_timeout:g})", {"type": float, "metavar": "SECONDS"},
               shapes_run=True),
        Option("--command-timeout", f"how long one of the implementation's own commands (index, load) may run "
               f"before it is killed, with what it started; one that overran it is not run again in that worker "
               f"(default {default_limits.command_timeout:g})", {"type": float, "metavar": "SECONDS"},
               shapes_run=True),
        Option("--max-message-bytes", f"the largest single message the suite reads from the server (default "
               f"{default_limits.max_message_bytes:,}); a larger one is a finding (MCP-SIZE-001), kept only as "
               f"its first bytes", {"type": int, "metavar": "BYTES"}, shapes_run=True),
        Option("--run-budget", "stop talking to the server after this many seconds: the remaining checks are "
               "blocked, the reports written, and the run exits 9", {"type": float, "metavar": "SECONDS"},
               shapes_run=True),
        Option("--no-preflight", "skip starting the server once before the run",
               {"action": "store_true", "default": False}),
    )


OPTIONS = _table()
BY_NAME = {o.name: o for o in OPTIONS}
BY_PLUGIN_NAME = {o.plugin_name: o for o in OPTIONS}


def add_options(parser: Any) -> None:
    """Register every option under its prefixed name (a pytest Parser, or anything with its
    getgroup/addoption shape)."""
    group = parser.getgroup("retrieval-contract", "retrieval-contract conformance suite")
    for option in OPTIONS:
        help_text = option.help if option.plugin_name == option.name else f"{option.help} (`retrieval-contract {option.name}`)"
        group.addoption(option.plugin_name, help=help_text, **option.settings)


def get(config: Any, name: str) -> Any:
    """An option's value by its console name (`get(config, "--profile")`)."""
    return config.getoption(BY_NAME[name].plugin_name)


def to_plugin_names(args: list[str]) -> list[str]:
    """The console script's arguments with each of its short option names replaced by the
    plugin's prefixed one (`--profile x` and `--profile=x` alike). An option's value is
    passed on as it is, even when it looks like an option name."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        name, sep, value = arg.partition("=")
        option = BY_NAME.get(name) or BY_PLUGIN_NAME.get(name)
        if option is None:
            out.append(arg)
        else:
            out.append(option.plugin_name + sep + value)
            if option.takes_value and not sep and i + 1 < len(args):
                i += 1
                out.append(args[i])
        i += 1
    return out
