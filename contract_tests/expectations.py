"""Per-implementation known failures, by requirement id (wpt-style metadata).

File format (YAML):
  implementation: my-server
  profile: section-source-local
  expected_failures:
    SSL-STR-004: "memory grows by 80 MiB over 1,000 calls; tracked in our issue 12"

A listed requirement's tests are strict xfails: a test that passes anyway fails the run
(unexpected pass), and an entry naming an id the profile does not have, or one no collected
test cites, is stale and fails the run too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml


class ExpectationsError(ValueError):
    pass


@dataclass
class Expectations:
    source: str | None = None
    implementation: str | None = None
    failures: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | None, profile_id: str) -> "Expectations":
        if not path:
            return cls()
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ExpectationsError(f"cannot read expectations file {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise ExpectationsError(f"{path}: expected a mapping at the top level")
        unknown_keys = set(data) - {"implementation", "profile", "expected_failures"}
        if unknown_keys:
            raise ExpectationsError(f"{path}: unknown keys {sorted(unknown_keys)}")
        if data.get("profile") not in (None, profile_id):
            raise ExpectationsError(f"{path}: written for profile {data['profile']!r}, not {profile_id!r}")
        failures = data.get("expected_failures") or {}
        if not isinstance(failures, dict) or not all(isinstance(v, str) and v for v in failures.values()):
            raise ExpectationsError(f"{path}: expected_failures maps requirement ids to a reason string")
        return cls(source=path, implementation=data.get("implementation"), failures=dict(failures))

    def stale(self, known_ids: set[str], cited_ids: set[str]) -> list[str]:
        problems = []
        for req_id in sorted(self.failures):
            if req_id not in known_ids:
                problems.append(f"{req_id}: not a requirement of this profile")
            elif req_id not in cited_ids:
                problems.append(f"{req_id}: no collected test cites it")
        return problems
