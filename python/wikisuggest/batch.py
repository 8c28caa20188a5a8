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
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from . import _args, _dataframes
from ._progress import Progress
from .errors import Cancelled, InvalidParameter, WikisuggestError

if TYPE_CHECKING:
    import pandas

__all__ = ["AsyncBatch", "BatchInterrupted", "BatchItem", "BatchResults"]

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


def _slot_setter(name: str) -> Callable[[Any, Any], None]:
    setter: Callable[[Any, Any], None] = getattr(BatchItem, name).__set__
    return setter


_set_index, _set_input, _set_result, _set_error = map(
    _slot_setter, ("index", "input", "result", "error")
)


def make_item(
    index: int, spec: Any, result: T | None = None, error: WikisuggestError | None = None
) -> BatchItem[T]:
    """``BatchItem(index, spec, result=..., error=...)``, built without the frozen dataclass's
    ``__init__``: that goes through ``object.__setattr__`` once per field, which measured as a
    sizeable share of a batch's CPU per item. The slots' own setters fill the same fields."""
    item: BatchItem[T] = object.__new__(BatchItem)
    _set_index(item, index)
    _set_input(item, spec)
    _set_result(item, result)
    _set_error(item, error)
    return item


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


class NativeGroup(Protocol):
    """Items the native batch finished together, handed to the asyncio side as they are."""

    def items(self, origin: Plan[T]) -> list[BatchItem[T]]: ...


class NativeBatch(Protocol):
    """What the drivers below need of a running native batch (``wikisuggest._native``)."""

    def next(self, origin: Plan[T]) -> list[BatchItem[T]]: ...

    def next_async(self) -> Awaitable[NativeGroup]: ...

    def cancel(self) -> None: ...


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
    """Inputs split into those sent to the native batch and those already failed. The native
    batch builds each finished item from ``inputs`` and ``native_index`` (the input of each
    request it was given)."""

    def __init__(
        self, inputs: Iterable[Any], to_native: Callable[[Any], dict[str, Any]], name: str
    ) -> None:
        _args.not_text(name, inputs)
        self.inputs = list(inputs)
        self.native_index: list[int] = []
        self.items: list[dict[str, Any]] = []
        self.failed: list[BatchItem[T]] = []
        for index, spec in enumerate(self.inputs):
            try:
                self.items.append(to_native(spec))
                self.native_index.append(index)
            except InvalidParameter as err:
                self.failed.append(BatchItem(index, spec, error=err))

    def ordered(self, finished: Iterable[BatchItem[T]]) -> BatchResults[T]:
        done = list(finished)
        if len(done) == len(self.inputs):  # every item finished: only their order is left
            done.sort(key=_index_of)
            return BatchResults(done)
        by_index = {item.index: item for item in done}
        return BatchResults(
            by_index.get(i)
            or BatchItem(
                i, spec, error=Cancelled("the batch was cancelled before this item finished")
            )
            for i, spec in enumerate(self.inputs)
        )


def run_sync_iter(
    plan: Plan[T], start: Callable[[list[dict[str, Any]]], NativeBatch], progress: bool, desc: str
) -> Generator[BatchItem[T], None, None]:
    """Items as they complete. Closing the generator (or Ctrl-C) cancels unfinished work."""
    bar = Progress(progress, len(plan.inputs), desc)
    native = start(plan.items)
    try:
        for item in plan.failed:
            bar.update(item)
            yield item
        while group := native.next(plan):
            for item in group:
                bar.update(item)
                yield item
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


def run_sync(
    plan: Plan[T], start: Callable[[list[dict[str, Any]]], NativeBatch], progress: bool, desc: str
) -> BatchResults[T]:
    finished: list[BatchItem[T]] = []
    iterator = run_sync_iter(plan, start, progress, desc)
    with _collector_paused():
        try:
            for item in iterator:
                finished.append(item)
        except KeyboardInterrupt:
            iterator.close()
            raise BatchInterrupted(plan.ordered(finished)) from None
        return plan.ordered(finished)


class AsyncBatch(Generic[T]):
    """A running batch on the asyncio side: ``await`` it for results in input order, or
    ``async for`` over it for items as they complete. Cancelling cancels unfinished items."""

    def __init__(
        self,
        plan: Plan[T],
        start: Callable[[list[dict[str, Any]]], NativeBatch],
        progress: bool,
        desc: str,
    ) -> None:
        self._plan = plan
        self._start = start
        self._progress = progress
        self._desc = desc
        self._started = False

    async def _groups(self) -> AsyncGenerator[list[BatchItem[T]], None]:
        """Items as they complete, in the groups the native batch hands over (one step of
        an async generator per group rather than per item)."""
        if self._started:
            raise RuntimeError("a batch can be consumed only once")
        self._started = True
        bar = Progress(self._progress, len(self._plan.inputs), self._desc)
        native = self._start(self._plan.items)
        try:
            for item in self._plan.failed:
                bar.update(item)
            if self._plan.failed:
                yield self._plan.failed
            while items := (await native.next_async()).items(self._plan):
                for item in items:
                    bar.update(item)
                yield items
        finally:
            native.cancel()
            bar.close()

    async def _items(self) -> AsyncIterator[BatchItem[T]]:
        groups = self._groups()
        try:
            async for group in groups:
                for item in group:
                    yield item
        finally:
            # Cancels unfinished work now, not when the inner generator is collected.
            await groups.aclose()

    def __aiter__(self) -> AsyncIterator[BatchItem[T]]:
        return self._items()

    async def _gather(self) -> BatchResults[T]:
        finished: list[BatchItem[T]] = []
        groups = self._groups()
        with _collector_paused():
            try:
                async for group in groups:
                    finished.extend(group)
            finally:
                await groups.aclose()
            return self._plan.ordered(finished)

    def __await__(self) -> Generator[Any, None, BatchResults[T]]:
        return self._gather().__await__()


def start_batch(
    plan: Plan[T],
    start: Callable[[list[dict[str, Any]]], NativeBatch],
    progress: bool,
    desc: str,
    as_completed: bool,
) -> BatchResults[T] | Iterator[BatchItem[T]]:
    """A blocking batch: its items in input order, or an iterator of them as they finish."""
    if as_completed:
        return run_sync_iter(plan, start, progress, desc)
    return run_sync(plan, start, progress, desc)


def start_async_batch(
    plan: Plan[T],
    start: Callable[[list[dict[str, Any]]], NativeBatch],
    progress: bool,
    desc: str,
    as_completed: bool,
) -> AsyncBatch[T] | AsyncIterator[BatchItem[T]]:
    """An asyncio batch: awaitable for items in input order, or (``as_completed``) an async
    iterator of them as they finish (an :class:`AsyncBatch` can also be iterated)."""
    batch = AsyncBatch(plan, start, progress, desc)
    return aiter(batch) if as_completed else batch
