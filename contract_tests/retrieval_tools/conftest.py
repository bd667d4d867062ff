"""The retrieval-tools profile's name for its fixture."""

import pytest


@pytest.fixture(scope="session")
def fixture_roots(contract_fixture):
    return contract_fixture
