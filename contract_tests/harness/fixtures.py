"""Which synthetic data a profile's suite runs on: a profile names its fixture kind in its spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..contracts import Profile
from . import canister, roots, vault


def _vault(profile: Profile, base: Path, settings: dict[str, Any]) -> Any:
    return vault.build_fixture(base, profile.vectors(), profile.limits)


def _roots(profile: Profile, base: Path, settings: dict[str, Any]) -> Any:
    return roots.build_roots(base)


def _canister(profile: Profile, base: Path, settings: dict[str, Any]) -> Any:
    return canister.build_canister(base, profile.vectors(), profile.limits, **settings)


BUILDERS = {"vault": _vault, "roots": _roots, "canister": _canister}


def build_for(profile: Profile, base: Path, settings: dict[str, Any] | None = None) -> Any:
    """Build the profile's fixture; `settings` (fixed port, secrets) only for a running server."""
    try:
        builder = BUILDERS[profile.fixture_kind]
    except KeyError:
        raise ValueError(f"profile {profile.id}: unknown fixture kind {profile.fixture_kind!r}") from None
    return builder(profile, base, settings or {})
