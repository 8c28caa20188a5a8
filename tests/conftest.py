from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Iterator
from typing import Any, cast

import pytest
from contract_server import ContractServer

import wikisuggest

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


class _AsyncAsBlocking:
    """An ``AsyncClient`` whose coroutine methods run to completion when called, so that a
    test written against the blocking client runs unchanged against the asyncio one."""

    def __init__(self, client: wikisuggest.AsyncClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not inspect.iscoroutinefunction(attribute):
            return attribute

        @functools.wraps(attribute)
        def run(*args: Any, **kwargs: Any) -> Any:
            return asyncio.run(attribute(*args, **kwargs))

        return run

    def __repr__(self) -> str:
        return repr(self._client)


@pytest.fixture(params=["sync", "async"])
def client_kind(request: pytest.FixtureRequest) -> str:
    """Each contract test that takes it runs once with each client."""
    return str(request.param)


def client_of(kind: str, user_agent: str | None = USER_AGENT, **options: Any) -> wikisuggest.Client:
    """A client of ``kind``, called as the blocking one is (see :class:`_AsyncAsBlocking`)."""
    if kind == "sync":
        return wikisuggest.Client(user_agent, **options)
    return cast(
        wikisuggest.Client, _AsyncAsBlocking(wikisuggest.AsyncClient(user_agent, **options))
    )
