"""Access tokens and where they are kept: :class:`Token`, :class:`TokenStore`,
:class:`FileTokenStore`.

Secrets never appear in ``repr`` or ``str``.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._native import file_store_load, file_store_save
from ..errors import InvalidParameter

__all__ = ["FileTokenStore", "Token", "TokenStore"]

_REDACTED = "***"


# Stored times are clamped to what `datetime` can hold (1970 to the end of year 9999), as
# the native side does: a token store is input, and 1e19 must not become an OverflowError.
_EPOCH = _dt.datetime.fromtimestamp(0, tz=_dt.timezone.utc)
_LATEST = _dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=_dt.timezone.utc)
# Ten years, the longest lifetime the native side believes a server states.
_MAX_LIFETIME = 10 * 365 * 24 * 3600


def _timestamp(value: Any, name: str) -> _dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        return value
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        # The value is not quoted: a damaged store may hold a token in any field.
        raise InvalidParameter(f"{name} is not a number of seconds", parameter="token") from None
    if seconds != seconds:  # NaN
        return _EPOCH
    if seconds >= _LATEST.timestamp():
        return _LATEST
    if seconds <= 0:
        return _EPOCH
    return _dt.datetime.fromtimestamp(seconds, tz=_dt.timezone.utc)


def _lifetime(value: Any) -> int | None:
    if value is None:
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise InvalidParameter("expires_in is not a number of seconds", parameter="token") from None
    if seconds != seconds:
        raise InvalidParameter("expires_in is not a number of seconds", parameter="token")
    return int(min(max(seconds, 0.0), _MAX_LIFETIME))


def _later(start: _dt.datetime, seconds: float) -> _dt.datetime:
    try:
        return start + _dt.timedelta(seconds=seconds)
    except (OverflowError, ValueError):
        return _LATEST


@dataclass(frozen=True, slots=True)
class Token:
    """An access token, as granted by the token endpoint.

    ``refresh_token`` is ``None`` for client-credentials tokens. Times are timezone-aware
    (UTC); ``expires_at`` is ``None`` for tokens that never expire (personal API tokens).
    ``repr`` and ``str`` never show either token.
    """

    token_type: str
    access_token: str = field(repr=False)
    refresh_token: str | None = field(repr=False)
    expires_in: int | None
    obtained_at: _dt.datetime
    expires_at: _dt.datetime | None

    def __str__(self) -> str:
        refresh = "" if self.refresh_token is None else f", refresh token {_REDACTED}"
        until = (
            "never expires"
            if self.expires_at is None
            else f"expires {self.expires_at.isoformat(timespec='seconds')}"
        )
        return f"{self.token_type} token {_REDACTED}{refresh}, {until}"

    def is_expired(self, leeway: float = 0.0) -> bool:
        """Whether the token is expired (or will be within ``leeway`` seconds) by the wall clock."""
        if self.expires_at is None:
            return False
        now = _dt.datetime.now(tz=_dt.timezone.utc)
        return _later(now, leeway) >= self.expires_at

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (times as seconds since the epoch): what stores receive."""
        return {
            "token_type": self.token_type,
            "access_token": self.access_token,
            "refresh_token": self.refresh_token,
            "expires_in": self.expires_in,
            "obtained_at": self.obtained_at.timestamp(),
            "expires_at": None if self.expires_at is None else self.expires_at.timestamp(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Token:
        """Inverse of :meth:`to_dict`.

        Out-of-range times and lifetimes are clamped (to the end of year 9999, and ten years);
        an error about a malformed field names the field, never its value.
        """
        if not isinstance(data, Mapping) or not data.get("access_token"):
            raise InvalidParameter("a token needs an access_token", parameter="token")
        obtained = _timestamp(data.get("obtained_at"), "obtained_at") or _dt.datetime.now(
            tz=_dt.timezone.utc
        )
        expires_in = _lifetime(data.get("expires_in"))
        expires_at = _timestamp(data.get("expires_at"), "expires_at")
        if expires_at is None and expires_in is not None:
            expires_at = _later(obtained, expires_in)
        refresh = data.get("refresh_token")
        return cls(
            token_type=str(data.get("token_type") or "Bearer"),
            access_token=str(data["access_token"]),
            refresh_token=None if refresh is None else str(refresh),
            expires_in=expires_in,
            obtained_at=obtained,
            expires_at=expires_at,
        )


@runtime_checkable
class TokenStore(Protocol):
    """Persistence for a :class:`TokenManager`: ``load()`` returns what ``save()`` was given.

    Both are called while the manager holds its renewal lock (so a rotated refresh token is
    saved before anyone can use the old one), from one of the library's I/O threads. They must
    not use the token manager themselves.
    """

    def load(self) -> Mapping[str, Any] | None: ...

    def save(self, token: Mapping[str, Any]) -> None: ...


@dataclass(frozen=True, slots=True)
class FileTokenStore:
    """A JSON file readable only by its owner (mode 0600), replaced atomically on save.

    ``~`` is expanded; a missing directory is created (mode 0700) on the first save. Token
    managers in several processes may share one file: a renewal holds an exclusive lock on
    ``<path>.lock`` and re-reads the file first, so a refresh token is never spent twice.
    """

    path: str

    def __init__(self, path: str | os.PathLike[str]) -> None:
        object.__setattr__(self, "path", os.path.expanduser(os.fspath(path)))

    def load(self) -> dict[str, Any] | None:
        return file_store_load(self.path)

    def save(self, token: Mapping[str, Any]) -> None:
        file_store_save(self.path, dict(token))
