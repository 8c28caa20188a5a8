"""``AsyncClient``: the service operations as coroutines.

This is the one hand-written definition of every client operation: ``_sync.py`` (the
blocking ``Client``) is generated from it by ``scripts/unasync.py``, and the test suite fails
when the two differ. Edit this file, then run ``python scripts/unasync.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast, overload

from .. import _args
from .._args import MembershipArgs
from ..auth.tokens import Token
from ..batch import AsyncBatch
from ..errors import InvalidParameter
from ..records import (
    CollectionMembership,
    LinkRecommendationSet,
    PageCollection,
    PageCollectionGroups,
    TranslationPage,
    TranslationRecommendation,
)
from ._base import (
    ClientBase,
    LinkOptions,
    LinkPage,
    RawTranslation,
    TranslationOptions,
    TranslationRequest,
)

if TYPE_CHECKING:
    from typing_extensions import Self, Unpack

__all__ = ["AsyncClient"]


class AsyncClient(ClientBase):
    """The asyncio client: each operation is a coroutine. Safe to share between tasks.

    Requests run on one shared I/O runtime, without the GIL.
    Cancelling a call aborts its request.
    """

    __slots__ = ()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    @overload
    async def link_recommendations(
        self,
        project: str,
        domain: str,
        page_title: str,
        *,
        revision: int | None = ...,
        raw: Literal[False] = ...,
        **options: Unpack[LinkOptions],
    ) -> LinkRecommendationSet: ...
    @overload
    async def link_recommendations(
        self,
        project: str,
        domain: str,
        page_title: str,
        *,
        revision: int | None = ...,
        raw: Literal[True],
        **options: Unpack[LinkOptions],
    ) -> dict[str, Any]: ...
    async def link_recommendations(
        self,
        project: str,
        domain: str,
        page_title: str,
        *,
        revision: int | None = None,
        raw: bool = False,
        **options: Unpack[LinkOptions],
    ) -> LinkRecommendationSet | dict[str, Any]:
        """Link recommendations for the latest (or ``revision``) revision of a page (GET).

        ``threshold`` (0 to 1) is the lowest score kept, ``max_recommendations`` the most links
        returned; ``raw=True`` returns the response's JSON instead of the dataclasses.
        """
        args = self._link_args(project, domain, page_title, options)
        args["revision"] = _args.optional_integer("revision", revision)
        call = self.native.link_recommendations(args, _args.flag("raw", raw))
        return await call.send_async()

    @overload
    async def link_recommendations_for_revision(
        self,
        project: str,
        domain: str,
        page_title: str,
        *,
        wikitext: str,
        revid: int,
        pageid: int,
        raw: Literal[False] = ...,
        **options: Unpack[LinkOptions],
    ) -> LinkRecommendationSet: ...
    @overload
    async def link_recommendations_for_revision(
        self,
        project: str,
        domain: str,
        page_title: str,
        *,
        wikitext: str,
        revid: int,
        pageid: int,
        raw: Literal[True],
        **options: Unpack[LinkOptions],
    ) -> dict[str, Any]: ...
    async def link_recommendations_for_revision(
        self,
        project: str,
        domain: str,
        page_title: str,
        *,
        wikitext: str,
        revid: int,
        pageid: int,
        raw: bool = False,
        **options: Unpack[LinkOptions],
    ) -> LinkRecommendationSet | dict[str, Any]:
        """Link recommendations for wikitext you supply (POST; needs ``auth``)."""
        args = self._link_args(project, domain, page_title, options)
        args["wikitext"] = _args.text("wikitext", wikitext)
        args["revid"] = _args.integer("revid", revid)
        args["pageid"] = _args.integer("pageid", pageid)
        call = self.native.link_recommendations(args, _args.flag("raw", raw))
        return await call.send_async()

    @overload
    async def translation_recommendations(
        self,
        source: str,
        target: str,
        *,
        raw: Literal[False] = ...,
        **options: Unpack[TranslationOptions],
    ) -> list[TranslationRecommendation]: ...
    @overload
    async def translation_recommendations(
        self,
        source: str,
        target: str,
        *,
        raw: Literal[True],
        **options: Unpack[TranslationOptions],
    ) -> RawTranslation: ...
    async def translation_recommendations(
        self,
        source: str,
        target: str,
        *,
        raw: bool = False,
        **options: Unpack[TranslationOptions],
    ) -> list[TranslationRecommendation] | RawTranslation:
        """Articles in ``source`` missing from ``target``, optionally near ``seed`` or ``topic``.

        ``country`` (ISO 3166 alpha-3 codes) narrows to articles about those countries;
        ``collections=True`` recommends from page collections (``seed`` then names one
        collection or a group), ``featured_collection`` interleaves one collection's articles;
        ``min_size``/``max_size`` bound the article's size in bytes (its lead section's with
        ``lead_section=True``); ``continue_offset``/``continue_seed`` ask for a later page of
        one collection. Only the items are returned: :meth:`translation_page` keeps the
        continuation, :meth:`iter_translation_recommendations` follows it.
        """
        args = self._translation_args(source, target, options)
        call = self.native.translation_recommendations(args, _args.flag("raw", raw))
        return await call.send_async()

    async def translation_page(
        self, source: str, target: str, **options: Unpack[TranslationOptions]
    ) -> TranslationPage:
        """One page of translation recommendations with its continuation (the arguments of
        :meth:`translation_recommendations`): pass ``page.continue_offset`` and
        ``page.continue_seed`` back for the next page; ``continue_offset == -1`` (or ``None``)
        means there is none."""
        args = self._translation_args(source, target, options)
        call = self.native.translation_recommendations(args, True)
        return TranslationPage.from_dict(cast("RawTranslation", await call.send_async()))

    async def iter_translation_recommendations(
        self,
        source: str,
        target: str,
        *,
        limit: int | None = None,
        **options: Unpack[TranslationOptions],
    ) -> AsyncIterator[TranslationRecommendation]:
        """Every recommendation, page after page (the arguments of
        :meth:`translation_recommendations`; ``count`` is the page size), until the service
        signals the end or ``limit`` items were yielded. Each page repeats the last item of the
        one before; no item is yielded twice. Arguments are checked when iteration starts."""
        remaining = _args.optional_integer("limit", limit)
        if remaining is not None and remaining < 0:
            raise InvalidParameter(f"limit must be 0 or more, got {remaining}", parameter="limit")
        args = self._translation_args(source, target, options)
        seen: set[str | None] = set()
        while remaining is None or remaining > 0:
            call = self.native.translation_recommendations(args, True)
            page = TranslationPage.from_dict(cast("RawTranslation", await call.send_async()))
            fresh = False
            for item in page.items:
                if _item_key(item) in seen:
                    continue
                if remaining is not None:
                    if remaining == 0:
                        return
                    remaining -= 1
                seen.add(_item_key(item))
                fresh = True
                yield item
            # The service's last page repeats the item it ended on: nothing new is the end too.
            if not fresh or page.continue_offset is None or page.continue_offset < 0:
                return
            args["continue_offset"] = page.continue_offset
            if page.continue_seed is not None:
                args["continue_seed"] = page.continue_seed

    async def page_collections(self) -> list[PageCollection]:
        """Every page collection the service recommends from."""
        data = await self.native.page_collections().send_async()
        return [PageCollection.from_dict(x) for x in data]

    async def page_collection_groups(self) -> PageCollectionGroups:
        """The page collections grouped by the part of their name before ``/``."""
        data = await self.native.page_collection_groups().send_async()
        return PageCollectionGroups.from_dict(data)

    async def page_collection_membership(
        self,
        collection: str,
        *,
        qids: str | Iterable[str] | None = None,
        titles: str | Iterable[str] | None = None,
        language: str | None = None,
    ) -> CollectionMembership:
        """Whether ``collection`` holds each of ``qids`` (Wikidata ids such as ``"Q42"``) or
        each of ``titles`` (articles of the ``language`` wiki); give one of the two."""
        args: MembershipArgs = {
            "collection": _args.text("collection", collection),
            "qids": None if qids is None else _args.text_list("qids", qids),
            "titles": None if titles is None else _args.text_list("titles", titles),
            "language": _args.optional_text("language", language),
        }
        data = await self.native.page_collection_membership(args).send_async()
        return CollectionMembership.from_dict(data)

    async def client_credentials(self, client_id: str, client_secret: str) -> Token:
        """Request an app token with the client-credentials grant (it has no refresh token)."""
        call = self.native.client_credentials(
            _args.text("client_id", client_id), _args.text("client_secret", client_secret)
        )
        return Token.from_dict(await call.send_async())

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
        grant = _args.code_grant(code, client_id, client_secret, code_verifier, redirect_uri)
        call = self.native.authorization_code(grant)
        return Token.from_dict(await call.send_async())

    async def refresh_token(
        self, refresh_token: str, client_id: str, client_secret: str | None = None
    ) -> Token:
        """Exchange a refresh token for a new token pair. The server rotates the refresh token:
        keep the returned one (a :class:`TokenManager` does this for you)."""
        call = self.native.refresh_token(
            _args.text("refresh_token", refresh_token),
            _args.text("client_id", client_id),
            _args.optional_text("client_secret", client_secret),
        )
        return Token.from_dict(await call.send_async())

    @overload
    def link_recommendations_many(
        self,
        pages: Iterable[LinkPage],
        *,
        project: str = ...,
        domain: str | None = ...,
        revision: int | None = ...,
        raw: Literal[False] = ...,
        progress: bool = ...,
        **options: Unpack[LinkOptions],
    ) -> AsyncBatch[LinkRecommendationSet]: ...
    @overload
    def link_recommendations_many(
        self,
        pages: Iterable[LinkPage],
        *,
        project: str = ...,
        domain: str | None = ...,
        revision: int | None = ...,
        raw: Literal[True],
        progress: bool = ...,
        **options: Unpack[LinkOptions],
    ) -> AsyncBatch[dict[str, Any]]: ...
    def link_recommendations_many(
        self,
        pages: Iterable[LinkPage],
        *,
        project: str = "wikipedia",
        domain: str | None = None,
        revision: int | None = None,
        raw: bool = False,
        progress: bool = False,
        **options: Unpack[LinkOptions],
    ) -> AsyncBatch[Any]:
        """Link recommendations for many pages (GET each).

        ``pages`` holds titles (with ``domain=``), ``(domain, title)`` pairs, or dicts of
        per-page arguments (``page_title``/``title``, ``domain``, ``revision``, ...); a
        single string is refused (it is not a list of titles). The result holds every
        item in input order, each a result or that page's error; its ``as_completed()`` gives
        the items as they finish. ``progress=True`` shows a tqdm bar. Interrupting the batch
        keeps every finished result (:class:`BatchInterrupted` on Ctrl-C).
        """
        defaults = {
            "project": project,
            "domain": domain,
            "revision": revision,
            **self._link_defaults(options),
        }
        plan = self._link_plan(pages, defaults, _args.flag("raw", raw))
        return AsyncBatch(plan, progress, "link recommendations")

    @overload
    def link_recommendations_for_revision_many(
        self,
        pages: Iterable[Mapping[str, Any]],
        *,
        project: str = ...,
        domain: str | None = ...,
        raw: Literal[False] = ...,
        progress: bool = ...,
        **options: Unpack[LinkOptions],
    ) -> AsyncBatch[LinkRecommendationSet]: ...
    @overload
    def link_recommendations_for_revision_many(
        self,
        pages: Iterable[Mapping[str, Any]],
        *,
        project: str = ...,
        domain: str | None = ...,
        raw: Literal[True],
        progress: bool = ...,
        **options: Unpack[LinkOptions],
    ) -> AsyncBatch[dict[str, Any]]: ...
    def link_recommendations_for_revision_many(
        self,
        pages: Iterable[Mapping[str, Any]],
        *,
        project: str = "wikipedia",
        domain: str | None = None,
        raw: bool = False,
        progress: bool = False,
        **options: Unpack[LinkOptions],
    ) -> AsyncBatch[Any]:
        """Link recommendations for many supplied revisions (POST each). Each page is a dict
        with ``page_title``, ``wikitext``, ``revid`` and ``pageid`` (and optionally any other
        argument of :meth:`link_recommendations_for_revision`)."""
        defaults = {
            "project": project,
            "domain": domain,
            **self._link_defaults(options),
            "wikitext": None,
            "revid": None,
            "pageid": None,
        }
        plan = self._link_plan(pages, defaults, _args.flag("raw", raw))
        return AsyncBatch(plan, progress, "link recommendations")

    @overload
    def translation_recommendations_many(
        self,
        requests: Iterable[TranslationRequest],
        *,
        source: str | None = ...,
        target: str | None = ...,
        raw: Literal[False] = ...,
        progress: bool = ...,
        **options: Unpack[TranslationOptions],
    ) -> AsyncBatch[list[TranslationRecommendation]]: ...
    @overload
    def translation_recommendations_many(
        self,
        requests: Iterable[TranslationRequest],
        *,
        source: str | None = ...,
        target: str | None = ...,
        raw: Literal[True],
        progress: bool = ...,
        **options: Unpack[TranslationOptions],
    ) -> AsyncBatch[RawTranslation]: ...
    def translation_recommendations_many(
        self,
        requests: Iterable[TranslationRequest],
        *,
        source: str | None = None,
        target: str | None = None,
        raw: bool = False,
        progress: bool = False,
        **options: Unpack[TranslationOptions],
    ) -> AsyncBatch[Any]:
        """Translation recommendations for many requests: seed titles (with ``source=`` and
        ``target=``), ``(source, target)`` pairs, or dicts of arguments."""
        defaults = {"source": source, "target": target, **self._translation_defaults(options)}
        plan = self._translation_plan(requests, defaults, _args.flag("raw", raw))
        return AsyncBatch(plan, progress, "translation recommendations")


def _item_key(item: TranslationRecommendation) -> str | None:
    """What makes two items of a paged answer the same article."""
    return item.wikidata_id or item.title
