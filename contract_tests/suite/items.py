"""What the suite knows of one of its test items (whether it is a suite test, the requirement
ids it cites, its case: a parameter id) and of the process it runs in (an xdist worker or not)."""

from __future__ import annotations

from pathlib import Path

import pytest

SUITE_DIR = Path(__file__).resolve().parents[1]


def is_suite_item(item: pytest.Item) -> bool:
    return SUITE_DIR in Path(str(item.path)).resolve().parents


def item_requirements(item: pytest.Item) -> list[str]:
    return [req for mark in item.iter_markers("req") for req in mark.args]


def case_of(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.id if callspec is not None else None


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")
