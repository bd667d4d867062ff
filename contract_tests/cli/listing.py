"""`retrieval-contract list`: profiles, requirements (filtered by profile, tier and basis) and
what proves each: the tests citing it, with their parameter ids (golden vectors, cases), and the
path attacks a sweep sends for it."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from typing import Any

from contract_tests.contracts import specs as contracts


class _Collector:
    def __init__(self) -> None:
        self.by_req: dict[str, list[str]] = defaultdict(list)

    def pytest_collection_finish(self, session) -> None:
        from contract_tests.implementation.state import STATE
        for nodeid, (ids, _tiers) in session.config.stash[STATE].cited.items():
            for req in ids:
                self.by_req[req].append(nodeid.split("/")[-1])


def _tests(profile_id: str) -> dict[str, list[str]]:
    import pytest
    collector = _Collector()
    devnull = open(os.devnull, "w")
    saved = sys.stdout
    sys.stdout = devnull  # collect-only prints every id; list prints its own table
    try:
        pytest.main(["--pyargs", "contract_tests", "--collect-only", "-q", "-p", "no:cacheprovider",
                     "--rc-no-preflight", "--rc-profile", profile_id], plugins=[collector])
    finally:
        sys.stdout = saved
        devnull.close()
    return collector.by_req


def _attacks(profile: contracts.Profile) -> dict[str, int]:
    spec = profile.concerns.get("paths", {})
    if not spec:
        return {}
    counts: dict[str, int] = defaultdict(int)
    reqs = spec.get("requirements", {})
    for entry in contracts.policy("path-attacks.yaml")["paths"]:
        if "categories" in spec and entry["category"] not in spec["categories"]:
            continue
        counts[reqs.get(entry["category"], reqs.get("*"))] += 1
    return dict(counts)


def rows(profile_id: str, tier: str | None, basis: str | None) -> list[dict[str, Any]]:
    profile = contracts.load_profile(profile_id)
    tests = _tests(profile_id)
    attacks = _attacks(profile)
    out = []
    for req in profile.requirements.values():
        if (tier and tier not in req.tiers) or (basis and req.basis != basis):
            continue
        out.append({"id": req.id, "basis": req.basis, "tiers": list(req.tiers), "behavior": req.behavior,
                    "tests": tests.get(req.id, []), "corpus_attacks": attacks.get(req.id, 0)})
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="retrieval-contract list", description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=contracts.available_profiles())
    parser.add_argument("--tier", choices=contracts.TIERS)
    parser.add_argument("--basis", choices=("seed", "mcp", "profile", "declared"))
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    if not args.profile:
        for profile_id in contracts.available_profiles():
            profile = contracts.load_profile(profile_id)
            counts = defaultdict(int)
            for req in profile.requirements.values():
                counts[req.basis] += 1
            print(f"{profile_id}: {profile.data['title']} ({len(profile.requirements)} requirements: "
                  + ", ".join(f"{counts[b]} {b}" for b in ("seed", "mcp", "profile", "declared") if counts[b]) + ")")
        return 0
    listed = rows(args.profile, args.tier, args.basis)
    if args.format == "json":
        print(json.dumps(listed, indent=2))
        return 0
    for row in listed:
        print(f"{row['id']}  [{row['basis']}; {', '.join(row['tiers'])}]  {row['behavior']}")
        for test in row["tests"][:8]:
            print(f"    test: {test}")
        if len(row["tests"]) > 8:
            print(f"    ... and {len(row['tests']) - 8} more tests (cases)")
        if row["corpus_attacks"]:
            print(f"    path attacks: {row['corpus_attacks']} corpus entries, plus the attacks derived from the fixture")
    return 0
