"""OAuth 2.0 for other HTTP stacks: a :class:`~wikisuggest.TokenManager` (or a personal API
token) authenticating a bot's other requests.

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

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .errors import InvalidParameter
from .oauth import TokenManager

if TYPE_CHECKING:
    from ._httpx_auth import HttpxAuth
    from ._requests_auth import RequestsAuth

__all__ = ["HttpxAuth", "RequestsAuth", "bearer_manager"]


def bearer_manager(auth: TokenManager | str) -> TokenManager:
    """``auth`` as a token manager: a personal API token string becomes
    ``TokenManager.personal(auth)``."""
    if isinstance(auth, TokenManager):
        return auth
    if isinstance(auth, str):
        if not auth.strip():
            raise InvalidParameter("the API token is empty", parameter="auth")
        return TokenManager.personal(auth)
    raise InvalidParameter(
        f"auth must be a TokenManager or a personal API token, got {type(auth).__name__}",
        parameter="auth",
    )


def host_scope(hosts: Iterable[str] | None) -> frozenset[str] | None:
    """The hosts a token may be sent to (``None``: every host), lower-cased."""
    if hosts is None:
        return None
    if isinstance(hosts, str):
        raise InvalidParameter("hosts must be a collection of host names", parameter="hosts")
    scope = set()
    for host in hosts:
        # One colon is a port; an IPv6 address has several and no brackets here.
        if (
            not isinstance(host, str)
            or not host.strip()
            or any(c in host for c in "/ @[]")
            or host.count(":") == 1
        ):
            raise InvalidParameter(
                f"hosts holds {host!r}, not a host name (no scheme, port or path)",
                parameter="hosts",
            )
        scope.add(host.strip().lower().rstrip("."))
    if not scope:
        raise InvalidParameter(
            "hosts is empty: no request would carry the token", parameter="hosts"
        )
    return frozenset(scope)


def in_scope(scope: frozenset[str] | None, host: str | None) -> bool:
    """Whether a request to ``host`` may carry the token."""
    return scope is None or (host or "").lower().rstrip(".") in scope


def bearer_header(access_token: str) -> str:
    return f"Bearer {access_token}"


def sent_token(authorization: str | bytes | None) -> str | None:
    """The bearer token an ``Authorization`` header carried, if any."""
    if isinstance(authorization, bytes):
        authorization = authorization.decode("latin-1")
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


def __getattr__(name: str) -> Any:
    # The adapters import their HTTP library only when asked for, so that neither is needed
    # to import wikisuggest.
    try:
        if name == "RequestsAuth":
            from ._requests_auth import RequestsAuth

            return RequestsAuth
        if name == "HttpxAuth":
            from ._httpx_auth import HttpxAuth

            return HttpxAuth
    except ImportError as missing:
        extra = "requests" if name == "RequestsAuth" else "httpx"
        raise ImportError(
            f"{name} needs {extra}: pip install 'wikisuggest[{extra}]'", name=missing.name
        ) from missing
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
