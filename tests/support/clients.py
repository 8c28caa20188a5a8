"""Clients of the tests' loopback servers: the User-Agent every test sends, and blocking and
asyncio clients set up for the contract and OAuth servers."""

from __future__ import annotations

import asyncio
import functools
import inspect
from typing import Any, cast

import wikisuggest
from support.contract_server import ContractServer
from support.oauth_server import OAuthTestServer

USER_AGENT = "wikisuggest-tests/1.0 (https://example.org/wikisuggest-tests; tests@example.org)"


def oauth_client(server: OAuthTestServer, auth: Any = None) -> wikisuggest.Client:
    """A blocking client of ``server``'s service and token endpoint."""
    return wikisuggest.Client(
        USER_AGENT, base_url=server.url, auth_url=server.url, auth=auth, backoff=0.01
    )


def oauth_async_client(server: OAuthTestServer, auth: Any = None) -> wikisuggest.AsyncClient:
    """The asyncio twin of :func:`oauth_client`."""
    return wikisuggest.AsyncClient(
        USER_AGENT, base_url=server.url, auth_url=server.url, auth=auth, backoff=0.01
    )


def client_for(server: ContractServer, **options: Any) -> wikisuggest.Client:
    """A blocking client of the contract server that does not retry (unless told to)."""
    settings: dict[str, Any] = {"max_retries": 0, "backoff": 0.01}
    settings.update(options)
    return wikisuggest.Client(USER_AGENT, base_url=server.url, **settings)


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


def client_of(kind: str, user_agent: str | None = USER_AGENT, **options: Any) -> wikisuggest.Client:
    """A client of ``kind``, called as the blocking one is (see :class:`_AsyncAsBlocking`)."""
    if kind == "sync":
        return wikisuggest.Client(user_agent, **options)
    return cast(
        wikisuggest.Client, _AsyncAsBlocking(wikisuggest.AsyncClient(user_agent, **options))
    )
