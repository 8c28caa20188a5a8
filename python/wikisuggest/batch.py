"""Many requests at once, with per-item results.

A batch runs every item on the client's shared limits (at most ``max_concurrency`` requests in
flight, optionally at most ``rate_limit`` per second) and reports, for each input, either its
result or the typed error it met. A failure never discards other items' results.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import operator
from collections import deque
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

from . import _args, _dataframes
from ._progress import Progress
from .errors import Cancelled, InvalidParameter, WikisuggestError

if TYPE_CHECKING:
    import pandas

__all__ = ["AsyncBatch", "Batch", "BatchInterrupted", "BatchItem", "BatchResults"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BatchItem(Generic[T]):
    """The outcome of one input: ``result`` on success, else ``error``."""

    index: int
    input: Any
    result: T | None = None
    error: WikisuggestError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def unwrap(self) -> T:
        """The result, or raise the item's error."""
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]

    def __repr__(self) -> str:
        # Short: an input may hold a whole article's wikitext, a result hundreds of links.
        if self.error is not None:
            outcome = f"error={type(self.error).__name__}({_short(str(self.error))})"
        else:
            links = getattr(self.result, "links", None)
            outcome = "ok" if links is None else f"ok, {len(links)} links"
        return f"BatchItem(index={self.index}, input={_short_input(self.input)}, {outcome})"


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _short_input(spec: Any) -> str:
    if isinstance(getattr(spec, "page_title", None), str):
        return _short(spec.page_title)
    if isinstance(spec, Mapping):
        title = spec.get("page_title", spec.get("title", spec.get("seed")))
        return _short(str(title)) if title is not None else f"<{len(spec)} fields>"
    if isinstance(spec, str):
        return _short(spec)
    if isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(x, str) for x in spec):
        return f"({_short(spec[0], 30)}, {_short(spec[1], 30)})"
    return _short(repr(spec))


class BatchResults(list[BatchItem[T]]):
    """Items in input order, with helpers for the successes and the failures."""

    def __repr__(self) -> str:
        failed = sum(item.error is not None for item in self)
        return f"BatchResults({len(self)} items: {len(self) - failed} ok, {failed} failed)"

    @property
    def results(self) -> list[T]:
        """Results of the items that succeeded, in input order."""
        return [item.result for item in self if item.error is None]  # type: ignore[misc]

    @property
    def errors(self) -> list[BatchItem[T]]:
        """The items that failed."""
        return [item for item in self if item.error is not None]

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per link (or translation recommendation) with the page's columns; a failed
        input is one row with its ``error``."""
        rows: list[dict[str, Any]] = []
        columns: list[str] = ["input_index"]
        for item in self:
            base = {"input_index": item.index, **_describe_input(item.input)}
            if item.error is not None:
                rows.append({**base, "error": f"{type(item.error).__name__}: {item.error}"})
                continue
            result: Any = item.result
            if hasattr(result, "links"):
                page = {
                    "page_title": result.page_title,
                    "pageid": result.pageid,
                    "revid": result.revid,
                }
                for link in result.links:
                    rows.append({**base, **page, **_record(link)})
                columns = [
                    "input_index",
                    "page_title",
                    "pageid",
                    "revid",
                    *_dataframes.LINK_COLUMNS,
                ]
            else:
                for rec in result or ():
                    rows.append({**base, **_record(rec)})
                columns = ["input_index", *_dataframes.TRANSLATION_COLUMNS]
        return _dataframes.dataframe(rows, columns)

    def _repr_html_(self) -> str:
        from ._html import batch_results_html

        return batch_results_html(self)


def _record(record: Any) -> dict[str, Any]:
    return {
        f.name: getattr(record, f.name) for f in dataclasses.fields(record) if f.name != "extra"
    }


def _describe_input(spec: Any) -> dict[str, Any]:
    if isinstance(spec, Mapping):
        return {f"input_{k}": v for k, v in spec.items() if k != "wikitext"}
    return {"input": spec}


class NativeGroup(Protocol[T]):
    """Items the native batch finished together, handed to the asyncio side as they are."""

    def items(self) -> list[BatchItem[T]]: ...


class NativeBatch(Protocol[T]):
    """What the drivers below need of a running native batch: the client's ``NativeBatch``
    and the engine's ``NativeEngineBatch`` (``wikisuggest._native``) both hand over ready
    items."""

    def next(self, sink: deque[BatchItem[T]]) -> bool:
        """Append the next finished items to ``sink`` (appended natively, so that a signal
        handler running as the call returns loses none); ``False`` at the end."""

    def next_async(self) -> Awaitable[NativeGroup[T]]: ...

    def interrupt(self) -> list[BatchItem[T]]: ...

    def cancel(self) -> None: ...


class Source(Protocol[T]):
    """Where a batch's items come from: the client's :class:`Plan` (every input known at the
    start) or the engine's page feed (pages read lazily, a few per worker ahead)."""

    #: Number of inputs, for a progress bar (``None`` when unknown).
    total: int | None
    #: Items that failed before the native batch saw them, handed over first.
    failed: list[BatchItem[T]]

    def start(self) -> NativeBatch[T]: ...

    def feed(self, native: Any) -> None:
        """Hand the native batch (the one :meth:`start` returned) more inputs, if it takes
        them as it goes."""

    def ordered(self, finished: list[BatchItem[T]]) -> BatchResults[T]:
        """Every input's item in input order, given the items that came back."""


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C during a batch: ``results`` holds every item, unfinished ones with a
    :class:`~wikisuggest.errors.Cancelled` error."""

    def __init__(self, results: BatchResults[Any]) -> None:
        super().__init__(
            f"batch interrupted: {sum(i.ok for i in results)} of {len(results)} items finished"
        )
        self.results = results


_index_of = operator.attrgetter("index")


class Plan(Generic[T]):
    """A client batch's inputs, split into those sent to the native batch and those already
    failed. The native batch builds each finished item from ``inputs`` and ``native_index``
    (the input of each request it was given)."""

    def __init__(
        self,
        inputs: Iterable[Any],
        to_native: Callable[[Any], Any],
        name: str,
        start: Callable[[Plan[T]], NativeBatch[T]],
    ) -> None:
        _args.not_text(name, inputs)
        self.inputs = list(inputs)
        self.total: int | None = len(self.inputs)
        self.native_index: list[int] = []
        #: The native options of each request sent (``LinkArgs``, ``TranslationArgs``).
        self.items: list[Any] = []
        self.failed: list[BatchItem[T]] = []
        self._start = start
        for index, spec in enumerate(self.inputs):
            try:
                self.items.append(to_native(spec))
                self.native_index.append(index)
            except InvalidParameter as err:
                self.failed.append(BatchItem(index, spec, error=err))

    def start(self) -> NativeBatch[T]:
        return self._start(self)

    def feed(self, native: Any) -> None:
        """Every request was given at the start."""

    def ordered(self, finished: list[BatchItem[T]]) -> BatchResults[T]:
        if len(finished) == len(self.inputs):  # every item finished: only their order is left
            finished.sort(key=_index_of)
            return BatchResults(finished)
        by_index = {item.index: item for item in finished}
        return BatchResults(
            by_index.get(i)
            or BatchItem(
                i, spec, error=Cancelled("the batch was cancelled before this item finished")
            )
            for i, spec in enumerate(self.inputs)
        )


def _items(source: Source[T], progress: bool, desc: str) -> Generator[BatchItem[T], None, None]:
    """Items as they complete (the native batch's order). Closing the generator cancels
    unfinished work. Ctrl-C — raised while waiting, or thrown in at a ``yield`` — raises
    :class:`BatchInterrupted` with every item not handed over yet (what the native batch can
    settle, for the engine every page read)."""
    bar = Progress(progress, source.total, desc)
    native = source.start()
    ready: deque[BatchItem[T]] = deque(source.failed)
    try:
        while True:
            while ready:
                item = ready.popleft()
                bar.update(item)
                yield item
            source.feed(native)
            if not native.next(ready):
                return
    except KeyboardInterrupt as interrupt:
        if isinstance(interrupt, BatchInterrupted):
            raise
        ready.extend(native.interrupt())
        raise BatchInterrupted(BatchResults(ready)) from interrupt
    finally:
        native.cancel()
        bar.close()


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while results accumulate.

    A batch creates hundreds of thousands of records, none of which form reference cycles;
    with the collector running, each of its generation thresholds triggers a pass over every
    record kept so far, which measured as half of a large batch's CPU time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _collect(source: Source[T], progress: bool, desc: str) -> BatchResults[T]:
    """Every item in input order; on Ctrl-C, :class:`BatchInterrupted` with every item."""
    finished: list[BatchItem[T]] = []
    items = _items(source, progress, desc)
    with _collector_paused():
        try:
            try:
                for item in items:
                    finished.append(item)
            except KeyboardInterrupt as interrupt:
                if isinstance(interrupt, BatchInterrupted):
                    raise
                # Raised in this loop, between items: the generator settles what it holds.
                items.throw(interrupt)
                raise
        except BatchInterrupted as interrupted:
            finished.extend(interrupted.results)
            raise BatchInterrupted(source.ordered(finished)) from interrupted.__cause__
        return source.ordered(finished)


class Batch(Generic[T]):
    """A batch, run when it is first read (the blocking twin of :class:`AsyncBatch`).

    Read it as its :class:`BatchResults` — ``len``, indexing, iteration, ``results``,
    ``errors``, ``to_dataframe()``, or :meth:`wait` for the list itself — which waits for
    every item; or iterate :meth:`as_completed` for the items as they finish, holding none.
    Ctrl-C raises :class:`BatchInterrupted` with every item (unfinished ones
    :class:`~wikisuggest.errors.Cancelled`).
    """

    __slots__ = ("_desc", "_done", "_progress", "_source", "_started")

    def __init__(self, source: Source[T], progress: bool, desc: str) -> None:
        self._source = source
        self._progress = progress
        self._desc = desc
        self._started = False
        self._done: BatchResults[T] | None = None

    def _take(self) -> Source[T]:
        if self._started:
            raise RuntimeError("a batch can be read only once (as_completed() keeps no items)")
        self._started = True
        return self._source

    def as_completed(self) -> Generator[BatchItem[T], None, None]:
        """The items as they finish (the engine's in input order), none kept: over a stream
        of pages, memory does not grow with their number. Closing the generator cancels
        what has not finished."""
        if self._done is not None:
            return (item for item in self._done)
        return _items(self._take(), self._progress, self._desc)

    def wait(self) -> BatchResults[T]:
        """Every item, in input order (run on the first call, kept for the next ones)."""
        if self._done is None:
            self._done = _collect(self._take(), self._progress, self._desc)
        return self._done

    def __len__(self) -> int:
        return len(self.wait())

    @overload
    def __getitem__(self, index: int) -> BatchItem[T]: ...
    @overload
    def __getitem__(self, index: slice) -> list[BatchItem[T]]: ...
    def __getitem__(self, index: int | slice) -> BatchItem[T] | list[BatchItem[T]]:
        return self.wait()[index]

    def __iter__(self) -> Iterator[BatchItem[T]]:
        return iter(self.wait())

    @property
    def results(self) -> list[T]:
        """Results of the items that succeeded, in input order."""
        return self.wait().results

    @property
    def errors(self) -> list[BatchItem[T]]:
        """The items that failed."""
        return self.wait().errors

    def to_dataframe(self) -> pandas.DataFrame:
        """See :meth:`BatchResults.to_dataframe`."""
        return self.wait().to_dataframe()

    def __repr__(self) -> str:
        return repr(self.wait())

    def _repr_html_(self) -> str:
        return self.wait()._repr_html_()


class AsyncBatch(Generic[T]):
    """A batch on the asyncio side: ``await`` it for its :class:`BatchResults` (input
    order), or ``async for`` over it (or :meth:`as_completed`) for the items as they finish.

    Cancelling the task that reads it stops what has not finished; :attr:`settled` then
    holds the items not handed over (awaited whole: every item, finished ones with their
    results, the others :class:`~wikisuggest.errors.Cancelled`).
    """

    def __init__(self, source: Source[T], progress: bool, desc: str) -> None:
        self._source = source
        self._progress = progress
        self._desc = desc
        self._started = False
        #: After a cancellation, the items not handed over (see the class); else ``None``.
        self.settled: BatchResults[T] | None = None

    async def _groups(
        self, finished: list[BatchItem[T]] | None
    ) -> AsyncGenerator[list[BatchItem[T]], None]:
        """Items as they complete, in the groups the native batch hands over (one step of
        an async generator per group rather than per item). On cancellation,
        :attr:`settled` holds the items not handed over yet, with ``finished`` (the items
        gathered so far, when the batch is awaited whole) and the others in input order."""
        if self._started:
            raise RuntimeError("a batch can be consumed only once")
        self._started = True
        source = self._source
        bar = Progress(self._progress, source.total, self._desc)
        native = source.start()
        try:
            for item in source.failed:
                bar.update(item)
            if source.failed:
                yield source.failed
            while True:
                source.feed(native)
                items = (await native.next_async()).items()
                if not items:
                    return
                for item in items:
                    bar.update(item)
                yield items
        except BaseException as stopped:
            # asyncio is imported here: a blocking program that never uses it does not pay
            # for its import (about 3 MB).
            import asyncio

            if not isinstance(stopped, asyncio.CancelledError):
                raise
            # The pages running on the engine finish first, waited for off the event loop.
            rest = await asyncio.shield(asyncio.to_thread(native.interrupt))
            if finished is None:
                self.settled = BatchResults(rest)
            else:
                self.settled = source.ordered([*finished, *rest])
            raise
        finally:
            native.cancel()
            bar.close()

    async def as_completed(self) -> AsyncIterator[BatchItem[T]]:
        """The items as they finish (the engine's in input order)."""
        groups = self._groups(None)
        try:
            async for group in groups:
                for item in group:
                    yield item
        finally:
            # Cancels unfinished work now, not when the inner generator is collected.
            await groups.aclose()

    def __aiter__(self) -> AsyncIterator[BatchItem[T]]:
        return self.as_completed()

    async def _gather(self) -> BatchResults[T]:
        finished: list[BatchItem[T]] = []
        groups = self._groups(finished)
        with _collector_paused():
            try:
                async for group in groups:
                    finished.extend(group)
            finally:
                await groups.aclose()
            return self._source.ordered(finished)

    def __await__(self) -> Generator[Any, None, BatchResults[T]]:
        return self._gather().__await__()
