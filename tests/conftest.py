"""Fixtures shared by every test folder: the contract server, the OAuth server, the client
kinds, the translation catalogs of the fixture wikis."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.contract_server import ContractServer
from support.oauth_server import OAuthTestServer
from support.translation_catalogs import catalogs  # noqa: F401 (a fixture of every test)


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


@pytest.fixture
def oauth_server() -> Iterator[OAuthTestServer]:
    """A fresh OAuth 2.0 token endpoint (and link service) on a loopback port."""
    server = OAuthTestServer().start()
    yield server
    server.stop()


@pytest.fixture(params=["sync", "async"])
def client_kind(request: pytest.FixtureRequest) -> str:
    """Each contract test that takes it runs once with each client."""
    return str(request.param)
