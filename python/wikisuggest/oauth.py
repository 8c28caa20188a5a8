"""OAuth 2.0 for Wikimedia: tokens, the authorization-code flow with PKCE, and ``TokenManager``.

Three ways to authenticate a :class:`~wikisuggest.Client`:

- a **bot** (server-side app) uses ``TokenManager.client_credentials(client_id, client_secret)``;
- a **user** authorizes an app in the browser (:func:`authorization_url`, or
  :func:`authorize_with_loopback` in a notebook), and the app keeps the resulting token alive
  with ``TokenManager.from_refresh_token(...)``;
- a **personal API token** is passed as ``auth="..."`` (or ``TokenManager.personal(...)``).

The manager renews tokens ahead of expiry and after the server rejects one; however many
threads and asyncio tasks need a token at once, one request is made. Secrets never appear
in ``repr``, ``str``, exception messages or logs.
"""

from __future__ import annotations

import datetime as _dt
import http.server
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from . import _args, _native
from ._native import NativeTokenManager
from .errors import InvalidParameter, WikisuggestError

if TYPE_CHECKING:
    from .client import AsyncClient, Client

__all__ = [
    "AuthorizationRequest",
    "FileTokenStore",
    "LoopbackServer",
    "Token",
    "TokenManager",
    "TokenStore",
    "authorization_url",
    "authorize_with_loopback",
    "parse_redirect",
]

# The OAuth 2.0 server of Wikimedia wikis (`{auth_url}/w/rest.php/oauth2/...`).
DEFAULT_AUTH_URL = "https://meta.wikimedia.org"
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
        return _native.file_store_load(self.path)

    def save(self, token: Mapping[str, Any]) -> None:
        _native.file_store_save(self.path, dict(token))


StoreArg = TokenStore | tuple[Callable[[], Any], Callable[[Any], Any]] | None


def _manager_args(
    auth_url: str | None, leeway: float, store: StoreArg, user_agent: str | None
) -> dict[str, Any]:
    """The options of a renewing manager, checked once for both kinds."""
    path, load, save = _store_parts(store)
    return {
        "auth_url": _args.optional_text("auth_url", auth_url),
        "user_agent": _manager_user_agent(user_agent),
        "leeway": _leeway(leeway),
        "store_path": path,
        "store_load": load,
        "store_save": save,
    }


def _store_parts(
    store: StoreArg,
) -> tuple[str | None, Callable[[], Any] | None, Callable[[Any], Any] | None]:
    """The native manager's store: a path (handled without the interpreter) or a pair of
    callables ``(load, save)``."""
    if store is None:
        return None, None, None
    if isinstance(store, FileTokenStore):
        return store.path, None, None
    if isinstance(store, tuple):
        if len(store) == 2 and all(callable(f) for f in store):
            return None, store[0], store[1]
    else:
        load, save = getattr(store, "load", None), getattr(store, "save", None)
        if callable(load) and callable(save):
            return None, load, save
    raise InvalidParameter(
        "store must be a FileTokenStore, an object with load() and save(), or a (load, save) pair",
        parameter="store",
    )


def _manager_user_agent(value: str | None) -> str | None:
    if value is None:
        return os.environ.get("WIKISUGGEST_USER_AGENT") or None
    return _args.text("user_agent", value)


class TokenManager:
    """Keeps a valid access token for every request of the clients it is given to.

    Create one with :meth:`client_credentials`, :meth:`from_refresh_token` or :meth:`personal`
    and pass it as ``Client(auth=manager)``; one manager may serve several clients, sync and
    asyncio alike. Tokens are renewed ``leeway`` seconds before they expire (at most half
    their lifetime early), and once more when the server rejects one as invalid or expired.

    A manager given to a client reaches the token endpoint through that client's connection
    pool and User-Agent (and its ``auth_url``, unless the manager has its own). A manager
    used on its own needs ``user_agent=`` (or ``WIKISUGGEST_USER_AGENT``).
    """

    __slots__ = ("_native",)

    def __init__(self, native: NativeTokenManager) -> None:
        if not isinstance(native, NativeTokenManager):
            raise TypeError(
                "use TokenManager.client_credentials(), .from_refresh_token() or .personal()"
            )
        self._native = native

    @classmethod
    def client_credentials(
        cls,
        client_id: str,
        client_secret: str,
        *,
        auth_url: str | None = None,
        leeway: float = 300,
        store: StoreArg = None,
        user_agent: str | None = None,
    ) -> TokenManager:
        """App authentication (a bot): renewed by requesting a new token with the same
        credentials. ``store`` lets a restarted bot reuse its unexpired token."""
        return cls(
            NativeTokenManager.client_credentials(
                _args.text("client_id", client_id),
                _args.text("client_secret", client_secret),
                _manager_args(auth_url, leeway, store, user_agent),
            )
        )

    @classmethod
    def from_refresh_token(
        cls,
        refresh_token: str | Token | None,
        client_id: str,
        client_secret: str | None = None,
        *,
        auth_url: str | None = None,
        leeway: float = 300,
        store: StoreArg = None,
        user_agent: str | None = None,
    ) -> TokenManager:
        """User authentication kept alive with a refresh token (authorization-code flow).

        Pass the refresh token, or the whole :class:`Token` the authorization-code grant
        returned (its access token is then used until it is due). Refresh tokens rotate on
        every use; with a ``store`` each new one is saved before it is used, and
        ``refresh_token=None`` resumes from the store. When the server no longer accepts the
        refresh token (and the store holds no newer one), :class:`ReauthorizationRequired` is
        raised: the user has to authorize the app again. Public clients pass no secret.
        """
        token_dict = None
        rt: str | None
        if isinstance(refresh_token, Token):
            token_dict = refresh_token.to_dict()
            rt = refresh_token.refresh_token
            if rt is None:
                raise InvalidParameter(
                    "this token has no refresh token (client-credentials tokens have none)",
                    parameter="refresh_token",
                )
        else:
            rt = _args.optional_text("refresh_token", refresh_token)
        return cls(
            NativeTokenManager.refresh(
                rt,
                _args.text("client_id", client_id),
                _args.optional_text("client_secret", client_secret),
                token_dict,
                _manager_args(auth_url, leeway, store, user_agent),
            )
        )

    @classmethod
    def personal(cls, token: str) -> TokenManager:
        """A personal API token: sent as is, never renewed (it does not expire)."""
        return cls(NativeTokenManager.personal(_args.text("token", token)))

    @property
    def kind(self) -> str:
        """``"client_credentials"``, ``"refresh_token"`` or ``"personal"``."""
        return self._native.kind

    @property
    def client_id(self) -> str | None:
        return self._native.client_id

    @property
    def leeway(self) -> float:
        return self._native.leeway

    def token(self) -> Token:
        """The current token, renewed first if it is due (blocking)."""
        return Token.from_dict(self._native.token().send())

    async def token_async(self) -> Token:
        """The current token, renewed first if it is due (asyncio)."""
        return Token.from_dict(await self._native.token().send_async())

    def renew_rejected(self, rejected: str | Token) -> Token | None:
        """The server answered 401 to a request that carried ``rejected`` (an access token):
        a new token, renewed once however many callers report the same one (blocking).

        When the manager already holds a newer token, that one is returned without a
        request. ``None`` for a personal API token, which cannot be renewed.
        """
        renewed = self._native.renew_rejected(_access_token(rejected)).send()
        return None if renewed is None else Token.from_dict(renewed)

    async def renew_rejected_async(self, rejected: str | Token) -> Token | None:
        """:meth:`renew_rejected` for asyncio."""
        renewed = await self._native.renew_rejected(_access_token(rejected)).send_async()
        return None if renewed is None else Token.from_dict(renewed)

    def __repr__(self) -> str:
        client = "" if self.client_id is None else f", client_id={self.client_id!r}"
        return f"TokenManager(kind={self.kind!r}{client})"


def native_credentials(
    auth: TokenManager | str | None,
) -> tuple[str | None, NativeTokenManager | None]:
    """``auth`` as the native layer takes it: a personal API token, or a manager."""
    if isinstance(auth, TokenManager):
        return None, auth._native
    return _args.optional_text("auth", auth), None


def _access_token(value: str | Token) -> str:
    if isinstance(value, Token):
        return value.access_token
    return _args.text("rejected", value)


def _leeway(value: float) -> float:
    value = _args.number("leeway", value)
    if not 0 <= value < float("inf"):
        raise InvalidParameter(
            f"leeway must be a non-negative number of seconds, got {value}", parameter="leeway"
        )
    return value


@dataclass(frozen=True, slots=True)
class AuthorizationRequest:
    """Result of :func:`authorization_url`: open ``url`` in a browser, keep the rest.

    ``state`` is checked when the browser comes back; ``code_verifier`` goes with the code to
    the token endpoint (``Client.authorization_code(..., code_verifier=...)``).
    """

    url: str
    state: str
    code_verifier: str = field(repr=False)
    redirect_uri: str | None = None

    def parse_redirect(self, redirect: str) -> str:
        """The authorization code from the redirect, checked against this request's state."""
        return parse_redirect(redirect, self.state)


def _scope(scope: str | Iterable[str] | None) -> str | None:
    if scope is None:
        return None
    return " ".join(_args.text_list("scope", scope)) or None


def authorization_url(
    client_id: str,
    redirect_uri: str | None = None,
    scope: str | Iterable[str] | None = None,
    state: str | None = None,
    *,
    auth_url: str = DEFAULT_AUTH_URL,
) -> AuthorizationRequest:
    """Build the URL that asks a user to authorize the app, with PKCE (S256) and a ``state``.

    ``scope`` is a space-separated string or a list of grant names (MediaWiki uses every grant
    the app was registered with when it is omitted). ``state`` is generated unless given.
    """
    url, state_out, verifier = _native.authorization_url(
        _args.text("auth_url", auth_url),
        _args.text("client_id", client_id),
        _args.optional_text("redirect_uri", redirect_uri),
        _scope(scope),
        _args.optional_text("state", state),
    )
    return AuthorizationRequest(url, state_out, verifier, redirect_uri)


def parse_redirect(redirect: str, expected_state: str) -> str:
    """The authorization code in ``redirect`` (the URL the browser was sent back to, or its
    query string).

    Raises :class:`StateMismatch` when its ``state`` is not ``expected_state`` (compared in
    constant time), and an :class:`OAuthError` subclass when the server sent an error instead:
    a user who refuses arrives as :class:`UnauthorizedClient` (MediaWiki's code for it) or
    :class:`AccessDenied`.
    """
    return _native.parse_redirect(
        _args.text("redirect", redirect), _args.text("expected_state", expected_state)
    )


_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>wikisuggest</title>"
    b"<p>Authorization finished. You can close this window.</p>"
)


class _RedirectHandler(http.server.BaseHTTPRequestHandler):
    server: _RedirectServer

    def do_GET(self) -> None:
        path, _, _ = self.path.partition("?")
        if path != self.server.callback_path:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(_DONE_PAGE)))
        self.end_headers()
        self.wfile.write(_DONE_PAGE)
        self.server.deliver(self.path)

    def log_message(self, format: str, *args: Any) -> None:
        # The request line holds the authorization code: never log it.
        pass


class _RedirectServer(http.server.HTTPServer):
    def __init__(self, callback_path: str) -> None:
        super().__init__(("127.0.0.1", 0), _RedirectHandler)
        self.callback_path = callback_path
        self.received: str | None = None
        self.arrived = threading.Event()

    def deliver(self, path: str) -> None:
        if self.received is None:
            self.received = path
            self.arrived.set()


class LoopbackServer:
    """Receives the authorization redirect on ``http://127.0.0.1:<ephemeral port>/callback``.

    Register ``http://127.0.0.1/callback`` as the app's redirect URI: MediaWiki ignores the
    port of loopback redirect URIs (for ``127.0.0.1`` and ``[::1]``, not ``localhost``).

    >>> with LoopbackServer() as server:  # doctest: +SKIP
    ...     request = authorization_url(CLIENT_ID, redirect_uri=server.redirect_uri)
    ...     webbrowser.open(request.url)
    ...     code = request.parse_redirect(server.wait(timeout=300))
    """

    __slots__ = ("_server", "_thread")

    def __init__(self, path: str = "/callback") -> None:
        if not path.startswith("/"):
            raise InvalidParameter("path must start with '/'", parameter="path")
        self._server = _RedirectServer(path)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="wikisuggest-loopback",
            daemon=True,
        )
        self._thread.start()

    @property
    def redirect_uri(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self._server.callback_path}"

    def wait(self, timeout: float | None = 300.0) -> str:
        """Block until the browser arrives; return the redirect URL it brought."""
        deadline = None if timeout is None else time.monotonic() + timeout
        # Short waits keep Ctrl-C responsive in a notebook or terminal.
        while not self._server.arrived.wait(0.1):
            if deadline is not None and time.monotonic() >= deadline:
                raise WikisuggestError(f"no authorization redirect arrived within {timeout:g} s")
        return f"http://127.0.0.1:{self._server.server_address[1]}{self._server.received}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def authorize_with_loopback(
    client: Client | AsyncClient,
    client_id: str,
    client_secret: str | None = None,
    *,
    scope: str | Iterable[str] | None = None,
    open_browser: Callable[[str], Any] | None = None,
    timeout: float = 300.0,
) -> Token:
    """Run the whole authorization-code flow from a notebook or script (blocking).

    Starts a :class:`LoopbackServer`, opens the authorization page with ``open_browser``
    (default: :func:`webbrowser.open`), waits for the redirect, checks its state and exchanges
    the code (with the PKCE verifier) through ``client``'s token endpoint. Returns the
    :class:`Token`; pass it to :meth:`TokenManager.from_refresh_token` to keep it alive.
    """
    if open_browser is None:
        import webbrowser

        open_browser = webbrowser.open
    with LoopbackServer() as server:
        request = authorization_url(
            client_id,
            redirect_uri=server.redirect_uri,
            scope=scope,
            auth_url=client.auth_url,
        )
        open_browser(request.url)
        code = request.parse_redirect(server.wait(timeout))
    return Token.from_dict(
        client._open()
        .authorization_code(
            code,
            _args.text("client_id", client_id),
            _args.optional_text("client_secret", client_secret),
            request.code_verifier,
            request.redirect_uri,
        )
        .send()
    )
