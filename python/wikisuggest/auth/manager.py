""":class:`TokenManager`: keeps a valid access token for every request of the clients it is
given to, renewing it single-flight (one request however many threads and tasks wait)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _args
from .._args import ManagerArgs
from .._native import NativeTokenManager
from ..errors import InvalidParameter
from .tokens import FileTokenStore, Token, TokenStore

__all__ = ["DEFAULT_AUTH_URL", "TokenManager", "native_credentials"]

# The OAuth 2.0 server of Wikimedia wikis (`{auth_url}/w/rest.php/oauth2/...`).
DEFAULT_AUTH_URL = "https://meta.wikimedia.org"


StoreArg = TokenStore | tuple[Callable[[], Any], Callable[[Any], Any]] | None


def _manager_args(
    auth_url: str | None, leeway: float, store: StoreArg, user_agent: str | None
) -> ManagerArgs:
    """The options of a renewing manager, checked once for both kinds."""
    path, load, save = _store_parts(store)
    return {
        "auth_url": _args.optional_text("auth_url", auth_url),
        "user_agent": _args.user_agent(user_agent),
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
    def native(self) -> NativeTokenManager:
        """The native manager a client, a wiki or an HTTP adapter shares (renewals are
        coordinated across all of them)."""
        return self._native

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
        return None, auth.native
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
