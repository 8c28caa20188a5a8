"""``httpx.Auth`` over a token manager (see :mod:`wikisuggest.auth`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
from typing import TYPE_CHECKING, Any

import httpx

from .bearer import ScopedBearer, bearer_header
from .manager import TokenManager
from .tokens import Token

if TYPE_CHECKING:
    from .._native import NativeCall

    #: What the flow yields: a manager's call to send, or a request for httpx to send.
    _Step = NativeCall[Any] | httpx.Request
    _Reply = Any


def _bearer_flow(request: httpx.Request, manager: TokenManager) -> Generator[_Step, _Reply, None]:
    """The authentication of one request, written once for the blocking and the asyncio
    driver: authenticate, send, and on 401 renew once and send once more. It yields the
    manager's calls (which a driver sends blocking or awaits) and the requests (which it hands
    to httpx), and is sent back their outcomes."""
    current = yield manager.native.token()
    token = Token.from_dict(current).access_token
    request.headers["Authorization"] = bearer_header(token)
    response = yield request
    if not isinstance(response, httpx.Response) or response.status_code != 401:
        return
    renewed = yield manager.native.renew_rejected(token)
    if renewed is None or (fresh := Token.from_dict(renewed).access_token) == token:
        return
    request.headers["Authorization"] = bearer_header(fresh)
    yield request


def _next_step(flow: Generator[_Step, _Reply, None], reply: _Reply) -> _Step | None:
    """The flow's next step, ``None`` once it is done."""
    try:
        return flow.send(reply)
    except StopIteration:
        return None


class HttpxAuth(ScopedBearer, httpx.Auth):
    """Bearer tokens from a :class:`~wikisuggest.TokenManager` (or a personal API token) for
    ``httpx.Client`` and ``httpx.AsyncClient``, with one replay after a 401. With ``hosts``,
    only requests to those hosts carry the token.

    >>> client = httpx.Client(auth=HttpxAuth(manager))  # doctest: +SKIP
    """

    # The body is read before the first attempt, so that the replay can send it again.
    requires_request_body = True

    # The two drivers differ only in how a manager's call is sent.
    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        if not self.carries_token(request.url.host):
            yield request
            return
        request.read()
        flow, reply = _bearer_flow(request, self._manager), None
        while (step := _next_step(flow, reply)) is not None:
            reply = (yield step) if isinstance(step, httpx.Request) else step.send()

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if not self.carries_token(request.url.host):
            yield request
            return
        await request.aread()
        flow, reply = _bearer_flow(request, self._manager), None
        while (step := _next_step(flow, reply)) is not None:
            reply = (yield step) if isinstance(step, httpx.Request) else await step.send_async()

    def __repr__(self) -> str:
        return f"HttpxAuth({self._manager!r})"
