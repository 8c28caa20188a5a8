"""OAuth 2.0 for Wikimedia: tokens, the authorization-code flow with PKCE, a single-flight
:class:`TokenManager`, and adapters that lend its tokens to other HTTP stacks.

Three ways to authenticate a :class:`~wikisuggest.Client`:

- a **bot** (server-side app) uses ``TokenManager.client_credentials(client_id, client_secret)``;
- a **user** authorizes an app in the browser (:func:`authorization_url`, or
  :func:`~wikisuggest.authorize_with_loopback` in a notebook), and the app keeps the resulting
  token alive with ``TokenManager.from_refresh_token(...)``;
- a **personal API token** is passed as ``auth="..."`` (or ``TokenManager.personal(...)``).

The manager renews tokens ahead of expiry and after the server rejects one; however many
threads and asyncio tasks need a token at once, one request is made. Secrets never appear
in ``repr``, ``str``, exception messages or logs.

Other HTTP stacks:

- :class:`RequestsAuth` is a ``requests.auth.AuthBase``: set it as ``session.auth`` of a
  ``requests.Session`` (and so of mwapi, which sends through such a session);
- :class:`HttpxAuth` is an ``httpx.Auth`` for ``httpx.Client`` and ``httpx.AsyncClient``.

Both send ``Authorization: Bearer <token>`` with the manager's current token, so every
thread, task and stack shares one single-flight, rotation-safe token. When the server answers
401 to a token (expired early, revoked), the manager renews it once — however many requests
saw it rejected — and the request is sent again, once, with the new token. Neither shows a
token in ``repr``; errors come from the manager, which never quotes one.

``hosts=`` keeps the token to the hosts named (``["en.wikipedia.org"]``): a request to any
other host goes out without it. Give it whenever the session or client also fetches other
sites (pywikibot, for one, sends every request of a bot through one session).

``requests`` and ``httpx`` are optional (extras ``wikisuggest[requests]``,
``wikisuggest[httpx]``); each adapter imports its library when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .bearer import bearer_manager
from .code_grant import AuthorizationRequest, LoopbackServer, authorization_url, parse_redirect
from .manager import DEFAULT_AUTH_URL, TokenManager
from .tokens import FileTokenStore, Token, TokenStore

if TYPE_CHECKING:
    from .httpx_auth import HttpxAuth
    from .requests_auth import RequestsAuth

__all__ = [
    "DEFAULT_AUTH_URL",
    "AuthorizationRequest",
    "FileTokenStore",
    "HttpxAuth",
    "LoopbackServer",
    "RequestsAuth",
    "Token",
    "TokenManager",
    "TokenStore",
    "authorization_url",
    "bearer_manager",
    "parse_redirect",
]


def __getattr__(name: str) -> Any:
    # The adapters import their HTTP library only when asked for, so that neither is needed
    # to import wikisuggest.
    try:
        if name == "RequestsAuth":
            from .requests_auth import RequestsAuth

            return RequestsAuth
        if name == "HttpxAuth":
            from .httpx_auth import HttpxAuth

            return HttpxAuth
    except ImportError as missing:
        extra = "requests" if name == "RequestsAuth" else "httpx"
        raise ImportError(
            f"{name} needs {extra}: pip install 'wikisuggest[{extra}]'", name=missing.name
        ) from missing
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
