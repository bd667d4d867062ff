"""Building a board: each catalog entry installed, started in a sandbox and judged by the suite in
a process of its own; its result kept in DIR/entries/NAME/entry.json (what a rerun, a shard merge
and the site read)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from .. import __version__
from .catalog import Entry, suite_fingerprint
from .install import InstallError, Installed, NotRun, install
from .sandbox import DESCRIPTIONS

RUN_TIMEOUT = 600.0
# What a server writes to stderr when the sandbox stopped it reaching the network.
NETWORK = re.compile(r"ENOTFOUND|EAI_AGAIN|ENETUNREACH|ECONNREFUSED|Network is unreachable|getaddrinfo|"
                     r"Temporary failure in name resolution|Name or service not known|fetch failed", re.I)
FINDINGS = ("fail", "advisory")


def entry_dir(out: Path, name: str) -> Path:
    return out / "entries" / name


def load_entry(out: Path, name: str) -> dict[str, Any] | None:
    path = entry_dir(out, name) / "entry.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def portable(entry: Entry, bin_name: str | None = None) -> str:
    """The server's command as anyone can type it (npx, uvx), for a rerun line."""
    bin_name = bin_name or entry.raw.get("bin") or entry.package.rpartition("/")[2]
    if entry.kind == "npm":
        packages = " ".join(f"-p {shlex.quote(p)}" for p in (entry.spec, *entry.beside))
        head = f"npx -y {packages} {bin_name}"
    elif entry.kind == "pypi":
        extra = "".join(f" --with {shlex.quote(p)}" for p in entry.beside)
        head = f"uvx --from {shlex.quote(entry.spec)}{extra} {bin_name}"
    else:
        head = entry.package
    config = entry.raw.get("config")
    args = [a.replace("{config}", config["name"]) if config else a for a in entry.args]
    command = " ".join([head, *(shlex.quote(a) if a != "{root}" else a for a in args)])
    if entry.env:
        command = "env " + " ".join(f"{k}={shlex.quote(v) if v != '{root}' else v}" for k, v in entry.env.items()) + " " + command
    if config:
        script = f'printf %s "$1" > {shlex.quote(config["name"])} && exec {command}'
        command = f"sh -c {shlex.quote(script)} sh {shlex.quote(config['text'])}"
    return command


def rerun_line(entry: Entry, mapping_file: str, nodeid: str | None = None, bin_name: str | None = None) -> str:
    line = (f"retrieval-contract --profile generic-files --mapping {shlex.quote(mapping_file)} "
            f"--server-cmd {shlex.quote(portable(entry, bin_name))}")
    for option in entry.raw.get("options", []):
        line += f" {shlex.quote(option)}"
    return line + (f" {nodeid}" if nodeid else "")


def _mapping_for(entry: Entry, folder: Path, launch: str) -> str:
    """The --mapping value: auto, or a file holding the entry's mapping with its server set to
    the launcher (a mapping file's own server command is the worked example's, not the package's)."""
    mapping = entry.mapping
    if mapping == "auto":
        return "auto"
    data = dict(mapping) if isinstance(mapping, dict) else yaml.safe_load(Path(mapping).read_text(encoding="utf-8"))
    server = dict(data.get("server") or {})
    server["cmd"] = launch
    server.pop("env", None)  # the entry's env is the launcher's
    data["server"] = server
    path = folder / "mapping.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


RUNNING: set[subprocess.Popen] = set()  # the suite's runs under way: killed if the build is stopped


def stop_all() -> None:
    """Kill every run still under way (the build was interrupted): no suite, and no server under
    it, outlives the command."""
    for proc in list(RUNNING):
        _kill(proc)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


def _summary(results: dict[str, Any]) -> dict[str, Any]:
    verdicts = {r["id"]: r["status"] for r in results.get("requirements", [])}
    findings = []
    for row in results.get("requirements", []):
        if row["status"] in FINDINGS:
            findings.append({"requirement": row["id"], "status": row["status"], "behavior": row.get("behavior", ""),
                             "evidence": list(row.get("evidence", []))[:20],
                             "evidence_total": len(row.get("evidence", [])),
                             "tests": [t["nodeid"] for t in row.get("tests", []) if t.get("verdict") in FINDINGS]})
    findings.sort(key=lambda f: (f["status"] != "fail", f["requirement"]))
    unusable = results.get("server_unusable") or {}
    stderr = [line for log in _logs(results) for line in log.get("stderr", [])] + list(unusable.get("stderr_tail") or [])
    network = [line[:300] for line in stderr if NETWORK.search(line)][:5]
    return {"verdicts": verdicts, "findings": findings, "network": network,
            "exit_status": results.get("exit_status"), "server_info": results.get("server_info"),
            "server_unusable": results.get("server_unusable"), "run_stopped": results.get("run_stopped") or [],
            "suite_errors": [e.get("message", "") for e in results.get("suite_errors") or []]}


def _logs(results: dict[str, Any]) -> list[dict[str, Any]]:
    logs = results.get("server_logs") or []
    return [logs] if isinstance(logs, dict) else list(logs)


def overall(record: dict[str, Any]) -> str:
    """One word for the server: not run, error, fail, advisory, blocked or pass."""
    if record["state"] != "ran":
        return "not run" if record["state"] == "not run" else "error"
    verdicts = record.get("verdicts") or {}
    if record.get("server_unusable") or not verdicts:
        return "error"
    for word in ("fail", "advisory"):
        if word in verdicts.values():
            return word
    if {"blocked", "partial", "not-run"} & set(verdicts.values()):
        return "blocked"
    return "pass"


def run_entry(entry: Entry, out: Path, cache: Path, isolation: str, timeout: float = RUN_TIMEOUT,
              refresh: bool = False, log=print) -> dict[str, Any]:
    """The entry's record: kept from the last build when nothing it depends on changed."""
    folder = entry_dir(out, entry.name)
    key = entry.key()
    last = load_entry(out, entry.name)
    if last and not refresh and last.get("key") == key and last.get("state") == "ran":
        log(f"  kept        {entry.name} (package, mapping and suite unchanged; --refresh runs it again)")
        last.update(note=entry.raw.get("note", ""), language=entry.language)  # they change no run
        (folder / "entry.json").write_text(json.dumps(last, indent=1, sort_keys=True), encoding="utf-8")
        return last
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    record: dict[str, Any] = {
        "name": entry.name, "package": entry.raw["package"], "kind": entry.kind, "version": entry.version,
        "beside": list(entry.beside), "language": entry.language, "note": entry.raw.get("note", ""),
        "mapping_kind": "auto" if entry.mapping == "auto" else "hand", "key": key, "suite": suite_fingerprint(),
        "suite_version": __version__, "isolation": isolation, "isolation_text": DESCRIPTIONS[isolation],
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "state": "ran", "reason": "",
    }
    began = time.monotonic()
    try:
        installed = install(entry, cache)
    except NotRun as exc:
        record.update(state="not run", reason=str(exc))
    except InstallError as exc:
        record.update(state="install failed", reason=str(exc))
    else:
        _judge(entry, installed, folder, isolation, timeout, record)
    record["duration_s"] = round(time.monotonic() - began, 1)
    (folder / "entry.json").write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    log(f"  {overall(record):<11} {entry.name} ({record['duration_s']:.0f} s)"
        + (f": {record['reason']}" if record["reason"] else ""))
    return record


def _judge(entry: Entry, installed: Installed, folder: Path, isolation: str, timeout: float,
           record: dict[str, Any]) -> None:
    if installed.lock and installed.lock.is_file():
        shutil.copyfile(installed.lock, folder / ("package-lock.json" if entry.kind == "npm" else "requirements.lock.txt"))
        record["lock"] = (folder / ("package-lock.json" if entry.kind == "npm" else "requirements.lock.txt")).name
    record["runtime"] = installed.runtime
    spec = {"argv": installed.argv, "env": entry.env, "config": entry.raw.get("config"),
            "isolation": isolation, "visible": installed.visible}
    (folder / "launch.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    launch = f"{{python}} -m contract_tests.scoreboard.sandbox {shlex.quote(str(folder / 'launch.json'))} {{root}}"
    mapping = _mapping_for(entry, folder, launch)
    report = folder / "report"
    argv = [sys.executable, "-m", "contract_tests.cli", "--profile", "generic-files", "--mapping", mapping,
            "--server-cmd", launch, "--report", str(report), "-n", "0", *entry.raw.get("options", [])]
    with (folder / "output.txt").open("wb") as output:
        proc = subprocess.Popen(argv, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        RUNNING.add(proc)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            record.update(state="timed out", reason=f"the suite's run did not end in {timeout:.0f} s (killed)")
            return
        finally:
            RUNNING.discard(proc)
    used = report / "mapping.proposed.yaml" if mapping == "auto" else Path(mapping)
    if used.is_file():  # published with the command anyone can type, not the launcher's
        text = used.read_text(encoding="utf-8")
        published = yaml.safe_load(text)
        if isinstance(published, dict) and isinstance(published.get("server"), dict):
            published["server"]["cmd"] = portable(entry, installed.bin)
        comments = "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))
        head = f"# {entry.name}: the mapping the scoreboard judged {entry.raw['package']} by ({record['mapping_kind']})\n"
        head += comments
        (folder / "mapping.used.yaml").write_text(head + yaml.safe_dump(published, sort_keys=False), encoding="utf-8")
        record["mapping_file"] = "mapping.used.yaml"
    try:
        results = json.loads((report / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        record.update(state="suite error", reason=f"the run (exit {proc.returncode}) left no report: {exc}")
        return
    record.update(_summary(results))
    mapping_name = f"{entry.name}.mapping.yaml"
    record["rerun"] = rerun_line(entry, mapping_name, bin_name=installed.bin)
    for finding in record["findings"]:
        finding["rerun"] = [rerun_line(entry, mapping_name, nodeid, installed.bin) for nodeid in finding["tests"]]
    unusable = results.get("server_unusable")
    if unusable:
        tail = "; ".join((unusable.get("stderr_tail") or [])[-3:])
        record["reason"] = (f"not usable: {unusable.get('problem') or 'the server is not usable'}"
                            + (f"; its stderr ends: {tail}" if tail else ""))[:600]
