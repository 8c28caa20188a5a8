"""OAuth 2.0 for a bot's other ``requests`` calls: a :class:`TokenManager` as ``requests``
authentication.

>>> session = requests.Session()  # doctest: +SKIP
>>> session.auth = wikisuggest.requests_auth.RequestsAuth(manager)  # doctest: +SKIP

Every request carries the manager's current bearer token (renewed ahead of expiry, once for
all threads). When a server still answers 401, the token is renewed once and the request
replayed once with the new token; a personal token, which cannot be renewed, leaves the 401
to the caller.
"""

from __future__ import annotations

from typing import Any

from requests.auth import AuthBase

from ._auth_common import REPLAYED, bearer, manager
from .oauth import TokenManager

__all__ = ["RequestsAuth"]


class RequestsAuth(AuthBase):
    """``requests`` authentication (``session.auth = RequestsAuth(manager)``) from a
    :class:`TokenManager` or a personal API token."""

    def __init__(self, auth: TokenManager | str) -> None:
        self.manager = manager(auth)

    def __call__(self, request: Any) -> Any:
        request.headers["Authorization"] = bearer(self.manager.token())
        request.register_hook("response", self._replay_once)
        return request

    def _replay_once(self, response: Any, **send_options: Any) -> Any:
        sent = response.request
        if response.status_code != 401 or getattr(sent, REPLAYED, False):
            return response
        rejected = sent.headers.get("Authorization", "").removeprefix("Bearer ")
        fresh = self.manager.renew_rejected(rejected)
        if fresh is None:
            return response
        # Read and release the rejected response's connection before sending again.
        _ = response.content
        response.close()
        replay = sent.copy()
        setattr(replay, REPLAYED, True)
        replay.headers["Authorization"] = bearer(fresh)
        answer = response.connection.send(replay, **send_options)
        answer.history.append(response)
        answer.request = replay
        return answer

    def __repr__(self) -> str:
        return f"RequestsAuth({self.manager!r})"
