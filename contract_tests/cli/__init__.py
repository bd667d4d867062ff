"""The command line: `retrieval-contract` (retrieval_contract.py) and its subcommands (all, list,
info, map, declare, merge, scoreboard). `contract_tests.cli:main` is the console script;
`contract_tests.cli` hands on retrieval_contract.py's names, as the module of that name did
before."""

from contract_tests.cli.retrieval_contract import *  # noqa: F401,F403
from contract_tests.cli.retrieval_contract import main

__all__ = ["main"]
