"""What ``Client`` and ``AsyncClient`` share: construction, argument checks and lifecycle.

Each operation's arguments become one options dict here, checked once; the native client
prepares the request from it, and only the final send differs between the two clients.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypedDict

from .. import _args
from .._args import LinkArgs, TranslationArgs, TranslationFilters
from .._native import LINK_DEFAULTS, TRANSLATION_DEFAULTS, NativeBatch, NativeClient
from ..auth.code_grant import AuthorizationRequest, authorization_url
from ..auth.manager import DEFAULT_AUTH_URL, TokenManager, native_credentials
from ..batch import Plan
from ..errors import ClientClosed, InvalidParameter
from . import _env
from ._items import link_item, translation_item

DEFAULT_BASE_URL = "https://api.wikimedia.org"

SearchAlgorithm = Literal["morelike", "mostpopular"]
RankMethod = Literal["default", "sitelinks"]
#: A translation answer as the service sent it: the contract's array, or (since November
#: 2025) the envelope with the items and the continuation.
RawTranslation = list[dict[str, Any]] | dict[str, Any]

#: A page of a link batch: a title (with ``domain=``), a ``(domain, title)`` pair, or a dict
#: of per-page arguments (``page_title``, ``domain``, ``revision``, ``wikitext``, ...).
LinkPage = str | tuple[str, str] | Mapping[str, Any]
#: A request of a translation batch: a seed title (with ``source=`` and ``target=``), a
#: ``(source, target)`` pair, or a dict of arguments.
TranslationRequest = str | tuple[str, str] | Mapping[str, Any]


def _body_limit(value: int | None) -> int | None:
    limit = _args.optional_integer("max_body_size", value)
    if limit is not None and limit < 1:
        raise InvalidParameter(
            f"max_body_size must be a positive number of bytes, got {limit}",
            parameter="max_body_size",
        )
    return limit


class LinkOptions(TypedDict, total=False):
    """Keyword arguments every link operation takes; their defaults are
    :data:`wikisuggest.LINK_DEFAULTS` (``language_code=None`` is the wiki's language)."""

    language_code: str | None
    threshold: float
    sections_to_exclude: str | Iterable[str] | None
    max_recommendations: int


class TranslationOptions(TranslationFilters, total=False):
    """Keyword arguments of the translation operations; their defaults are
    :data:`wikisuggest.TRANSLATION_DEFAULTS`."""

    count: int
    seed: str | Iterable[str] | None
    topic: str | Iterable[str] | None
    include_pageviews: bool
    search_algorithm: SearchAlgorithm
    rank_method: RankMethod
    country: str | Iterable[str] | None


class ClientBase:
    """Construction, properties and lifecycle shared by both clients."""

    __slots__ = ("_closed", "_native")

    def __init__(
        self,
        user_agent: str | None = None,
        *,
        base_url: str | None = None,
        auth: TokenManager | str | None = None,
        auth_url: str | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 10.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_retry_after: float = 120.0,
        max_concurrency: int | None = None,
        rate_limit: float | str | None = None,
        max_body_size: int | None = None,
        allow_insecure_http: bool = False,
    ) -> None:
        """Create a client.

        ``user_agent`` names your application and how to reach its operator, as Wikimedia's
        User-Agent policy requires, e.g. ``"LinkBot/1.0 (https://example.org; me@example.org)"``;
        when omitted it is read from ``WIKISUGGEST_USER_AGENT``. ``base_url`` is where the
        services live (Wikimedia's API by default; a self-hosted ``wikisuggest serve``
        otherwise), ``auth_url`` the OAuth 2.0 server used by the grant methods and by a token
        manager that has no ``auth_url`` of its own. ``auth`` is a :class:`TokenManager`
        (OAuth 2.0; tokens are renewed as needed and a request whose token the server rejects
        is replayed once with a new one) or a personal API token string (sent as
        ``Authorization: Bearer``). ``timeout`` bounds one attempt; failed GETs
        (connection errors, 429, 502, 503, 504) are retried ``max_retries`` times with
        exponential back-off starting at ``backoff`` seconds, honouring ``Retry-After`` up to
        ``max_retry_after`` seconds. At most ``max_concurrency`` requests are in flight at once
        (default 3 for Wikimedia's servers, as they ask, and 32 elsewhere) and, if
        ``rate_limit`` is set, at most that many start per second — across all threads, tasks
        and batches using this client. ``rate_limit`` may also be a budget such as
        ``"5000/h"`` or ``"200/min"``: at most that many starts within any hour or minute.
        A response body larger than ``max_body_size`` bytes (default 64 MiB, counted after
        decompression) raises :class:`ResponseTooLarge`. Credentials are never sent over plain
        ``http://`` to a host other than this machine unless ``allow_insecure_http=True``.

        Arguments left out are read from the environment where it names them
        (``WIKISUGGEST_USER_AGENT``, ``WIKISUGGEST_BASE_URL``, ``WIKISUGGEST_AUTH_URL``, and
        credentials: ``WIKISUGGEST_TOKEN``, or ``WIKISUGGEST_CLIENT_ID`` with
        ``WIKISUGGEST_CLIENT_SECRET``); explicit arguments win.

        A client is also a context manager (``with`` / ``async with``) that closes it.
        """
        self._closed = False
        retries = _args.retries(max_retries)
        base_url = _env.setting("WIKISUGGEST_BASE_URL", base_url, DEFAULT_BASE_URL)
        auth_url = _env.setting("WIKISUGGEST_AUTH_URL", auth_url, DEFAULT_AUTH_URL)
        token, manager = native_credentials(_env.auth(auth, auth_url))
        self._native = NativeClient(
            base_url=_args.text("base_url", base_url),
            auth_url=_args.text("auth_url", auth_url),
            user_agent=_args.user_agent(user_agent) or "",
            timeout=_args.seconds("timeout", timeout),
            connect_timeout=_args.seconds("connect_timeout", connect_timeout),
            max_retries=retries,
            backoff_base=_args.seconds("backoff", backoff),
            backoff_max=_args.seconds("max_backoff", max_backoff),
            max_retry_after=_args.seconds("max_retry_after", max_retry_after),
            max_concurrency=None
            if max_concurrency is None
            else _args.integer("max_concurrency", max_concurrency),
            rate_limit=rate_limit
            if rate_limit is None or isinstance(rate_limit, str)
            else _args.number("rate_limit", rate_limit),
            token=token,
            manager=manager,
            max_body_size=_body_limit(max_body_size),
            allow_insecure_http=bool(allow_insecure_http),
        )

    @property
    def base_url(self) -> str:
        return self._native.base_url

    @property
    def auth_url(self) -> str:
        return self._native.auth_url

    @property
    def max_concurrency(self) -> int:
        """Most requests this client has in flight at once."""
        return self._native.max_concurrency

    @property
    def user_agent(self) -> str:
        """The User-Agent sent with every request (yours, then ``wikisuggest/<version>``)."""
        return self._native.user_agent

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Refuse every later request (with :class:`ClientClosed`); calling it again does
        nothing. Requests already running finish."""
        self._closed = True

    def __repr__(self) -> str:
        state = ", closed" if self._closed else ""
        return (
            f"{type(self).__name__}(base_url={self.base_url!r}, "
            f"user_agent={self.user_agent!r}{state})"
        )

    def authorization_url(
        self,
        client_id: str,
        redirect_uri: str | None = None,
        scope: str | Iterable[str] | None = None,
        state: str | None = None,
    ) -> AuthorizationRequest:
        """:func:`wikisuggest.authorization_url` for this client's ``auth_url``."""
        return authorization_url(client_id, redirect_uri, scope, state, auth_url=self.auth_url)

    @property
    def native(self) -> NativeClient:
        """The native client (what the browser flow exchanges its code through);
        :class:`~wikisuggest.ClientClosed` once this client is closed."""
        if self._closed:
            raise ClientClosed(f"this {type(self).__name__} was closed")
        return self._native

    @staticmethod
    def _link_defaults(options: Mapping[str, Any]) -> dict[str, Any]:
        """The link keyword arguments given, over their defaults."""
        return _args.with_defaults(LINK_DEFAULTS, options)

    @staticmethod
    def _translation_defaults(options: Mapping[str, Any]) -> dict[str, Any]:
        """The translation keyword arguments given, over their defaults."""
        return _args.with_defaults(TRANSLATION_DEFAULTS, options)

    @staticmethod
    def _link_args(
        project: str, domain: str, page_title: str, options: Mapping[str, Any]
    ) -> LinkArgs:
        """The options dict of one link request from keyword arguments."""
        return _args.link_options(
            project, domain, page_title, **_args.with_defaults(LINK_DEFAULTS, options)
        )

    @staticmethod
    def _translation_args(source: str, target: str, options: Mapping[str, Any]) -> TranslationArgs:
        """The options dict of one translation request from keyword arguments."""
        return _args.translation_options(
            source, target, **_args.with_defaults(TRANSLATION_DEFAULTS, options)
        )

    def _link_plan(
        self, pages: Iterable[LinkPage], defaults: dict[str, Any], raw: bool
    ) -> Plan[Any]:
        native = self.native
        return Plan(
            pages,
            link_item(defaults),
            "pages",
            lambda plan: NativeBatch.links(native, plan.items, raw, plan),
        )

    def _translation_plan(
        self, requests: Iterable[TranslationRequest], defaults: dict[str, Any], raw: bool
    ) -> Plan[Any]:
        native = self.native
        return Plan(
            requests,
            translation_item(defaults),
            "requests",
            lambda plan: NativeBatch.translations(native, plan.items, raw, plan),
        )
