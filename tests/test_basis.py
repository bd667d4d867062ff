"""Every requirement says its basis, as data: a seed requirement quotes its seed, and the quote
is in the seed; an MCP requirement links the spec; a profile requirement says why."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from contract_tests.contracts import specs as contracts

ROOT = Path(__file__).resolve().parent.parent


def seeds_dir() -> Path | None:
    """The seed specs: $RC_SEEDS, else a `shared/seeds` folder beside the checkout or above it."""
    if os.environ.get("RC_SEEDS"):
        return Path(os.environ["RC_SEEDS"])
    for parent in [ROOT, *ROOT.parents]:
        if (parent / "shared" / "seeds").is_dir():
            return parent / "shared" / "seeds"
    return None


def _norm(text: str) -> str:
    """Quotes match the seed verbatim but for whitespace, backticks and asterisks (two seeds were
    flattened to one line, one lost its backticks)."""
    return re.sub(r"[\s`*]", "", text)


REQS = [(p, r) for p in contracts.available_profiles() for r in contracts.load_profile(p).requirements.values()]


@pytest.mark.parametrize("profile_id,req", REQS, ids=[f"{p}-{r.id}" for p, r in REQS])
def test_the_requirement_states_its_basis(profile_id, req):
    assert req.basis in ("seed", "mcp", "profile", "declared")
    if req.basis == "seed":
        assert req.quote and req.document, f"{req.id}: a seed requirement quotes its seed"
    if req.basis == "profile":
        assert req.reading, f"{req.id}: an advisory says why the profile reads the seed so"
    if req.basis == "mcp":
        assert req.source, f"{req.id}: an MCP requirement links the spec"
    if req.basis == "declared":
        assert req.source, f"{req.id}: a declared requirement says what declares it"
        assert contracts.load_profile(profile_id).data.get("mapped"), \
            f"{req.id}: only a mapped profile's requirements rest on the implementation's declaration"


def test_every_seed_quote_appears_in_its_seed():
    seeds = seeds_dir()
    if seeds is None:
        pytest.skip("the seed specs are not on this machine (set RC_SEEDS to the folder that holds them)")
    missing = []
    for profile_id, req in REQS:
        quotes = [(req.document, q) for q in req.quote] if req.basis == "seed" else []
        for document, words in quotes + list(req.elsewhere):
            path = seeds / document.removeprefix("seeds/")
            if not path.is_file():
                missing.append(f"{req.id}: no document {document}")
            elif _norm(words) not in _norm(path.read_text(encoding="utf-8")):
                missing.append(f"{req.id}: {words!r} (in {document})")
    assert not missing, "quotes not found in their documents:\n" + "\n".join(missing)


def test_every_not_testable_sentence_names_a_document_that_exists():
    seeds = seeds_dir()
    if seeds is None:
        pytest.skip("the seed specs are not on this machine (set RC_SEEDS to the folder that holds them)")
    missing = []
    for profile_id in contracts.available_profiles():
        data = contracts.load_profile(profile_id).data
        for item in data.get("not_testable", ()):
            document = item.get("document", data.get("seed"))
            if not document or not (seeds / document.removeprefix("seeds/")).is_file():
                missing.append(f"{profile_id}: {item['sentence'][:60]!r} names {document!r}")
    assert not missing, "not_testable sentences whose document is missing:\n" + "\n".join(missing)


def test_a_default_run_fails_only_on_seed_and_mcp_requirements():
    for profile_id in contracts.available_profiles():
        profile = contracts.load_profile(profile_id)
        advisory = {r.id for r in profile.requirements.values() if r.advisory}
        assert advisory == {r.id for r in profile.requirements.values() if r.basis == "profile"}
