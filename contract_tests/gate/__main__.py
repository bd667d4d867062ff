"""`python -m contract_tests.gate`: the CI gate."""

import sys

from contract_tests.gate import main

sys.exit(main())
