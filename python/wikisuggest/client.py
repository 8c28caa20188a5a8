"""``Client`` and ``AsyncClient``: the three service operations, blocking and asyncio.

Both classes take the same arguments and have the same methods; ``AsyncClient``'s methods are
coroutines. Work happens in Rust on one shared I/O runtime; blocking calls release the GIL and
can be interrupted with Ctrl-C, asyncio calls can be cancelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from . import _args, _env
from ._native import NativeBatch, NativeClient
from .batch import AsyncBatch, _Plan, link_item, run_sync, run_sync_iter
from .batch import translation_item as _translation_item
from .errors import InvalidParameter
from .oauth import (
    DEFAULT_AUTH_URL,
    AuthorizationRequest,
    Token,
    TokenManager,
    authorization_url,
)

__all__ = ["AsyncClient", "Client", "DEFAULT_AUTH_URL", "DEFAULT_BASE_URL"]

DEFAULT_BASE_URL = "https://api.wikimedia.org"

SearchAlgorithm = Literal["morelike", "mostpopular"]
RankMethod = Literal["default", "sitelinks"]


def _code_args(
    code: str,
    client_id: str,
    client_secret: str | None,
    code_verifier: str | None,
    redirect_uri: str | None,
) -> tuple[str, str, str | None, str | None, str | None]:
    return (
        _args.text("code", code),
        _args.text("client_id", client_id),
        _args.optional_text("client_secret", client_secret),
        _args.optional_text("code_verifier", code_verifier),
        _args.optional_text("redirect_uri", redirect_uri),
    )


def _refresh_args(
    refresh_token: str, client_id: str, client_secret: str | None
) -> tuple[str, str, str | None]:
    return (
        _args.text("refresh_token", refresh_token),
        _args.text("client_id", client_id),
        _args.optional_text("client_secret", client_secret),
    )


def _body_limit(value: int | None) -> int | None:
    limit = _args.optional_integer("max_body_size", value)
    if limit is not None and limit < 1:
        raise InvalidParameter(
            f"max_body_size must be a positive number of bytes, got {limit}",
            parameter="max_body_size",
        )
    return limit


class _ClientBase:
    """Construction and argument handling shared by both clients."""

    __slots__ = ("_native",)

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
        when omitted it is read from ``WIKISUGGEST_USER_AGENT``. ``auth`` is a
        :class:`TokenManager` (OAuth 2.0; tokens are renewed as needed and a request whose token
        the server rejects is replayed once with a new one) or a personal API token string
        (sent as ``Authorization: Bearer``). ``auth_url`` is the OAuth 2.0 server used by the
        grant methods and by a token manager that has no ``auth_url`` of its own.
        ``timeout`` bounds one attempt; failed GETs
        (connection errors, 429, 502, 503, 504) are retried ``max_retries`` times with
        exponential back-off starting at ``backoff`` seconds, honouring ``Retry-After`` up to
        ``max_retry_after`` seconds. At most ``max_concurrency`` requests are in flight at once
        (default 3 for Wikimedia's servers, as they ask, and 32 elsewhere) and, if
        ``rate_limit`` is set, at most that many start per second (or, given a budget such as
        ``"5000/h"``, that many per hour, ``/min`` or ``/s``) — across all threads, tasks
        and batches using this client. A response body larger than ``max_body_size`` bytes
        (default 64 MiB, counted after decompression) raises :class:`ResponseTooLarge`.
        Credentials are never sent over plain ``http://`` to a host other than this machine
        unless ``allow_insecure_http=True``.

        Arguments left out are read from the environment where it names them
        (``WIKISUGGEST_USER_AGENT``, ``WIKISUGGEST_BASE_URL``, ``WIKISUGGEST_AUTH_URL``, and
        credentials: ``WIKISUGGEST_TOKEN``, or ``WIKISUGGEST_CLIENT_ID`` with
        ``WIKISUGGEST_CLIENT_SECRET``); explicit arguments win.
        """
        retries = _args.integer("max_retries", max_retries)
        if not 0 <= retries <= 100:
            raise InvalidParameter(
                f"max_retries must be between 0 and 100, got {retries}", parameter="max_retries"
            )
        base_url = _env.setting("WIKISUGGEST_BASE_URL", base_url, DEFAULT_BASE_URL)
        auth_url = _env.setting("WIKISUGGEST_AUTH_URL", auth_url, DEFAULT_AUTH_URL)
        auth = _env.auth(auth, auth_url)
        token = manager = None
        if isinstance(auth, TokenManager):
            manager = auth._native
        elif auth is not None:
            token = _args.text("auth", auth)
        self._native = NativeClient(
            base_url=_args.text("base_url", base_url),
            auth_url=_args.text("auth_url", auth_url),
            user_agent=_args.user_agent(user_agent),
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

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, user_agent={self.user_agent!r})"

    def authorization_url(
        self,
        client_id: str,
        redirect_uri: str | None = None,
        scope: str | Iterable[str] | None = None,
        state: str | None = None,
    ) -> AuthorizationRequest:
        """:func:`wikisuggest.authorization_url` for this client's ``auth_url``."""
        return authorization_url(client_id, redirect_uri, scope, state, auth_url=self.auth_url)

    @staticmethod
    def _link_args(
        project: str,
        domain: str,
        page_title: str,
        language_code: str | None,
        threshold: float,
        sections_to_exclude: str | Iterable[str] | None,
        max_recommendations: int,
    ) -> tuple[str, str, str, str | None, float, list[str], int]:
        return (
            _args.text("project", project),
            _args.text("domain", domain),
            _args.text("page_title", page_title),
            _args.optional_text("language_code", language_code),
            _args.number("threshold", threshold),
            _args.text_list("sections_to_exclude", sections_to_exclude),
            _args.integer("max_recommendations", max_recommendations),
        )

    @staticmethod
    def _translation_args(
        source: str,
        target: str,
        count: int,
        seed: str | Iterable[str] | None,
        topic: str | Iterable[str] | None,
        include_pageviews: bool,
        search_algorithm: str,
        rank_method: str,
    ) -> tuple[str, str, int, list[str], list[str], bool, str, str]:
        return (
            _args.text("source", source),
            _args.text("target", target),
            _args.integer("count", count),
            _args.text_list("seed", seed),
            _args.text_list("topic", topic),
            _args.flag("include_pageviews", include_pageviews),
            _args.text("search_algorithm", search_algorithm),
            _args.text("rank_method", rank_method),
        )

    def _link_plan(
        self, pages: Iterable[Any], defaults: dict[str, Any], raw: bool
    ) -> tuple[_Plan[Any], Any]:
        plan: _Plan[Any] = _Plan(pages, link_item(defaults))
        start = NativeBatch.revisions if "wikitext" in defaults else NativeBatch.links
        return plan, lambda items: start(self._native, items, raw)

    def _translation_plan(
        self, requests: Iterable[Any], defaults: dict[str, Any], raw: bool
    ) -> tuple[_Plan[Any], Any]:
        plan: _Plan[Any] = _Plan(requests, _translation_item(defaults))
        return plan, lambda items: NativeBatch.translations(self._native, items, raw)


class Client(_ClientBase):
    """Blocking client. Safe to share between threads."""

    __slots__ = ()

    def link_recommendations(
        self,
        project: str,
        domain: str,
        page_title: str,
        *,
        language_code: str | None = None,
        revision: int | None = None,
        threshold: float = 0.5,
        sections_to_exclude: str | Iterable[str] | None = None,
        max_recommendations: int = 15,
        raw: bool = False,
    ) -> Any:
        """Link recommendations for the latest (or ``revision``) revision of a page (GET)."""
        args = self._link_args(
            project,
            domain,
            page_title,
            language_code,
            threshold,
            sections_to_exclude,
            max_recommendations,
        )
        p, d, t, lang, thr, sections, maximum = args
        data = self._native.link_recommendations(
            p,
            d,
            t,
            lang,
            _args.optional_integer("revision", revision),
            thr,
            sections,
            maximum,
            raw,
        )
        return data

    def link_recommendations_for_revision(
        self,
        project: str,
        domain: str,
        page_title: str,
        *,
        wikitext: str,
        revid: int,
        pageid: int,
        language_code: str | None = None,
        threshold: float = 0.5,
        sections_to_exclude: str | Iterable[str] | None = None,
        max_recommendations: int = 15,
        raw: bool = False,
    ) -> Any:
        """Link recommendations for wikitext you supply (POST; needs ``auth``)."""
        p, d, t, lang, thr, sections, maximum = self._link_args(
            project,
            domain,
            page_title,
            language_code,
            threshold,
            sections_to_exclude,
            max_recommendations,
        )
        data = self._native.link_recommendations_for_revision(
            p,
            d,
            t,
            _args.text("wikitext", wikitext),
            _args.integer("revid", revid),
            _args.integer("pageid", pageid),
            lang,
            thr,
            sections,
            maximum,
            raw,
        )
        return data

    def translation_recommendations(
        self,
        source: str,
        target: str,
        *,
        count: int = 12,
        seed: str | Iterable[str] | None = None,
        topic: str | Iterable[str] | None = None,
        include_pageviews: bool = False,
        search_algorithm: SearchAlgorithm = "morelike",
        rank_method: RankMethod = "default",
        raw: bool = False,
    ) -> Any:
        """Articles in ``source`` missing from ``target``, optionally near ``seed`` or ``topic``."""
        data = self._native.translation_recommendations(
            *self._translation_args(
                source,
                target,
                count,
                seed,
                topic,
                include_pageviews,
                search_algorithm,
                rank_method,
            ),
            raw,
        )
        return data

    def client_credentials(self, client_id: str, client_secret: str) -> Token:
        """Request an app token with the client-credentials grant (it has no refresh token)."""
        return Token.from_dict(
            self._native.client_credentials(
                _args.text("client_id", client_id), _args.text("client_secret", client_secret)
            )
        )

    def authorization_code(
        self,
        code: str,
        client_id: str,
        client_secret: str | None = None,
        code_verifier: str | None = None,
        redirect_uri: str | None = None,
    ) -> Token:
        """Exchange an authorization code (with its PKCE ``code_verifier``) for a token pair.

        ``redirect_uri`` must be given if, and exactly as, it was sent to the authorize page.
        """
        return Token.from_dict(
            self._native.authorization_code(
                *_code_args(code, client_id, client_secret, code_verifier, redirect_uri)
            )
        )

    def refresh_token(
        self, refresh_token: str, client_id: str, client_secret: str | None = None
    ) -> Token:
        """Exchange a refresh token for a new token pair. The server rotates the refresh token:
        keep the returned one (a :class:`TokenManager` does this for you)."""
        return Token.from_dict(
            self._native.refresh_token(*_refresh_args(refresh_token, client_id, client_secret))
        )

    def link_recommendations_many(
        self,
        pages: Iterable[Any],
        *,
        project: str = "wikipedia",
        domain: str | None = None,
        language_code: str | None = None,
        revision: int | None = None,
        threshold: float = 0.5,
        sections_to_exclude: str | Iterable[str] | None = None,
        max_recommendations: int = 15,
        raw: bool = False,
        as_completed: bool = False,
        progress: bool = False,
    ) -> Any:
        """Link recommendations for many pages (GET each).

        ``pages`` holds titles (with ``domain=``), ``(domain, title)`` pairs, or dicts of
        per-page arguments (``page_title``/``title``, ``domain``, ``revision``, ...). Returns a
        :class:`BatchResults` in input order — each item a result or that page's error — or,
        with ``as_completed=True``, an iterator of :class:`BatchItem` as they finish.
        ``progress=True`` shows a tqdm bar. Ctrl-C raises :class:`BatchInterrupted`, which
        keeps every finished result.
        """
        defaults = {
            "project": project,
            "domain": domain,
            "language_code": language_code,
            "revision": revision,
            "threshold": threshold,
            "sections_to_exclude": sections_to_exclude,
            "max_recommendations": max_recommendations,
        }
        plan, start = self._link_plan(pages, defaults, raw)
        if as_completed:
            return run_sync_iter(plan, start, progress, "link recommendations")
        return run_sync(plan, start, progress, "link recommendations")

    def link_recommendations_for_revision_many(
        self,
        pages: Iterable[Any],
        *,
        project: str = "wikipedia",
        domain: str | None = None,
        language_code: str | None = None,
        threshold: float = 0.5,
        sections_to_exclude: str | Iterable[str] | None = None,
        max_recommendations: int = 15,
        raw: bool = False,
        as_completed: bool = False,
        progress: bool = False,
    ) -> Any:
        """Link recommendations for many supplied revisions (POST each). Each page is a dict
        with ``page_title``, ``wikitext``, ``revid`` and ``pageid`` (and optionally any other
        argument of :meth:`link_recommendations_for_revision`)."""
        defaults = {
            "project": project,
            "domain": domain,
            "language_code": language_code,
            "threshold": threshold,
            "sections_to_exclude": sections_to_exclude,
            "max_recommendations": max_recommendations,
            "wikitext": None,
            "revid": None,
            "pageid": None,
        }
        plan, start = self._link_plan(pages, defaults, raw)
        if as_completed:
            return run_sync_iter(plan, start, progress, "link recommendations")
        return run_sync(plan, start, progress, "link recommendations")

    def translation_recommendations_many(
        self,
        requests: Iterable[Any],
        *,
        source: str | None = None,
        target: str | None = None,
        count: int = 12,
        seed: str | Iterable[str] | None = None,
        topic: str | Iterable[str] | None = None,
        include_pageviews: bool = False,
        search_algorithm: SearchAlgorithm = "morelike",
        rank_method: RankMethod = "default",
        raw: bool = False,
        as_completed: bool = False,
        progress: bool = False,
    ) -> Any:
        """Translation recommendations for many requests: seed titles (with ``source=`` and
        ``target=``), ``(source, target)`` pairs, or dicts of arguments."""
        defaults = {
            "source": source,
            "target": target,
            "count": count,
            "seed": seed,
            "topic": topic,
            "include_pageviews": include_pageviews,
            "search_algorithm": search_algorithm,
            "rank_method": rank_method,
        }
        plan, start = self._translation_plan(requests, defaults, raw)
        if as_completed:
            return run_sync_iter(plan, start, progress, "translation recommendations")
        return run_sync(plan, start, progress, "translation recommendations")


class AsyncClient(_ClientBase):
    """asyncio client: the same methods as :class:`Client`, as coroutines."""

    __slots__ = ()

    async def link_recommendations(
        self,
        project: str,
        domain: str,
        page_title: str,
        *,
        language_code: str | None = None,
        revision: int | None = None,
        threshold: float = 0.5,
        sections_to_exclude: str | Iterable[str] | None = None,
        max_recommendations: int = 15,
        raw: bool = False,
    ) -> Any:
        """Link recommendations for the latest (or ``revision``) revision of a page (GET)."""
        p, d, t, lang, thr, sections, maximum = self._link_args(
            project,
            domain,
            page_title,
            language_code,
            threshold,
            sections_to_exclude,
            max_recommendations,
        )
        data = await self._native.link_recommendations_async(
            p,
            d,
            t,
            lang,
            _args.optional_integer("revision", revision),
            thr,
            sections,
            maximum,
            raw,
        )
        return data

    async def link_recommendations_for_revision(
        self,
        project: str,
        domain: str,
        page_title: str,
        *,
        wikitext: str,
        revid: int,
        pageid: int,
        language_code: str | None = None,
        threshold: float = 0.5,
        sections_to_exclude: str | Iterable[str] | None = None,
        max_recommendations: int = 15,
        raw: bool = False,
    ) -> Any:
        """Link recommendations for wikitext you supply (POST; needs ``auth``)."""
        p, d, t, lang, thr, sections, maximum = self._link_args(
            project,
            domain,
            page_title,
            language_code,
            threshold,
            sections_to_exclude,
            max_recommendations,
        )
        data = await self._native.link_recommendations_for_revision_async(
            p,
            d,
            t,
            _args.text("wikitext", wikitext),
            _args.integer("revid", revid),
            _args.integer("pageid", pageid),
            lang,
            thr,
            sections,
            maximum,
            raw,
        )
        return data

    async def translation_recommendations(
        self,
        source: str,
        target: str,
        *,
        count: int = 12,
        seed: str | Iterable[str] | None = None,
        topic: str | Iterable[str] | None = None,
        include_pageviews: bool = False,
        search_algorithm: SearchAlgorithm = "morelike",
        rank_method: RankMethod = "default",
        raw: bool = False,
    ) -> Any:
        """Articles in ``source`` missing from ``target``, optionally near ``seed`` or ``topic``."""
        data = await self._native.translation_recommendations_async(
            *self._translation_args(
                source,
                target,
                count,
                seed,
                topic,
                include_pageviews,
                search_algorithm,
                rank_method,
            ),
            raw,
        )
        return data

    async def client_credentials(self, client_id: str, client_secret: str) -> Token:
        """Request an app token with the client-credentials grant (it has no refresh token)."""
        return Token.from_dict(
            await self._native.client_credentials_async(
                _args.text("client_id", client_id), _args.text("client_secret", client_secret)
            )
        )

    async def authorization_code(
        self,
        code: str,
        client_id: str,
        client_secret: str | None = None,
        code_verifier: str | None = None,
        redirect_uri: str | None = None,
    ) -> Token:
        """Exchange an authorization code (with its PKCE ``code_verifier``) for a token pair.

        ``redirect_uri`` must be given if, and exactly as, it was sent to the authorize page.
        """
        return Token.from_dict(
            await self._native.authorization_code_async(
                *_code_args(code, client_id, client_secret, code_verifier, redirect_uri)
            )
        )

    async def refresh_token(
        self, refresh_token: str, client_id: str, client_secret: str | None = None
    ) -> Token:
        """Exchange a refresh token for a new token pair. The server rotates the refresh token:
        keep the returned one (a :class:`TokenManager` does this for you)."""
        return Token.from_dict(
            await self._native.refresh_token_async(
                *_refresh_args(refresh_token, client_id, client_secret)
            )
        )

    def link_recommendations_many(
        self,
        pages: Iterable[Any],
        *,
        project: str = "wikipedia",
        domain: str | None = None,
        language_code: str | None = None,
        revision: int | None = None,
        threshold: float = 0.5,
        sections_to_exclude: str | Iterable[str] | None = None,
        max_recommendations: int = 15,
        raw: bool = False,
        progress: bool = False,
    ) -> Any:
        """Link recommendations for many pages (GET each).

        ``pages`` holds titles (with ``domain=``), ``(domain, title)`` pairs, or dicts of
        per-page arguments (``page_title``/``title``, ``domain``, ``revision``, ...). Returns an
        :class:`AsyncBatch`: ``await`` it for a :class:`BatchResults` in input order (each item
        a result or that page's error), or ``async for`` over it for items as they finish.
        ``progress=True`` shows a tqdm bar; cancelling stops unfinished items.
        """
        defaults = {
            "project": project,
            "domain": domain,
            "language_code": language_code,
            "revision": revision,
            "threshold": threshold,
            "sections_to_exclude": sections_to_exclude,
            "max_recommendations": max_recommendations,
        }
        plan, start = self._link_plan(pages, defaults, raw)
        return AsyncBatch(plan, start, progress, "link recommendations")

    def link_recommendations_for_revision_many(
        self,
        pages: Iterable[Any],
        *,
        project: str = "wikipedia",
        domain: str | None = None,
        language_code: str | None = None,
        threshold: float = 0.5,
        sections_to_exclude: str | Iterable[str] | None = None,
        max_recommendations: int = 15,
        raw: bool = False,
        progress: bool = False,
    ) -> Any:
        """Link recommendations for many supplied revisions (POST each). Each page is a dict
        with ``page_title``, ``wikitext``, ``revid`` and ``pageid`` (and optionally any other
        argument of :meth:`link_recommendations_for_revision`)."""
        defaults = {
            "project": project,
            "domain": domain,
            "language_code": language_code,
            "threshold": threshold,
            "sections_to_exclude": sections_to_exclude,
            "max_recommendations": max_recommendations,
            "wikitext": None,
            "revid": None,
            "pageid": None,
        }
        plan, start = self._link_plan(pages, defaults, raw)
        return AsyncBatch(plan, start, progress, "link recommendations")

    def translation_recommendations_many(
        self,
        requests: Iterable[Any],
        *,
        source: str | None = None,
        target: str | None = None,
        count: int = 12,
        seed: str | Iterable[str] | None = None,
        topic: str | Iterable[str] | None = None,
        include_pageviews: bool = False,
        search_algorithm: SearchAlgorithm = "morelike",
        rank_method: RankMethod = "default",
        raw: bool = False,
        progress: bool = False,
    ) -> Any:
        """Translation recommendations for many requests: seed titles (with ``source=`` and
        ``target=``), ``(source, target)`` pairs, or dicts of arguments."""
        defaults = {
            "source": source,
            "target": target,
            "count": count,
            "seed": seed,
            "topic": topic,
            "include_pageviews": include_pageviews,
            "search_algorithm": search_algorithm,
            "rank_method": rank_method,
        }
        plan, start = self._translation_plan(requests, defaults, raw)
        return AsyncBatch(plan, start, progress, "translation recommendations")
