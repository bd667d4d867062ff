"""The command line: `retrieval-contract` and its subcommands (all, list, info, map, declare,
merge, scoreboard). `contract_tests.cli:main` is the console script."""

from contract_tests.cli.main import main

__all__ = ["main"]
