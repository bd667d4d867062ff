"""What a check concludes: findings named by requirement id, the verdict and exit status they
make (findings.py), the assertions every test shares (checks.py), and which test is running
(running.py). Imports the contracts and the transports, nothing above them.

`contract_tests.verdicts` hands on findings.py's names, as the module of that name did before.
"""

from contract_tests.verdicts.findings import *  # noqa: F401,F403
