"""The section-source profile's name for its fixture."""

import pytest


@pytest.fixture(scope="session")
def fixture_vault(contract_fixture):
    return contract_fixture
