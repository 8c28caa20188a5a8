"""The local link engine: production's link recommendations computed in-process, offline.

>>> import wikisuggest
>>> engine = wikisuggest.LinkEngine.default()  # the small enwiki sample shipped with the package
>>> result = engine.recommend("The aardvark is a mammal native to Africa.", "Aardvark")
>>> [(link.link_text, link.link_target) for link in result.links]  # doctest: +SKIP

An engine loads its dataset once (a native file is memory-mapped) and is immutable: share one
engine between threads freely. Every call runs without holding the GIL. ``close()`` (or the end
of a ``with LinkEngine.open(...) as engine:`` block) lets go of the dataset.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Generator, Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing_extensions import Unpack

from .. import _args
from .._args import EngineOptions, NativePage
from .._native import NativeEngine, NativeEngineBatch, __version__
from ..batch import AsyncBatch, Batch, BatchItem, BatchResults
from ..errors import Cancelled, ClientClosed, InvalidParameter, WikisuggestError
from ..records import LinkRecommendationSet
from .options import PassOptions, RecommendOptions, pass_options
from .pages import PageSpec, native_page, single_page
from .rules import ExplainedResult
from .sample import default_dataset_path

__all__ = ["CandidateScore", "EngineInfo", "LinkEngine"]

#: Pages queued in the engine per worker ahead of the items returned: enough that a worker
#: never waits for the next page (or behind one long page), few enough that memory stays flat.
_PAGES_PER_WORKER = 8


@dataclass(frozen=True, slots=True)
class EngineInfo:
    """What an engine has loaded."""

    wiki_id: str
    #: ``native`` (memory-mapped file), ``published`` (``.sql.gz`` dumps converted in memory),
    #: ``sqlite`` (legacy files converted in memory) or ``memory``.
    source: str
    path: str | None
    language_code: str
    titles: int
    pages: int
    redirects: int
    vectors: int
    dim: int
    anchors: int
    candidates: int
    model_trees: int
    #: Published sha256 of the source files (``meta.dataset_checksums``); may be empty.
    checksums: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class CandidateScore:
    """One candidate target of a mention, with the model's input and output."""

    title: str
    count: int
    #: The 7 model features by name (``ngram``, ``freq``, ``ambig``, ``kurtosis``, ``w2v``,
    #: ``jaro``, ``wiki``); ``kurtosis`` is NaN when undefined, as upstream.
    features: Mapping[str, float]
    #: float32 probability widened to float, as in ``LinkRecommendation.score``.
    probability: float


class LinkEngine:
    """Link recommendations from a local dataset; see :meth:`open` and :meth:`default`."""

    __slots__ = ("_native", "_wiki_id")

    def __init__(self, native: NativeEngine) -> None:
        self._native: NativeEngine | None = native
        self._wiki_id = native.wiki_id

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], wiki_id: str, *, verify: bool = False
    ) -> LinkEngine:
        """Open the dataset of ``wiki_id``: a native ``.linkdata`` file, or a directory
        holding one, the published ``lr_{wiki}_*.sql.gz`` dumps with their model and
        checksums (verified, then converted in memory), or legacy ``.sqlite`` files.

        A native file's structure is always validated (cheap); ``verify=True`` also checks
        its checksum, reading the whole file once (see :meth:`verify`)."""
        _args.text("wiki_id", wiki_id)
        checked = _args.flag("verify", verify)
        return cls(NativeEngine.open(os.fspath(path), wiki_id, __version__, checked))

    @classmethod
    def published(cls, wiki: str, **fetch_options: Any) -> LinkEngine:
        """Production's engine for ``wiki`` (``"frwiki"``, ``"fr"``, ``"fr.wikipedia.org"``):
        its published datasets, fetched, verified and converted on first use, then opened
        from the cache in an instant. ``fetch_options`` are those of
        :func:`wikisuggest.datasets.fetch` (``update=True`` to get a newer version,
        ``offline=True``, ``cache_dir=``, ``expect=``, ``progress=True``, …)."""
        from ..datasets.fetch import fetch
        from ..datasets.published import wiki_id

        return cls.open(fetch(wiki, **fetch_options), wiki_id(wiki))

    @classmethod
    def default(cls) -> LinkEngine:
        """The engine over the enwiki sample shipped with the package, shared by every caller
        (opened once; opened anew if it was closed)."""
        engine = _default_engine()
        if engine.closed:
            _default_engine.cache_clear()
            engine = _default_engine()
        return engine

    @property
    def wiki_id(self) -> str:
        return self._wiki_id

    @property
    def closed(self) -> bool:
        return self._native is None

    def close(self) -> None:
        """Let go of the dataset and refuse every later call with
        :class:`~wikisuggest.ClientClosed`; calling it again does nothing.

        This drops the engine's reference to its native core, which owns the dataset: the
        memory map of a native file (or the tables converted in memory) is released as soon as
        no call is still running on it. Calls already running finish normally."""
        self._native = None

    def __enter__(self) -> LinkEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = ", closed" if self.closed else ""
        return f"LinkEngine(wiki_id={self.wiki_id!r}{state})"

    @property
    def native(self) -> NativeEngine:
        """The native engine the whole-wiki entries (:func:`recommend_dump`, the Spark entry)
        hand to the extension; :class:`~wikisuggest.ClientClosed` once this engine is closed."""
        native = self._native
        if native is None:
            raise ClientClosed("this LinkEngine was closed")
        return native

    def info(self) -> EngineInfo:
        """Provenance, sizes and checksums of the loaded dataset."""
        return EngineInfo(**self.native.info())

    def verify(self) -> None:
        """Check the dataset's checksum over every byte (header, section table and data);
        raise :class:`~wikisuggest.errors.DatasetError` if it is damaged or was changed in
        place since it was opened."""
        self.native.verify()

    def score(
        self,
        page_title: str,
        mention: str,
        candidates: Iterable[str] | None = None,
        *,
        language_code: str | None = None,
    ) -> list[CandidateScore] | None:
        """What the engine computes for ``mention`` on page ``page_title`` before it picks a
        target: each classification candidate (at most the 10 most linked) with its features
        and probability, in classification order. ``candidates`` keeps only those titles.
        ``None`` when the lowercased mention is not a known anchor."""
        rows = self.native.score(
            _args.text("page_title", page_title),
            _args.text("mention", mention),
            _args.optional_text("language_code", language_code),
        )
        if rows is None:
            return None
        wanted = None if candidates is None else set(_args.text_list("candidates", candidates))
        return [CandidateScore(**row) for row in rows if wanted is None or row["title"] in wanted]

    def recommend(
        self, wikitext: str, page_title: str, **options: Unpack[RecommendOptions]
    ) -> LinkRecommendationSet:
        """Links for one page, exactly as production's ``Query.run`` computes them.

        ``language_code`` defaults to the wiki's (``enwiki`` → ``en``). ``threshold`` (0 to 1)
        and ``max_recommendations`` (0 means no limit) are checked as the client checks them;
        every option's default is in :data:`wikisuggest.ENGINE_DEFAULTS`.
        ``time_budget`` (seconds) stops early and returns the links found so far, as
        production does after 29 s; by default there is no budget, so results never depend on
        machine speed. ``pageid`` and ``revid`` are carried into the result.

        Other threads run while a page is computed. Most pages end on the calling thread; a
        long one is handed to a worker thread, where Ctrl-C interrupts the wait (the page
        finishes unseen).
        """
        page, checked = _one_page(wikitext, page_title, options)
        return self.native.recommend(page, checked).send()

    async def recommend_async(
        self, wikitext: str, page_title: str, **options: Unpack[RecommendOptions]
    ) -> LinkRecommendationSet:
        """:meth:`recommend` for asyncio (the same keyword arguments): it runs on the
        extension's threads, not the event loop, at most one page per core at a time (pages
        awaited together wait their turn; :meth:`recommend_many_async` streams many)."""
        page, checked = _one_page(wikitext, page_title, options)
        return await self.native.recommend(page, checked).send_async()

    def recommend_many(
        self,
        pages: Iterable[PageSpec],
        *,
        workers: int | None = None,
        progress: bool = False,
        **options: Unpack[PassOptions],
    ) -> Batch[LinkRecommendationSet]:
        """Links for many pages on ``workers`` threads (default: all cores), with the keyword
        arguments of :meth:`recommend` but the page's own (:class:`PassOptions`): a
        :class:`~wikisuggest.Batch`, run when first read. Read whole, it is the
        :class:`~wikisuggest.BatchResults` of every page in input order (``progress=True``
        shows a bar); its :meth:`~wikisuggest.Batch.as_completed` yields them one by one, in
        input order too, holding none (see :meth:`recommend_iter`).

        A page is a :class:`Page` — ``Page(wikitext, page_title)``, the order of
        :meth:`recommend`, optionally with ``pageid``, ``revid``, ``language_code`` — a tuple
        in that order, or a dict with those keys. ``pages`` is read lazily, a few pages per
        worker ahead of the items returned; each worker takes the next page as soon as it
        finishes one. A page that fails carries its error
        (:class:`~wikisuggest.WikitextError`, :class:`~wikisuggest.InvalidParameter`); the
        others are unaffected.

        On Ctrl-C, pages already running finish, and :class:`~wikisuggest.BatchInterrupted`
        carries an item for every page read (unstarted ones ``Cancelled``)."""
        return Batch(self._feed(pages, workers, options), progress, "recommend")

    def recommend_many_async(
        self,
        pages: Iterable[PageSpec],
        *,
        workers: int | None = None,
        progress: bool = False,
        **options: Unpack[PassOptions],
    ) -> AsyncBatch[LinkRecommendationSet]:
        """:meth:`recommend_many` for asyncio: ``await`` it for every item in input order, or
        ``async for`` over it; the pages run on the engine's threads, the event loop only
        waits. Cancelling the task stops further pages; the items of every page read are
        then in :attr:`~wikisuggest.AsyncBatch.settled`."""
        return AsyncBatch(self._feed(pages, workers, options), progress, "recommend")

    def recommend_iter(
        self,
        pages: Iterable[PageSpec],
        *,
        workers: int | None = None,
        **options: Unpack[PassOptions],
    ) -> Generator[BatchItem[LinkRecommendationSet], None, None]:
        """``recommend_many(pages, ...).as_completed()``: one
        :class:`~wikisuggest.BatchItem` per page, in input order, none kept, so memory does
        not grow with the number of pages. On Ctrl-C,
        :class:`~wikisuggest.BatchInterrupted` carries the items of every page read but not
        returned yet."""
        return self.recommend_many(pages, workers=workers, **options).as_completed()

    def explain(
        self, wikitext: str, page_title: str, **options: Unpack[RecommendOptions]
    ) -> ExplainedResult:
        """:meth:`recommend`, with what its ``rules`` removed: each link the pass found and a
        rule took out (with the rule and the entry that named it), and the rule that removed
        the whole page, if one did."""
        page, checked = _one_page(wikitext, page_title, options)
        return self.native.recommend(page, checked, True).send()

    def explain_iter(
        self,
        pages: Iterable[PageSpec],
        *,
        workers: int | None = None,
        **options: Unpack[PassOptions],
    ) -> Generator[BatchItem[ExplainedResult], None, None]:
        """:meth:`recommend_iter` with :meth:`explain`'s results."""
        batch: Batch[ExplainedResult] = Batch(
            self._feed(pages, workers, options, explain=True), False, "explain"
        )
        return batch.as_completed()

    def link_targets(self) -> list[str]:
        """Every page the dataset's anchors can link to (their candidate targets), sorted:
        the titles a class table needs (see :func:`wikisuggest.fill_classes`)."""
        return self.native.link_targets()

    def _feed(
        self,
        pages: Iterable[PageSpec],
        workers: int | None,
        options: Mapping[str, Any],
        *,
        explain: bool = False,
    ) -> _PageFeed:
        _args.not_text("pages", pages)
        if workers is not None and (_args.integer("workers", workers) < 1):
            raise InvalidParameter("workers must be at least 1", parameter="workers")
        return _PageFeed(self, pages, workers, pass_options(options), explain)

    @staticmethod
    def convert(
        src_dir: str | os.PathLike[str], wiki_id: str, out_dir: str | os.PathLike[str]
    ) -> Path:
        """See :func:`wikisuggest.datasets.convert`."""
        from ..datasets import convert

        return convert(src_dir, wiki_id, out_dir)


@functools.cache
def _default_engine() -> LinkEngine:
    return LinkEngine.open(default_dataset_path(), "enwiki")


def _one_page(
    wikitext: Any, page_title: Any, given: Mapping[str, Any]
) -> tuple[NativePage, EngineOptions]:
    """The native page and options of :meth:`LinkEngine.recommend`."""
    ids = {name: given[name] for name in ("pageid", "revid") if name in given}
    options = pass_options({k: v for k, v in given.items() if k not in ids})
    return single_page(wikitext, page_title, ids.get("pageid"), ids.get("revid")), options


class _PageFeed:
    r"""The pages of an engine batch, handed to the native batch a few per worker ahead of
    the items read back, so memory holds only the pages in flight. Its items are
    :class:`LinkRecommendationSet`\ s, or :class:`ExplainedResult`\ s with ``explain``."""

    def __init__(
        self,
        engine: LinkEngine,
        pages: Iterable[PageSpec],
        workers: int | None,
        options: EngineOptions,
        explain: bool = False,
    ) -> None:
        self.total = len(pages) if isinstance(pages, Sized) else None
        self.failed: list[BatchItem[Any]] = []
        # Started now, so that a closed engine or an option out of range is refused by the
        # call (even for a batch of only invalid pages); pages are read when it is.
        self._batch: NativeEngineBatch[Any] = engine.native.batch(workers, options, explain)
        self._pages = pages
        self._ahead = _PAGES_PER_WORKER * (workers or os.cpu_count() or 1)
        self._read: Iterator[tuple[int, PageSpec]] = iter(())

    def start(self) -> NativeEngineBatch[Any]:
        self._read = enumerate(self._pages)
        return self._batch

    def feed(self, batch: NativeEngineBatch[Any]) -> None:
        """Reads pages until ``ahead`` are in the engine (or as many were read): a page that
        cannot reach it is refused in its place, with its error."""
        for _ in range(self._ahead):
            if batch.pending() >= self._ahead:
                return
            entry = next(self._read, None)
            if entry is None:
                return
            index, spec = entry
            try:
                page = native_page(spec)
            except WikisuggestError as err:
                batch.refuse(index, spec, err)
                continue
            except BaseException:
                # Read, then interrupted before it reached the engine: it still comes back.
                batch.refuse(index, spec, Cancelled("interrupted before this page started"))
                raise
            try:
                batch.push(index, spec, page)
            except InvalidParameter as err:
                # A lone surrogate in the wikitext, found as the engine reads it: not queued.
                batch.refuse(index, spec, err)

    def ordered(self, finished: list[BatchItem[Any]]) -> BatchResults[Any]:
        """The engine's items come back in input order, every page read."""
        return BatchResults(finished)
