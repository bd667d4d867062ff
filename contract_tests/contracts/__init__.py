"""The contracts as data: the specs, schemas and policies (specs.py), and what a user keeps in a
repository beside them: declarations, mappings (and --mapping auto's proposals) and
expectations. Imports nothing of the suite's.

`contract_tests.contracts` hands on specs.py's names, as the module of that name did before.
"""

from contract_tests.contracts.specs import *  # noqa: F401,F403
