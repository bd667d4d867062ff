"""Evidence that several tests judge, each under its own requirement: one server started and
watched once per worker instead of once per test (the side-effect tests' observed sweep,
concerns/test_side_effects.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Once(Generic[T]):
    """`make()`, run by the first test that asks for it (inside that test, so what goes wrong
    meets it as any call's error would) and kept for the worker's session; an error it raised
    is raised again in every test that asks, so each judges the same run."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._done = False
        self._value: T | None = None
        self._error: BaseException | None = None

    def get(self) -> T:
        if not self._done:
            self._done = True
            try:
                self._value = self._make()
            except BaseException as exc:  # noqa: BLE001 - every test that shares it meets it
                self._error = exc
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]
