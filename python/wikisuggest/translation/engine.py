"""The local translation engine: production's translation recommendations, and whole-pair gap
tables, from a catalog built from Wikimedia's public dumps.

>>> import wikisuggest
>>> engine = wikisuggest.TranslationEngine.default()  # a small real-shaped catalog, offline
>>> items = engine.recommend("sw", topic="biography", random_seed=1)
>>> gaps = engine.missing("sw")  # every article Swahili lacks: a pyarrow.Table
>>> like = engine.similar("Moon")  # (title, BM25 score) pairs: CirrusSearch's morelike

An engine holds its catalog's articles in memory and is immutable: share one between threads.
Every call runs without the GIL and can be interrupted (sync) or cancelled (asyncio).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .. import _args
from .._native import SIMILAR_DEFAULTS, TRANSLATION_DEFAULTS, NativeTranslationEngine
from ..errors import InvalidParameter
from ..records import TranslationPage, TranslationRecommendation

if TYPE_CHECKING:
    import pyarrow
    from typing_extensions import Unpack

    from ..client import TranslationOptions

__all__ = ["TranslationEngine"]

#: The orders of a gap table.
GapOrder = Literal["pageviews", "langlinks_count"]


def _page(raw: Mapping[str, Any]) -> TranslationPage:
    return TranslationPage(tuple(raw["items"]), raw["continue_offset"], raw["continue_seed"])


def _random_seed(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**64:
        raise InvalidParameter(
            f"random_seed must be an integer from 0 to 2**64-1, got {value!r}",
            parameter="random_seed",
        )
    return value


def _codes(name: str, value: str | Iterable[str]) -> list[str]:
    if isinstance(value, str):
        return [value]
    return _args.text_list(name, value)


class TranslationEngine:
    """Production's translation recommendations from a local catalog (see
    :mod:`wikisuggest.translation`): :meth:`recommend`, :meth:`page` and :meth:`missing`, with
    ``_async`` twins."""

    __slots__ = ("_manifest", "_native", "_path")

    def __init__(self, native: NativeTranslationEngine, path: Path) -> None:
        self._native = native
        self._path = path
        self._manifest: dict[str, Any] = json.loads(native.manifest())

    # --- opening -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> TranslationEngine:
        """The catalog in the folder ``path`` (what :meth:`published` returns the path of,
        and ``wikisuggest translation path WIKI`` prints)."""
        folder = Path(path)
        return cls(NativeTranslationEngine.open(str(folder)), folder)

    @classmethod
    def default(cls) -> TranslationEngine:
        """The small catalog shipped with the package (English Wikipedia articles with their
        real interlanguage links, predictions and a day's views), for trying it offline."""
        from .sample import default_catalog_path

        return cls.open(default_catalog_path())

    @classmethod
    def published(
        cls,
        wiki: str,
        *,
        parts: Iterable[str] = ("sql",),
        day: Any = None,
        cache_dir: str | os.PathLike[str] | None = None,
        update: bool = False,
        offline: bool | None = None,
        progress: bool = False,
        user_agent: str | None = None,
    ) -> TranslationEngine:
        """Fetches the parts of ``wiki``'s newest complete dumps that ``parts`` needs, builds
        its catalog (once; reused for every target) and opens it. See
        :func:`wikisuggest.translation.fetch` for the arguments."""
        from .fetch import fetch

        path = fetch(
            wiki,
            parts=parts,
            day=day,
            cache_dir=cache_dir,
            update=update,
            offline=offline,
            progress=progress,
            user_agent=user_agent,
        )
        return cls.open(path)

    # --- what it holds -------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The catalog's folder."""
        return self._path

    @property
    def wiki(self) -> str:
        """The source wiki's database name (``enwiki``)."""
        return str(self._manifest["wiki"])

    @property
    def language(self) -> str:
        """The source wiki's language code (``en``): the ``source`` of every request."""
        return str(self._manifest["language"])

    @property
    def parts(self) -> tuple[str, ...]:
        """The parts the catalog was built with (``sql``, ``cirrus``, ``pageviews``,
        ``collections``)."""
        return tuple(self._manifest["parts"])

    @property
    def manifest(self) -> dict[str, Any]:
        """The catalog's ``catalog.json``: sources, dates and counts."""
        copy: dict[str, Any] = json.loads(json.dumps(self._manifest))
        return copy

    def __len__(self) -> int:
        return len(self._native)

    def __repr__(self) -> str:
        return f"TranslationEngine({self.wiki!r}, parts={self.parts!r}, articles={len(self)})"

    # --- recommendations -----------------------------------------------------------------

    def _call(
        self, target: str, options: Mapping[str, Any]
    ) -> Any:  # a NativeCall of the extension
        options = dict(options)
        random_seed = _random_seed(options.pop("random_seed", None))
        follow = _args.flag("follow_redirects", options.pop("follow_redirects", False))
        args = _args.translation_options(
            self.language, target, **_args.with_defaults(TRANSLATION_DEFAULTS, options)
        )
        return self._native.recommend(args, random_seed, follow)

    def page(
        self,
        target: str,
        *,
        random_seed: int | None = None,
        follow_redirects: bool = False,
        **options: Unpack[TranslationOptions],
    ) -> TranslationPage:
        """One answer as production's service gives it for ``source=<this wiki>&target=
        <target>`` with the same arguments as :meth:`wikisuggest.Client.translation_page`,
        and its continuation (single-collection mode only). ``random_seed`` fixes every random
        draw (the default ranking's shuffle, topic and country samples, collection orders):
        ``count=5`` is then the start of ``count=500``. ``follow_redirects`` corrects popular
        mode, where production recommends a redirect on the top list as a page of its own."""
        call = self._call(
            target, {**options, "random_seed": random_seed, "follow_redirects": follow_redirects}
        )
        return _page(call.send())

    def recommend(
        self,
        target: str,
        *,
        random_seed: int | None = None,
        follow_redirects: bool = False,
        **options: Unpack[TranslationOptions],
    ) -> list[TranslationRecommendation]:
        """The items of :meth:`page`."""
        return list(
            self.page(
                target, random_seed=random_seed, follow_redirects=follow_redirects, **options
            ).items
        )

    async def page_async(
        self,
        target: str,
        *,
        random_seed: int | None = None,
        follow_redirects: bool = False,
        **options: Unpack[TranslationOptions],
    ) -> TranslationPage:
        """:meth:`page` as a coroutine (cancelling it stops the work)."""
        call = self._call(
            target, {**options, "random_seed": random_seed, "follow_redirects": follow_redirects}
        )
        return _page(await call.send_async())

    async def recommend_async(
        self,
        target: str,
        *,
        random_seed: int | None = None,
        follow_redirects: bool = False,
        **options: Unpack[TranslationOptions],
    ) -> list[TranslationRecommendation]:
        """:meth:`recommend` as a coroutine."""
        page = await self.page_async(
            target, random_seed=random_seed, follow_redirects=follow_redirects, **options
        )
        return list(page.items)

    # --- seed search ---------------------------------------------------------------------

    def _similar_call(
        self,
        seeds: str | Iterable[str],
        limit: int,
        min_term_freq: int | None,
        min_doc_freq: int | None,
        max_query_terms: int | None,
        minimum_should_match: str | int | None,
    ) -> Any:
        checked = _args.integer("limit", limit)
        if checked < 0:
            raise InvalidParameter(f"limit must be at least 0, got {checked}", parameter="limit")
        counts = {
            "min_term_freq": min_term_freq,
            "min_doc_freq": min_doc_freq,
            "max_query_terms": max_query_terms,
        }
        for name, value in counts.items():
            number = _args.optional_integer(name, value)
            if number is not None and not 0 <= number < 2**32:
                raise InvalidParameter(
                    f"{name} must be from 0 to 2**32-1, got {number}", parameter=name
                )
        if isinstance(minimum_should_match, int) and not isinstance(minimum_should_match, bool):
            minimum_should_match = str(minimum_should_match)
        return self._native.similar(
            _codes("seeds", seeds),
            checked,
            min_term_freq=min_term_freq,
            min_doc_freq=min_doc_freq,
            max_query_terms=max_query_terms,
            minimum_should_match=_args.optional_text("minimum_should_match", minimum_should_match),
        )

    def similar(
        self,
        seeds: str | Iterable[str],
        *,
        limit: int = SIMILAR_DEFAULTS["limit"],
        min_term_freq: int | None = None,
        min_doc_freq: int | None = None,
        max_query_terms: int | None = None,
        minimum_should_match: str | int | None = None,
    ) -> list[tuple[str, float]]:
        """Articles like ``seeds``, as CirrusSearch's ``morelike:<seeds>`` finds them:
        ``(title, score)`` pairs, best first (BM25 scores as the search cluster reports
        them), at most ``limit``. Seeds are titles, as a list or one string separated by
        ``|``; redirects are followed, titles naming no article dropped, and the seeds are
        never returned; no seed found gives ``[]``. Disambiguation pages are included, as the
        search cluster returns them (:meth:`recommend` drops them).

        The morelike parameters default to the wiki's (CirrusSearch's, in
        :data:`wikisuggest.SIMILAR_DEFAULTS`); a call may override ``min_term_freq``,
        ``min_doc_freq``, ``max_query_terms`` (capped at 100) and ``minimum_should_match``
        (``"30%"``, ``"-25%"``, ``3``). Needs the search index built with the ``cirrus``
        part: without it, :class:`~wikisuggest.errors.MissingCatalogPart`."""
        call = self._similar_call(
            seeds, limit, min_term_freq, min_doc_freq, max_query_terms, minimum_should_match
        )
        return [(title, score) for title, score in call.send()]

    async def similar_async(
        self,
        seeds: str | Iterable[str],
        *,
        limit: int = SIMILAR_DEFAULTS["limit"],
        min_term_freq: int | None = None,
        min_doc_freq: int | None = None,
        max_query_terms: int | None = None,
        minimum_should_match: str | int | None = None,
    ) -> list[tuple[str, float]]:
        """:meth:`similar` as a coroutine."""
        call = self._similar_call(
            seeds, limit, min_term_freq, min_doc_freq, max_query_terms, minimum_should_match
        )
        return [(title, score) for title, score in await call.send_async()]

    # --- gap tables ----------------------------------------------------------------------

    def _missing_call(
        self,
        target: str | Iterable[str],
        topic: str | Iterable[str] | None,
        country: str | Iterable[str] | None,
        titles: Iterable[str] | None,
        wikidata_ids: Iterable[str] | None,
        category: str | None,
        min_size: int | None,
        max_size: int | None,
        order_by: str,
    ) -> Any:
        targets = _codes("target", target)
        return self._native.missing(
            targets,
            topic=_args.text_list("topic", topic),
            country=_args.text_list("country", country),
            titles=None if titles is None else _codes("titles", titles),
            wikidata_ids=None if wikidata_ids is None else _codes("wikidata_ids", wikidata_ids),
            category=_args.optional_text("category", category),
            min_size=_args.optional_integer("min_size", min_size),
            max_size=_args.optional_integer("max_size", max_size),
            order_by=_args.text("order_by", order_by),
        )

    def missing(
        self,
        target: str | Iterable[str],
        *,
        topic: str | Iterable[str] | None = None,
        country: str | Iterable[str] | None = None,
        titles: Iterable[str] | None = None,
        wikidata_ids: Iterable[str] | None = None,
        category: str | None = None,
        min_size: int | None = None,
        max_size: int | None = None,
        order_by: GapOrder = "pageviews",
    ) -> pyarrow.Table:
        """Every article of this wiki that ``target`` lacks — production's rule, no cap and
        no sampling, disambiguation pages left out — as a ``pyarrow.Table`` (``.to_pandas()``)
        with the columns ``title``, ``page_id``, ``wikidata_id``, ``langlinks_count``,
        ``pageviews``, ``page_len``, ``text_bytes``, ``lead_section_size``, ``topics``,
        ``countries`` (null where the catalog lacks the part). Most viewed first (by
        interlanguage links when the catalog has no views), or ``order_by="langlinks_count"``.

        Filters: ``topic``/``country`` as in :meth:`recommend`; ``titles`` (redirects
        followed), ``wikidata_ids`` or a ``category`` (as the search index lists them);
        ``min_size``/``max_size`` bound ``page_len``. Several targets in one pass add a leading
        ``target`` column."""
        call = self._missing_call(
            target, topic, country, titles, wikidata_ids, category, min_size, max_size, order_by
        )
        return _table(call.send())

    async def missing_async(
        self,
        target: str | Iterable[str],
        *,
        topic: str | Iterable[str] | None = None,
        country: str | Iterable[str] | None = None,
        titles: Iterable[str] | None = None,
        wikidata_ids: Iterable[str] | None = None,
        category: str | None = None,
        min_size: int | None = None,
        max_size: int | None = None,
        order_by: GapOrder = "pageviews",
    ) -> pyarrow.Table:
        """:meth:`missing` as a coroutine."""
        call = self._missing_call(
            target, topic, country, titles, wikidata_ids, category, min_size, max_size, order_by
        )
        return _table(await call.send_async())


def _table(batch: Any) -> pyarrow.Table:
    try:
        import pyarrow as pa
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError(
            "missing() returns a pyarrow.Table: pip install pyarrow (or 'wikisuggest[parquet]')"
        ) from err
    return pa.Table.from_batches([pa.record_batch(batch)])
