"""What `retrieval-contract --help`, `--version` and `list` print: the suite's own options (read
from the suite's option table, so they cannot drift), the versions, and the requirements with what proves them."""

from __future__ import annotations

import hashlib
import textwrap
from importlib import metadata

from contract_tests.contracts import specs as contracts

PYTEST_OPTIONS = ("-n N (parallel workers)", "-m TIER (unit, integration, e2e, stress, data_integrity, performance, "
                  "security)", "-k EXPR", "-x", "--durations N")


def options() -> list[tuple[str, str]]:
    """The console script's options, by the names it takes."""
    from contract_tests.implementation.options import OPTIONS
    return [(option.usage, option.help) for option in OPTIONS]


def help_text(profile_id: str | None = None) -> str:
    out = ["usage: retrieval-contract [options] [module::test ...]",
           "       retrieval-contract declare --profile ID --server-cmd CMD [--out FILE]",
           "       retrieval-contract all [--report DIR] [options]   every profile, transport and phase of specs/",
           "       retrieval-contract list [--profile ID] [--tier T] [--basis seed|mcp|profile|declared]",
           "       retrieval-contract map --server-cmd CMD [--out FILE]   propose a generic-files mapping",
           "       retrieval-contract merge-reports OUT SHARD_RESULTS...   join the reports of --shard i/n runs",
           "       retrieval-contract scoreboard CATALOG --out DIR [-j N] [--shard i/n] [--merge DIR...]   "
           "judge a catalog of file servers, publish a board",
           "       retrieval-contract --version", "",
           "Runs the conformance suite against a server, isolated from the caller's pytest configuration.", "",
           "options:"]
    for name, text in options():
        out.append(f"  {name}")
        out += textwrap.wrap(text, 92, initial_indent="      ", subsequent_indent="      ")
    out += ["", "and these pytest options: " + "; ".join(PYTEST_OPTIONS) + "."]
    if profile_id:
        out += ["", *profile_help(profile_id)]
    else:
        out += ["", "profiles: " + ", ".join(contracts.available_profiles())
                + " (retrieval-contract --profile ID --help for one)"]
    return "\n".join(out) + "\n"


def all_help_text() -> str:
    """`retrieval-contract all --help`: the matrix run's own options (the others go to every run)."""
    return "\n".join([
        "usage: retrieval-contract all [--report DIR] [-n N] [options]",
        "",
        "Runs the suite against the bundled reference servers: every profile, transport and phase of",
        "specs/ (and every worked mapping of a mapped profile), each run in its own process.",
        "",
        "options:",
        "  --report DIR",
        "      one report folder per run under DIR (results.json, .md, .html and output.txt)",
        "  -n N",
        "      how many runs at a time (default 1; each run is one process)",
        "  any other option (--strict, -m TIER, -k EXPR, ...)",
        "      passed to every run (retrieval-contract --help lists them)",
        "",
        "exit status: 0 when every run exits 0; otherwise a run's non-zero status, by the suite's",
        "precedence (8, then 9, then 1, then 7: the 'Exit status' section of docs/usage.md lists them).",
    ]) + "\n"


def profile_help(profile_id: str) -> list[str]:
    profile = contracts.load_profile(profile_id)
    data = profile.data
    out = [f"profile {profile.id}: {data['title']}",
           f"  transports: {', '.join(profile.transports)}"]
    if profile.phases:
        out.append(f"  phases: {', '.join(profile.phases)} (default {profile.default_phase})")
    out.append("  placeholders in --server-cmd: {python}" + ("  {port} (http)" if "http" in profile.transports else ""))
    for name, text in data.get("placeholders", {}).items():
        out.append(f"    {name}  {text}")
    for name, text in data.get("declarable", {}).items():
        if name == "choices":
            for choice, what in text.items():
                out.append(f"  declarable choice {choice}: {what}")
        else:
            out.append(f"  declarable {name}: {text}")
    for role, spec in profile.command_roles.items():
        optional = " (optional)" if spec.get("optional") else ""
        out.append(f"  command {role}{optional} (--rc-command {role}=CMD): {spec['description']}")
    reference = data["reference"]
    out.append(f"  reference: {', '.join(f'{t}: {reference[t]}' for t in profile.transports if t in reference)}")
    for role, command in profile.reference_commands().items():
        out.append(f"    {role}: {command}")
    return out


def data_version() -> str:
    """A digest of the contract data (specs, schemas, policies): changes whenever the contract does."""
    digest = hashlib.sha256()
    root = contracts.contracts_root()
    for folder in ("specs", "schemas", "policies"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def version_text() -> str:
    try:
        suite = metadata.version("retrieval-contract")
    except metadata.PackageNotFoundError:
        suite = "unknown (not installed)"
    profiles = contracts.available_profiles()
    count = len(contracts.all_requirement_ids())
    return (f"retrieval-contract {suite}\ncontract data {data_version()}: {count} requirements, "
            f"{len(profiles)} profiles ({', '.join(profiles)})\n")
