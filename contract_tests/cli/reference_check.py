"""What `retrieval-contract all` holds each reference run to, beyond its exit status: every
requirement passes, reads n/a only where it does not apply (another transport, phase or
protocol version), or is skipped for a reason the profile's spec names (`reference.skips`) or
for what the machine lacks (Linux /proc, inotify: not the reference's doing); and no
requirement passes without a check of it having run. A run that breaks one of these
fails `all` (exit 1), with what broke it."""

from __future__ import annotations

from typing import Any

from contract_tests.contracts.specs import Profile
from contract_tests.transport.system import MACHINE_LACKS

# Options that narrow a run (which tests, what target, which failures are expected): the run is
# then not the whole suite against the reference, and only its exit status counts.
NARROWING = ("--req", "-k", "-m", "--deselect", "--server-cmd", "--server-url", "--expectations", "--mapping",
             "--shard", "--lf", "--last-failed")


def narrowed(args: list[str]) -> str | None:
    """The first option in `args` that narrows a run, or None."""
    for arg in args:
        for option in NARROWING:
            if arg == option or arg.startswith(option + "=") or (len(option) == 2 and arg.startswith(option)
                                                                  and not arg.startswith("--")):
                return option
    return None


def reference_problems(results: dict[str, Any] | None, profile: Profile) -> list[str]:
    """Why a whole run against the bundled reference (its results.json) falls short; [] when
    it holds."""
    if not results:
        return ["no results.json was written"]
    allowed = dict(profile.data.get("reference", {}).get("skips", {}))
    transport, phase, protocol = results.get("transport"), results.get("phase"), results.get("protocol_version")
    problems = []
    for row in results.get("requirements", []):
        req, status = row["id"], row["status"]
        if status == "pass":
            if not row.get("tests_checking"):
                problems.append(f"{req} reads pass, but no check of it ran")
        elif status == "skip":
            if req not in allowed and not machine(row):
                why = "; ".join(row.get("evidence", [])[:1]) or "no reason given"
                problems.append(f"{req} was skipped, which the spec's reference.skips does not allow ({why})")
        elif status == "n/a":
            if req in profile.requirements and profile.applies(req, transport, phase, protocol):
                problems.append(f"{req} reads n/a, but it applies to a {transport} run"
                                + (f" in phase {phase}" if phase else ""))
        else:
            problems.append(f"{req} reads {status}")
    return problems


def machine(row: dict[str, Any]) -> bool:
    """Whether every skip of a requirement's tests is for what this machine lacks."""
    reasons = [e for e in row.get("evidence", []) if e.startswith("skipped: ")]
    return bool(reasons) and all(e.removeprefix("skipped: ").startswith(MACHINE_LACKS) for e in reasons)
