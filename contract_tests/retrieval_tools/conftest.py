"""The retrieval-tools profile's name for its fixture, and calls to the session's server."""

import pytest

from contract_tests.retrieval_tools.common import Calls


@pytest.fixture(scope="session")
def fixture_roots(contract_fixture):
    return contract_fixture


@pytest.fixture(scope="module")
def calls(server, client, names, profile):
    return Calls(server, names, profile)
