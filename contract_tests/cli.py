"""`retrieval-contract`: the suite as a command; the same engine as `pytest --pyargs contract_tests`."""

from __future__ import annotations

import sys

import pytest


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["-h"], ["--help"]):
        print("usage: retrieval-contract [--profile ID] [--server-cmd CMD] [--expectations FILE] "
              "[--report DIR] [--req IDS] [any pytest option, e.g. -n auto, -m security]\n"
              "Runs the conformance suite (pytest --pyargs contract_tests) with these options.")
        return 0
    return int(pytest.main(["--pyargs", "contract_tests", "-p", "no:cacheprovider",
                             "-W", "ignore::pytest.PytestAssertRewriteWarning", *args]))


if __name__ == "__main__":
    sys.exit(main())
