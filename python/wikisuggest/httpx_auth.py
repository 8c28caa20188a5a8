"""OAuth 2.0 for a bot's other ``httpx`` calls: a :class:`TokenManager` as ``httpx``
authentication, for ``httpx.Client`` and ``httpx.AsyncClient``.

>>> httpx.Client(auth=wikisuggest.httpx_auth.HttpxAuth(manager))  # doctest: +SKIP

Every request carries the manager's current bearer token (renewed ahead of expiry, once for
all threads and tasks). When a server still answers 401, the token is renewed once and the
request replayed once; a personal token, which cannot be renewed, leaves the 401 to the caller.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator

import httpx

from ._auth_common import bearer, manager
from .oauth import TokenManager

__all__ = ["HttpxAuth"]


class HttpxAuth(httpx.Auth):
    """``httpx`` authentication from a :class:`TokenManager` or a personal API token."""

    # A streamed body must be read before sending so that it can be sent again on a replay.
    requires_request_body = True

    def __init__(self, auth: TokenManager | str) -> None:
        self.manager = manager(auth)

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        token = self.manager.token()
        request.headers["Authorization"] = bearer(token)
        response = yield request
        if response.status_code == 401:
            fresh = self.manager.renew_rejected(token)
            if fresh is not None:
                request.headers["Authorization"] = bearer(fresh)
                yield request

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        token = await self.manager.token_async()
        request.headers["Authorization"] = bearer(token)
        response = yield request
        if response.status_code == 401:
            fresh = await self.manager.renew_rejected_async(token)
            if fresh is not None:
                request.headers["Authorization"] = bearer(fresh)
                yield request

    def __repr__(self) -> str:
        return f"HttpxAuth({self.manager!r})"
