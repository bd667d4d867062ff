"""The running test and the run's selection: the requirements the running test cites (a check
that names none files under the one it cites), the (requirement, case) pairs its checks ran
for, the requests another requirement's check judges, and which cases the run tries and which
failures the implementer expects. The plugin resets it before each test (start_test)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class Selection:
    """Run-wide settings a sweep consults: which cases to try (--case), which failures the
    implementer expects (by requirement, or requirement and case)."""
    only_cases: set[str] = field(default_factory=set)
    expected_reqs: set[str] = field(default_factory=set)
    expected_cases: set[tuple[str, str]] = field(default_factory=set)

    def wants(self, case: str | None) -> bool:
        return not self.only_cases or case is None or any(case_matches(c, case) for c in self.only_cases)

    def expected(self, req: str, case: str | None) -> bool:
        return req in self.expected_reqs or self.expected_case(req, case)

    def expected_case(self, req: str, case: str | None) -> bool:
        """A case entry names the case exactly, or an attack for every tool and root it runs on
        (`traversal-leading` covers `traversal-leading@open_file:docs`)."""
        return case is not None and any(r == req and case_matches(c, case) for r, c in self.expected_cases)


def case_matches(entry: str, case: str) -> bool:
    return case == entry or case.startswith(entry + "@")


SELECTION = Selection()
_CHECKED: set[tuple[str, str]] = set()  # (requirement, case) pairs the running test checked
_CHECKED_REQS: set[str] = set()          # requirements a check of the running test ran for


def _checked(req: str, case: str | None) -> None:
    _CHECKED_REQS.add(req)
    if case is not None:
        _CHECKED.add((req, case))


def checked_requirements() -> set[str]:
    """Requirements the running test's Findings checks ran for (held or not)."""
    return set(_CHECKED_REQS)


def checked_cases() -> set[tuple[str, str]]:
    """The (requirement, case) pairs the running test checked (an expected case entry that is
    checked and never fails is an unexpected pass: the report decides over the whole run)."""
    return set(_CHECKED)


# Requests of the running test whose success another requirement's own check reports (a path
# attack the path sweep judges): outside content in their responses is that finding, not a leak
# for the canary guard to file a second time.
_JUDGED_ELSEWHERE: set[str] = set()


def judged_elsewhere(request: str) -> None:
    _JUDGED_ELSEWHERE.add(request)


def requests_judged_elsewhere() -> set[str]:
    return set(_JUDGED_ELSEWHERE)


# The requirements the running test cites (its `req` marks): a check that names none files under
# the test's one requirement.
_OWN: tuple[str, ...] = ()


class UnnamedRequirement(LookupError):
    """A check named no requirement, and the running test does not cite exactly one: a bug in
    the suite's own code (a suite error), never evidence against the server."""


def own(req: str | None = None) -> str:
    """`req`, or else the one requirement the running test cites."""
    if req is not None:
        return req
    if len(_OWN) == 1:
        return _OWN[0]
    raise UnnamedRequirement(f"a check names no requirement, and the running test cites "
                             f"{len(_OWN)} ({', '.join(_OWN) or 'none'}): it must name the one it checks")


def cited() -> tuple[str, ...]:
    """The requirements the running test cites."""
    return _OWN


def start_test(requirements: Iterable[str] = ()) -> None:
    global _OWN
    _OWN = tuple(dict.fromkeys(requirements))
    _CHECKED.clear()
    _CHECKED_REQS.clear()
    _JUDGED_ELSEWHERE.clear()
