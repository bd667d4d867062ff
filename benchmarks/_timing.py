"""Timing helpers shared by the benchmark scripts (run as `python benchmarks/<script>.py`)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def timed(fn: Callable[[], object], calls: int, warmup: int = 50) -> list[float]:
    """Milliseconds per call of `fn`, after `warmup` untimed calls (at most `calls` of them)."""
    for _ in range(min(warmup, calls)):
        fn()
    out = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def pct(values: list[float], q: int) -> float:
    """The q-th percentile (1..99) of at least one value."""
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]
