"""`python -m contract_tests.cli`: the console script."""

import sys

from contract_tests.cli.retrieval_contract import main

sys.exit(main())
