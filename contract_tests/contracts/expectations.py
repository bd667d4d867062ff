"""Per-implementation known failures (wpt-style metadata), by requirement or by one case.

File format (YAML):
  implementation: my-server
  profile: section-source-local
  expected_failures:
    SSL-STR-004: "memory grows by 80 MiB over 1,000 calls; tracked in our issue 12"
    SSL-OUT-005[heading-setext-lazy]: "one golden vector; our parser differs"
    SSL-IN-007[traversal-leading]: "one attack of the corpus"

A requirement entry expects that requirement to fail somewhere in the run; the run fails when
it does not (an unexpected pass). A case entry `ID[case]` expects exactly that case (a golden
vector, an attack, a tool-and-root sweep case, or a test's parameter id) to fail; a case that
passes fails the run. An entry naming an id the profile does not have, or a case no test ran,
is stale and fails the run too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from contract_tests.contracts.specs import Profile

_KEY = re.compile(r"^(?P<req>[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)(?:\[(?P<case>[^\]]+)\])?$")


class ExpectationsError(ValueError):
    pass


@dataclass
class Expectations:
    source: str | None = None
    implementation: str | None = None
    failures: dict[str, str] = field(default_factory=dict)  # key (REQ or REQ[case]) -> reason

    @classmethod
    def load(cls, path: str | None, profile: "Profile") -> "Expectations":
        if not path:
            return cls()
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ExpectationsError(f"cannot read expectations file {path}: {exc.strerror or exc}") from exc
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ExpectationsError(f"{path}: not valid YAML: {exc}") from exc
        if data is None or data == [] or data == {}:
            raise ExpectationsError(f"{path}: the file is empty; give expected_failures, or drop --expectations")
        if not isinstance(data, dict):
            raise ExpectationsError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
        unknown_keys = set(data) - {"implementation", "profile", "expected_failures"}
        if unknown_keys:
            raise ExpectationsError(f"{path}: unknown keys {sorted(unknown_keys)} "
                                    "(allowed: implementation, profile, expected_failures)")
        if data.get("profile") not in (None, profile.id):
            raise ExpectationsError(f"{path}: written for profile {data['profile']!r}, not {profile.id!r}")
        failures = data.get("expected_failures")
        if failures is None:
            failures = {}
        if not isinstance(failures, dict) or not all(isinstance(v, str) and v.strip() for v in failures.values()):
            raise ExpectationsError(f"{path}: expected_failures maps requirement ids (or ID[case]) to a reason string")
        problems = []
        for key in failures:
            match = _KEY.match(str(key))
            if not match:
                problems.append(f"stale entry {key}: not a requirement id or ID[case]")
            elif match["req"] not in profile.requirements:
                problems.append(f"stale entry {key}: {match['req']} is not a requirement of profile {profile.id}")
        if problems:
            raise ExpectationsError(f"{path}:\n  " + "\n  ".join(problems))
        return cls(source=path, implementation=data.get("implementation"),
                   failures={str(k): v.strip() for k, v in failures.items()})

    def requirement_entries(self) -> list[str]:
        return [k for k in self.failures if "[" not in k]

    def case_entries(self) -> list[tuple[str, str]]:
        out = []
        for key in self.failures:
            match = _KEY.match(key)
            if match and match["case"]:
                out.append((match["req"], match["case"]))
        return out

    def reason(self, req: str, case: str | None) -> str:
        if case is not None and f"{req}[{case}]" in self.failures:
            return self.failures[f"{req}[{case}]"]
        return self.failures.get(req, "expected")

    def stale(self, cited: dict[str, set[str]]) -> list[str]:
        """Entries no collected test can ever meet: a requirement no test cites. (A case entry
        is checked after the run, against the cases that ran.)"""
        return [f"stale entry {key}: no collected test cites {key.partition('[')[0]}"
                for key in self.failures if key.partition("[")[0] not in cited]
