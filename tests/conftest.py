from __future__ import annotations

from collections.abc import Iterator

import pytest
from contract_server import ContractServer

USER_AGENT = "wikisuggest-tests/1.0 (https://example.org/wikisuggest-tests; tests@example.org)"


@pytest.fixture(scope="session")
def contract_server_session() -> Iterator[ContractServer]:
    server = ContractServer().start()
    yield server
    server.stop()


@pytest.fixture
def contract_server(contract_server_session: ContractServer) -> Iterator[ContractServer]:
    contract_server_session.reset()
    yield contract_server_session
    contract_server_session.reset()
