"""`retrieval-contract scoreboard CATALOG.yaml --out DIR`: install every server of a catalog,
judge each in a sandbox with the generic-files profile, and publish the board as static files.

Exit status: 0 the board is written; 2 the catalog or the options are wrong (nothing is run);
8 a run of the suite crashed or left no report (the board is written, the entry says so); 130
interrupted (Ctrl-C or SIGTERM: the runs under way are killed, the entries built are kept)."""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

USAGE_ERROR, SUITE_ERROR, INTERRUPTED = 2, 8, 130


def _terminated(_signum, _frame) -> None:
    raise KeyboardInterrupt  # SIGTERM (a CI job cancelled) stops the build as Ctrl-C does


def _shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"--shard takes i/n (1/4), not {text!r}") from exc
    if not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"--shard {text}: i must be between 1 and n")
    return i, n


def parser() -> argparse.ArgumentParser:
    from .board import RUN_TIMEOUT
    p = argparse.ArgumentParser(
        prog="retrieval-contract scoreboard",
        description="Install each server of CATALOG (schemas/scoreboard-catalog.schema.json), run the generic-files "
                    "profile on it in a sandbox, and write the board to --out: index.html, a page and a badge per "
                    "server, scoreboard.json, scoreboard.md. An entry whose package, mapping and suite are unchanged "
                    "since the last build in --out keeps its result.")
    p.add_argument("catalog", help="the catalog (YAML)")
    p.add_argument("--out", required=True, help="the board's folder (created; earlier results in it are reused)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="servers judged at once (default 1)")
    p.add_argument("--shard", type=_shard, help="build only shard i of n (entries i, i+n, ...); merge with --merge")
    p.add_argument("--only", action="append", default=[], metavar="NAME", help="build only this entry (repeatable)")
    p.add_argument("--refresh", action="store_true", help="run every selected entry again, even if unchanged")
    p.add_argument("--merge", nargs="+", metavar="SHARD_DIR",
                   help="build nothing: gather the entries of these shard boards into --out and write the site")
    p.add_argument("--cache", help="where packages are installed (default ~/.cache/retrieval-contract/scoreboard)")
    p.add_argument("--isolation", choices=("auto", "bwrap", "unshare", "none"), default="auto",
                   help="how servers are sandboxed (default auto: bwrap, else unshare, else none)")
    p.add_argument("--timeout", type=float, default=RUN_TIMEOUT,
                   help=f"seconds one server's run may take before it is killed (default {RUN_TIMEOUT:.0f})")
    return p


def main(argv: list[str]) -> int:
    from . import site
    from .board import entry_dir, load_entry, run_entry, stop_all
    from .catalog import CatalogError, load
    from .install import default_cache
    from .sandbox import choose

    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else USAGE_ERROR
    try:
        entries = load(args.catalog)
    except CatalogError as exc:
        sys.stderr.write(f"retrieval-contract scoreboard: {exc}\n")
        return USAGE_ERROR
    names = [e.name for e in entries]
    unknown = [n for n in args.only if n not in names]
    if unknown or args.jobs < 1:
        sys.stderr.write("retrieval-contract scoreboard: " + (
            f"--only names no entry of the catalog: {', '.join(unknown)}\n" if unknown else "-j takes 1 or more\n"))
        return USAGE_ERROR
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.merge:
        for shard in map(Path, args.merge):
            if not (shard / "entries").is_dir():
                sys.stderr.write(f"retrieval-contract scoreboard: --merge {shard}: not a board (no entries/ folder)\n")
                return USAGE_ERROR
            for name in names:
                if load_entry(shard, name) and shard.resolve() != out.resolve():
                    shutil.rmtree(entry_dir(out, name), ignore_errors=True)
                    shutil.copytree(entry_dir(shard, name), entry_dir(out, name))
    else:
        try:
            isolation = choose(args.isolation)
        except RuntimeError as exc:
            sys.stderr.write(f"retrieval-contract scoreboard: {exc}\n")
            return USAGE_ERROR
        selected = [e for i, e in enumerate(entries)
                    if (not args.only or e.name in args.only)
                    and (args.shard is None or i % args.shard[1] == args.shard[0] - 1)]
        cache = Path(args.cache) if args.cache else default_cache()
        print(f"retrieval-contract scoreboard: {len(selected)} of {len(entries)} servers, {args.jobs} at a time, "
              f"isolation {isolation}, cache {cache}", flush=True)
        pool = ThreadPoolExecutor(max_workers=args.jobs)
        previous = signal.signal(signal.SIGTERM, _terminated)
        try:
            list(pool.map(lambda e: run_entry(e, out, cache, isolation, args.timeout, args.refresh,
                                              log=lambda line: print(line, flush=True)), selected))
        except KeyboardInterrupt:
            sys.stderr.write("retrieval-contract scoreboard: interrupted; the runs under way are stopped, the entries "
                             "built so far are kept\n")
            return INTERRUPTED
        finally:
            stop_all()  # an interrupted build leaves no suite and no server running
            pool.shutdown(wait=True, cancel_futures=True)
            signal.signal(signal.SIGTERM, previous)
    records = [r for r in (load_entry(out, n) for n in names) if r]
    missing = [n for n in names if not load_entry(out, n)]
    doc = site.write(out, records, missing)
    overall = [s["overall"] for s in doc["servers"]]
    print(f"retrieval-contract scoreboard: {out / 'index.html'}: {len(records)} servers "
          + ", ".join(f"{w} {overall.count(w)}" for w in ("fail", "advisory", "blocked", "pass", "not run", "error")
                      if overall.count(w))
          + (f"; missing {len(missing)} ({', '.join(missing[:5])})" if missing else ""), flush=True)
    crashed = [r["name"] for r in records if r["state"] == "suite error" or r.get("suite_errors")]
    if crashed:
        sys.stderr.write(f"retrieval-contract scoreboard: the suite crashed on {', '.join(crashed)} "
                         "(see entries/NAME/output.txt)\n")
        return SUITE_ERROR
    return 0
