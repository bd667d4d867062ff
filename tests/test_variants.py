"""Correct variants the suite must pass: servers that take the other side of every choice their
seed leaves open (declared beside their patches with `@variant` in tests/mutants/launch*.py).
Each passes the default run; advisories (the profile's own readings) may be reported."""

from __future__ import annotations

import pytest

from tests.conftest import unchecked_passes
from tests.mutants import command, registry, suite_args

VARIANTS = [(name, phase) for name, m in sorted(registry().items()) if m.variant for phase in (m.phases or (None,))]


@pytest.mark.parametrize("name,phase", VARIANTS, ids=[f"{n}-{p}" if p else n for n, p in VARIANTS])
def test_a_correct_variant_passes_the_default_run(suite_run, name, phase):
    m = registry()[name]
    run = suite_run(*suite_args(m, phase), "--server-cmd", command(m))
    status = run.status()
    bad = {k: v for k, v in status.items() if v not in ("pass", "skip", "n/a", "advisory")}
    assert run.code == 0 and not bad, f"{name}: {bad}\n{run.output[-4000:]}"
    assert not unchecked_passes(run.results), f"{name}: pass with no check run: {unchecked_passes(run.results)}"
