"""Bearer-token helpers the adapters share: which hosts may carry a token, the header, and
the manager behind a personal API token."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import InvalidParameter
from .manager import TokenManager

__all__ = [
    "ScopedBearer",
    "bearer_header",
    "bearer_manager",
    "host_scope",
    "in_scope",
    "sent_token",
]


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


class ScopedBearer:
    """What every adapter holds: the manager behind the token, and the hosts that may carry
    it (``hosts=None``: every host)."""

    def __init__(self, auth: TokenManager | str, *, hosts: Iterable[str] | None = None) -> None:
        self._manager = bearer_manager(auth)
        self._hosts = host_scope(hosts)

    @property
    def manager(self) -> TokenManager:
        return self._manager

    def carries_token(self, host: str | None) -> bool:
        """Whether a request to ``host`` gets the token."""
        return in_scope(self._hosts, host)
