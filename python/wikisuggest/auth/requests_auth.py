"""``requests.auth.AuthBase`` over a token manager (see :mod:`wikisuggest.auth`)."""

from __future__ import annotations

import urllib.parse
from typing import Any

import requests
import requests.auth
import requests.utils

from .bearer import ScopedBearer, bearer_header, sent_token


class RequestsAuth(ScopedBearer, requests.auth.AuthBase):
    """Bearer tokens from a :class:`~wikisuggest.TokenManager` (or a personal API token) for
    ``requests`` (a ``Session``'s ``auth``, or ``auth=`` of one call), with one replay after
    a 401.

    A request whose body cannot be sent twice (a generator) is not replayed: its 401 is
    returned as is. With ``hosts``, only requests to those hosts carry the token.

    >>> session = requests.Session()  # doctest: +SKIP
    >>> session.auth = RequestsAuth(manager)  # doctest: +SKIP
    """

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        if not self.carries_token(urllib.parse.urlsplit(request.url or "").hostname):
            return request
        request.headers["Authorization"] = bearer_header(self._manager.token().access_token)
        request.hooks.setdefault("response", []).append(self._replay_once)
        return request

    def _replay_once(self, response: requests.Response, **send_options: Any) -> requests.Response:
        """Response hook: after a 401 to our token, renew it and send the request again."""
        sent = response.request
        rejected = sent_token(sent.headers.get("Authorization"))
        if response.status_code != 401 or rejected is None or not _rewindable(sent):
            return response
        renewed = self._manager.renew_rejected(rejected)
        if renewed is None or renewed.access_token == rejected:
            return response
        # Read and release the refused response, so its connection goes back to the pool.
        _ = response.content
        response.close()
        replay = sent.copy()
        # The replay does not replay again (copy() shares the hooks dict: make a new one).
        replay.hooks = {
            **sent.hooks,
            "response": [h for h in sent.hooks.get("response", []) if h != self._replay_once],
        }
        replay.headers["Authorization"] = bearer_header(renewed.access_token)
        if getattr(sent, "_body_position", None) is not None:
            requests.utils.rewind_body(replay)
        answered: requests.Response = response.connection.send(replay, **send_options)
        answered.history.append(response)
        answered.request = replay
        return answered

    def __repr__(self) -> str:
        return f"RequestsAuth({self._manager!r})"


def _rewindable(request: requests.PreparedRequest) -> bool:
    body = request.body
    return (
        body is None
        or isinstance(body, (bytes, str))
        or getattr(request, "_body_position", None) is not None
    )
