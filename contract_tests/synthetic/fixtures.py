"""Which synthetic data a profile's suite runs on: a profile names its fixture kind in its spec,
and each kind (synthetic/adapter.py KINDS) builds itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contract_tests.contracts.specs import Profile
from contract_tests.synthetic import canister, files, notebooks, roots, vault, vault_agent  # noqa: F401 - each module registers its kind
from contract_tests.synthetic.adapter import KINDS, ContractFixture


def build_for(profile: Profile, base: Path, settings: dict[str, Any] | None = None) -> ContractFixture:
    """Build the profile's fixture; `settings` (fixed port, secrets) only for a running server."""
    try:
        kind = KINDS[profile.fixture_kind]
    except KeyError:
        raise ValueError(f"profile {profile.id}: unknown fixture kind {profile.fixture_kind!r}") from None
    return kind.build(profile, base, settings or {})
