"""Records returned by the services, as frozen dataclasses.

Each record has ``to_dict()`` (the contract's JSON shape, fields the server added included)
and ``from_dict()`` (lenient: missing optional fields become ``None``; unknown fields are kept
in ``extra``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from . import _frames

if TYPE_CHECKING:
    import pandas

__all__ = [
    "DatasetChecksums",
    "LinkRecommendation",
    "LinkRecommendationSet",
    "Meta",
    "TranslationRecommendation",
]

_R = TypeVar("_R")


class _NoExtra(dict[str, Any]):
    """The ``extra`` of a record without extra fields: empty, read-only, hashable, shared.

    A ``dict`` (refusing every change) rather than another mapping type, so that
    ``dataclasses.asdict(record)`` gives plain JSON-serialisable data.
    """

    __slots__ = ()

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a record's extra fields are read-only")

    __setitem__ = __delitem__ = update = setdefault = _refuse
    pop = popitem = clear = __ior__ = _refuse  # type: ignore[assignment]

    def __hash__(self) -> int:  # type: ignore[override]
        return 0

    def __copy__(self) -> _NoExtra:
        return self

    def __deepcopy__(self, memo: object) -> _NoExtra:
        return self


EMPTY_EXTRA: Mapping[str, Any] = _NoExtra()


def _no_extra() -> Mapping[str, Any]:
    # A factory, not a default value: dataclasses refuse a dict instance as a default.
    return EMPTY_EXTRA


def _split(cls: type[Any], data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Separate the declared fields of ``cls`` from the extra keys of ``data``."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__}.from_dict expects a mapping, got {type(data).__name__}")
    names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
    known = {k: v for k, v in data.items() if k in names}
    extra = {k: v for k, v in data.items() if k not in names}
    return known, (extra or EMPTY_EXTRA)  # type: ignore[return-value]


def _is_record(value: Any) -> bool:
    """Whether ``value`` is a record instance (which converts itself with ``to_dict``)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _plain(record: Any) -> dict[str, Any]:
    """Fields of ``record`` (``extra`` merged back in), records converted recursively."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(record):
        if f.name == "extra":
            continue
        value = getattr(record, f.name)
        if _is_record(value):
            value = value.to_dict()
        elif isinstance(value, tuple):
            value = [v.to_dict() if _is_record(v) else v for v in value]
        out[f.name] = value
    for key, value in record.extra.items():
        out.setdefault(key, value)
    return out


@dataclass(frozen=True, slots=True)
class DatasetChecksums:
    """sha256 checksums of the five datasets behind a link recommendation."""

    anchors: str | None = None
    model: str | None = None
    pageids: str | None = None
    redirects: str | None = None
    w2vfiltered: str | None = None
    extra: Mapping[str, Any] = field(
        default_factory=_no_extra, hash=False, compare=False, repr=False
    )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DatasetChecksums:
        known, extra = _split(cls, data)
        return cls(**known, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in _plain(self).items() if v is not None}


@dataclass(frozen=True, slots=True)
class Meta:
    """Response metadata: producing build, dataset checksums, format version."""

    application_version: str | None = None
    dataset_checksums: DatasetChecksums | None = None
    format_version: int | None = None
    extra: Mapping[str, Any] = field(
        default_factory=_no_extra, hash=False, compare=False, repr=False
    )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Meta:
        known, extra = _split(cls, data)
        checksums = known.get("dataset_checksums")
        if isinstance(checksums, Mapping):
            known["dataset_checksums"] = DatasetChecksums.from_dict(checksums)
        return cls(**known, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class LinkRecommendation:
    """A phrase of the article (``link_text``) that should link to ``link_target``."""

    link_text: str
    link_target: str
    score: float | None = None
    wikitext_offset: int | None = None
    context_before: str | None = None
    context_after: str | None = None
    link_index: int | None = None
    match_index: int | None = None
    extra: Mapping[str, Any] = field(
        default_factory=_no_extra, hash=False, compare=False, repr=False
    )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LinkRecommendation:
        known, extra = _split(cls, data)
        return cls(**known, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class LinkRecommendationSet:
    """The link recommendations for one page (response of both link operations)."""

    links: tuple[LinkRecommendation, ...] = ()
    links_count: int | None = None
    meta: Meta | None = None
    page_title: str | None = None
    pageid: int | None = None
    revid: int | None = None
    extra: Mapping[str, Any] = field(
        default_factory=_no_extra, hash=False, compare=False, repr=False
    )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LinkRecommendationSet:
        known, extra = _split(cls, data)
        known["links"] = tuple(LinkRecommendation.from_dict(x) for x in known.get("links") or ())
        meta = known.get("meta")
        if isinstance(meta, Mapping):
            known["meta"] = Meta.from_dict(meta)
        return cls(**known, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)

    def __len__(self) -> int:
        return len(self.links)

    def __bool__(self) -> bool:
        """Always true: a page with no links is still an answer (test ``len(result)``)."""
        return True

    def __iter__(self) -> Iterator[LinkRecommendation]:
        return iter(self.links)

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per link, with the page's title, pageid and revid (needs pandas)."""
        page = {"page_title": self.page_title, "pageid": self.pageid, "revid": self.revid}
        rows = [{**page, **link.to_dict()} for link in self.links]
        return _frames.dataframe(rows, ["page_title", "pageid", "revid", *_frames.LINK_COLUMNS])


@dataclass(frozen=True, slots=True)
class TranslationRecommendation:
    """An article of the source wiki that the target wiki lacks."""

    title: str
    pageviews: int | None = None
    wikidata_id: str | None = None
    rank: int | float | None = None
    langlinks_count: int | None = None
    extra: Mapping[str, Any] = field(
        default_factory=_no_extra, hash=False, compare=False, repr=False
    )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TranslationRecommendation:
        known, extra = _split(cls, data)
        return cls(**known, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)
