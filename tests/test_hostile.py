"""The suite survives any server: against each mode of a hostile server (tests/hostile/server.py)
a run ends within its bound, writes results.json, .md and .html, names what went wrong, exits
non-zero, and the suite's own processes stay under 1 GB resident together (the hostile server's
processes are not the suite's, and are left out of the sum).

The cover (the default) proves every bound with short thresholds: a request timeout of 2 s (the
breaker scales with it: 4.5 s of silence, answers over 0.5 s are slow), a command timeout of 5 s,
and a hostile server that floods less (SHORT). Its runs end within 90 s and share the machine
with the other self-tests. The full matrix (RC_HOSTILE_MATRIX=full) proves the production thresholds,
every mode on every target, one run at a time (docs/troubleshooting.md has its figures)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contract_tests.contracts import specs as contracts
from contract_tests.transport.system import process_tree

HERE = Path(__file__).resolve().parent
SERVER = HERE / "hostile" / "server.py"
FULL = os.environ.get("RC_HOSTILE_MATRIX") == "full"
# The short thresholds of the cover: the suite's options, and the hostile server's sizes (a flood
# and a gigabyte still far past every cap the suite keeps: 1,000 notifications, 4 MiB of logs).
SHORT = {"suite": ["--request-timeout", "2", "--command-timeout", "5"],
         "server": ["--delay", "1", "--flood", "50000", "--sustained", "10000", "--stderr-mib", "64", "--cmd-mib", "64"]}
# A run's bound: start-up, the breaker's window (2.25 request timeouts) or a command's timeout,
# and the reports; two minutes with the production thresholds (20 s, 45 s, 60 s), ninety seconds
# with the cover's (2 s, 4.5 s, 5 s). The cover's runs share the machine with the other
# self-tests: alone they took 7 to 46 s (the longest are whole runs against a server that
# answers, garbage or a notification flood with each answer), and one took 83 s beside the other
# worker's runs (CI of 23b00a3). What the bound catches is a run that does not end.
WALL_S = 120 if FULL else 90
RSS_LIMIT_KIB = 1024 * 1024

# mode -> words the run's output must carry (the symptom, named), per transport.
MODES = {
    "hang": ["stopped answering"],
    "huge": ["over the", "MCP-SIZE-001"],
    "notify": ["notifications or other unrequested messages"],
    "slowloris": ["stopped answering"],
    "exit-half": ["exited"],
    "mid-message": ["stopped answering"],
    "garbage": ["MCP-RPC-003"],
    "stderr-gig": ["stderr lines past the caps"],
    "floods": ["the server floods"],  # a flood before every answer: the flood budget stops the run (exit 9)
}
HTTP_MODES = {**MODES, "garbage": ["MCP-RPC-003"], "sse-open": [], "sse-endless": ["stopped answering"]}
# Modes of the implementation's other commands (an index or load command), for the profiles
# that run one: the server answers with errors, the command hangs or floods.
COMMAND_MODES = {"cmd-hang": ["did not finish within"], "cmd-flood": []}


def _hostile(mode: str, profile: str, *extra: str, short: bool = False) -> str:
    return " ".join([f"{{python}} {SERVER} {mode} --profile {profile}", *extra, *(SHORT["server"] if short else ())])


def target_args(profile: str, transport: str, mode: str, short: bool = False) -> list[str]:
    """The suite's arguments for one hostile run: the server in `mode`, in the profile's first
    phase, and every further command the profile's spec names (a role that serves, over HTTP;
    the others, such as an index or load command, as commands that run to their end); with
    `short`, the cover's thresholds and sizes."""
    spec = contracts.load_profile(profile)
    http = ("--http", "--port", "{port}")
    args = ["--profile", profile, "--transport", transport, *(SHORT["suite"] if short else ()),
            "--server-cmd", _hostile(mode, profile, *(http if transport == "http" else ()), short=short)]
    if spec.phases:
        args += ["--phase", spec.phases[0]]
    if spec.data.get("mapped"):  # the first worked example's mapping, with the hostile server instead
        args += ["--mapping", spec.data["reference"]["mappings"][0]]
    for role, about in spec.command_roles.items():
        extra = http if about.get("serves") else ("--role", "command")
        args += ["--rc-command", f"{role}={_hostile(mode, profile, *extra, short=short)}"]
    return args


def _seed_order(profile: str) -> str:
    """Seed order; a mapped profile (no seed) last."""
    return contracts.load_profile(profile).data.get("seed", "~")


# Every profile's transports, in seed order (section-source-hosted in one phase: the phases
# differ in what the server must do, not in how the suite reaches it).
TARGETS = [(p, t) for p in sorted(contracts.available_profiles(), key=_seed_order)
           for t in contracts.load_profile(p).transports]
COMMANDS = {p for p, _ in TARGETS if contracts.load_profile(p).command_roles}


def modes_of(profile: str, transport: str) -> dict[str, list[str]]:
    modes = dict(HTTP_MODES if transport == "http" else MODES)
    spec = contracts.load_profile(profile)
    limit = spec.message_limit  # a size the profile's documents set
    if limit:
        modes["huge"] = ["over the", limit["requirement"]]
    elif "MCP-SIZE-001" not in spec.requirements:  # generic-files: the size named, no requirement to file it under
        modes["huge"] = ["over the", "over the size limit"]
    if "MCP-RPC-003" not in spec.requirements:  # generic-files: the lines counted, no requirement to file them under
        modes["garbage"] = ["stdout lines past the caps"] if transport == "stdio" else ["not JSON-RPC"]
    if profile in COMMANDS and transport == "stdio":  # the commands are the same over either transport
        modes.update(COMMAND_MODES)
    return modes


def full_matrix() -> list[tuple[str, str, str]]:
    return [(p, t, m) for p, t in TARGETS for m in sorted(modes_of(p, t))]


def cover() -> list[tuple[str, str, str]]:
    """Every mode of every transport once, and every target at least once: mode i of a
    transport's sorted modes goes to the transport's targets in turn (the full matrix runs with
    RC_HOSTILE_MATRIX=full; docs/troubleshooting.md has its figures)."""
    cases = []
    for transport in ("stdio", "http"):
        targets = [(p, t) for p, t in TARGETS if t == transport]
        modes = sorted(set().union(*(modes_of(p, t) for p, t in targets)))
        for i, mode in enumerate(modes):
            able = [(p, t) for p, t in targets if mode in modes_of(p, t)]
            profile, _ = able[i % len(able)]
            cases.append((profile, transport, mode))
    return cases


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _is_server(pid: int) -> bool:
    """The hostile server itself (`python .../server.py MODE ...`), not the suite naming it."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return len(argv) > 1 and argv[1].decode("utf-8", "replace") == str(SERVER)


def _suite_rss_kib(root: int) -> int:
    """Resident memory of `root` and its descendants, the hostile server's subtree left out."""
    tree = process_tree(root)
    servers = {pid for top in tree if _is_server(top) for pid in process_tree(top)}
    return sum(_rss_kib(pid) for pid in tree if pid not in servers)


def run_measured(tmp_path: Path, args: list[str]) -> tuple[int, str, float, int]:
    """(exit status, output, wall seconds, peak RSS of the suite's process tree in KiB)."""
    report = tmp_path / "report"
    log = tmp_path / "output.txt"
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "contract_tests.cli", "-p", "no:randomly", "--report",
                                 str(report), *args], stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path,
                                env={**os.environ, "PYTHONPATH": str(HERE.parent)}, start_new_session=True)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _suite_rss_kib(proc.pid))
            if time.monotonic() - started > WALL_S + 60:
                os.killpg(proc.pid, signal.SIGKILL)  # the run, its workers and its servers
                break
            time.sleep(0.2)
        proc.wait()
    return proc.returncode, log.read_text(errors="replace"), time.monotonic() - started, peak


CASES = full_matrix() if FULL else cover()
# The full matrix times each run on the machine's two cores, not against other tests (alone:
# tests/conftest.py); the cover's bound leaves room for them.
PARAMS = [pytest.param(*case, marks=[pytest.mark.alone] if FULL else [], id="-".join(case)) for case in CASES]


@pytest.mark.parametrize("profile,transport,mode", PARAMS)
def test_a_hostile_server_gets_a_bounded_run_and_a_report(tmp_path, profile, transport, mode):
    code, output, wall, peak = run_measured(tmp_path, [*target_args(profile, transport, mode, short=not FULL),
                                                       "-n", "2"])
    name = f"{profile} {transport} {mode}"
    report = tmp_path / "report" / "results.json"
    results = json.loads(report.read_text()) if report.is_file() else {}
    if os.environ.get("RC_HOSTILE_LOG"):
        with open(os.environ["RC_HOSTILE_LOG"], "a", encoding="utf-8") as log:
            log.write(json.dumps({"profile": profile, "transport": transport, "mode": mode, "exit": code,
                                  "wall_s": round(wall, 1), "peak_mib": round(peak / 1024),
                                  "stopped": results.get("run_stopped", [])}) + "\n")
    print(f"hostile {name}: exit {code}, {wall:.1f} s, peak RSS of the suite's processes {peak / 1024:.0f} MiB")
    assert wall < WALL_S, f"{name}: the run took {wall:.0f} s\n{output[-3000:]}"
    assert peak < RSS_LIMIT_KIB, f"{name}: the suite's processes reached {peak / 1024:.0f} MiB resident"
    assert code not in (0, 8), f"{name}: exit {code}\n{output[-3000:]}"
    for file in ("results.json", "results.md", "results.html"):
        assert (tmp_path / "report" / file).is_file(), f"{name}: no {file}\n{output[-3000:]}"
    assert not results.get("suite_errors"), f"{name}: suite errors {results.get('suite_errors')}"
    for words in modes_of(profile, transport)[mode]:
        assert words in output, f"{name}: the output does not say {words!r}\n{output[-3000:]}"
    if mode == "floods":
        assert code == 9 and any("floods" in why for why in results.get("run_stopped", [])), \
            f"{name}: exit {code}, stopped {results.get('run_stopped')}\n{output[-3000:]}"


def test_a_server_that_hangs_on_one_call_of_a_sweep_stops_the_run_naming_that_call(tmp_path):
    """generic-files sweeps over one connection. The fs example, wrapped so that it never
    answers a call whose path climbs out (hostile/hang_on.py), stalls that connection at the
    first such call, and the sweep's later calls are refused: the run stopped talking to the
    server, though no breaker tripped. It exits 9, and run_stopped (handed over by a worker, -n 2)
    names the call: its tool and arguments."""
    import re

    import yaml
    mapping = yaml.safe_load((HERE.parent / "examples" / "generic-files" / "fs.yaml").read_text())
    mapping["server"]["cmd"] = f"{{python}} {HERE / 'hostile' / 'hang_on.py'} .. -- {mapping['server']['cmd']}"
    (tmp_path / "hangs.yaml").write_text(yaml.safe_dump(mapping))
    code, output, wall, _peak = run_measured(tmp_path, ["--profile", "generic-files", "--mapping",
                                                        str(tmp_path / "hangs.yaml"), "--request-timeout", "5",
                                                        "-n", "2"])
    results = json.loads((tmp_path / "report" / "results.json").read_text())
    stopped = results["run_stopped"]
    assert code == 9 and results["exit_status"] == 9, f"exit {code}, stopped {stopped}\n{output[-3000:]}"
    named = re.search(r'no answer to tools/call (\w+) (\{.*\}) within 5 s', stopped[0]) if len(stopped) == 1 else None
    assert named and named[1] in {t["name"] for t in mapping["tools"]} and ".." in named[2], stopped
    assert stopped[0] in output and wall < WALL_S
