"""``httpx.Auth`` over a token manager (see :mod:`wikisuggest.adapters`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator, Iterable

import httpx

from .adapters import bearer_header, bearer_manager, host_scope, in_scope
from .oauth import TokenManager


class _NeedToken:
    """A step of :func:`_bearer_flow`: send back the manager's current access token."""


class _Renew:
    """A step of :func:`_bearer_flow`: send back the token renewed after ``rejected`` was
    refused (``None`` when it cannot be renewed)."""

    __slots__ = ("rejected",)

    def __init__(self, rejected: str) -> None:
        self.rejected = rejected

    def __repr__(self) -> str:
        return "_Renew(***)"


_NEED_TOKEN = _NeedToken()
_Step = _NeedToken | _Renew | httpx.Request
_Reply = str | None | httpx.Response


def _bearer_flow(request: httpx.Request) -> Generator[_Step, _Reply, None]:
    """The authentication of one request, free of I/O so that the blocking and the asyncio
    driver share it: authenticate, send, and on 401 renew once and send once more."""
    token = yield _NEED_TOKEN
    if not isinstance(token, str):
        return
    request.headers["Authorization"] = bearer_header(token)
    response = yield request
    if not isinstance(response, httpx.Response) or response.status_code != 401:
        return
    renewed = yield _Renew(token)
    if not isinstance(renewed, str) or renewed == token:
        return
    request.headers["Authorization"] = bearer_header(renewed)
    yield request


class HttpxAuth(httpx.Auth):
    """Bearer tokens from a :class:`~wikisuggest.TokenManager` (or a personal API token) for
    ``httpx.Client`` and ``httpx.AsyncClient``, with one replay after a 401. With ``hosts``,
    only requests to those hosts carry the token.

    >>> client = httpx.Client(auth=HttpxAuth(manager))  # doctest: +SKIP
    """

    # The body is read before the first attempt, so that the replay can send it again.
    requires_request_body = True

    def __init__(self, auth: TokenManager | str, *, hosts: Iterable[str] | None = None) -> None:
        self._manager = bearer_manager(auth)
        self._hosts = host_scope(hosts)

    @property
    def manager(self) -> TokenManager:
        return self._manager

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        if not in_scope(self._hosts, request.url.host):
            yield request
            return
        request.read()
        flow = _bearer_flow(request)
        reply: _Reply = None
        try:
            while True:
                step = flow.send(reply)
                if isinstance(step, _NeedToken):
                    reply = self._manager.token().access_token
                elif isinstance(step, _Renew):
                    renewed = self._manager.renew_rejected(step.rejected)
                    reply = None if renewed is None else renewed.access_token
                else:
                    reply = yield step
        except StopIteration:
            return

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if not in_scope(self._hosts, request.url.host):
            yield request
            return
        await request.aread()
        flow = _bearer_flow(request)
        reply: _Reply = None
        try:
            while True:
                step = flow.send(reply)
                if isinstance(step, _NeedToken):
                    reply = (await self._manager.token_async()).access_token
                elif isinstance(step, _Renew):
                    renewed = await self._manager.renew_rejected_async(step.rejected)
                    reply = None if renewed is None else renewed.access_token
                else:
                    reply = yield step
        except StopIteration:
            return

    def __repr__(self) -> str:
        return f"HttpxAuth({self._manager!r})"
