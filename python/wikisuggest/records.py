"""Records returned by the services, as frozen dataclasses.

Each record has ``to_dict()`` (the contract's JSON shape, fields the server added included)
and ``from_dict()`` (lenient: missing optional fields become ``None``; unknown fields are kept
in ``extra``).

These classes mirror the one Rust definition of the records (``crates/wikisuggest-records``),
and the extension builds their instances itself: it fills each slot by name, bypassing
``__init__`` (``src/convert.rs``, ``src/records_json.rs``). A field added here must be added
there too; ``tests/test_native_records.py`` fails until it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

from . import _dataframes

if TYPE_CHECKING:
    import pandas
    from typing_extensions import Self


__all__ = [
    "CollectionMembership",
    "DatasetChecksums",
    "ExcludedLink",
    "Exclusion",
    "ExplainedResult",
    "LinkRecommendation",
    "LinkRecommendationSet",
    "Meta",
    "PageCollection",
    "PageCollectionGroups",
    "PageCollectionMetadata",
    "TranslationPage",
    "TranslationRecommendation",
]

_R = TypeVar("_R")
_Readers = Mapping[str, Callable[[Any], Any]]


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


def _extra_field() -> Any:
    """The ``extra`` field every record ends with: outside equality, hashing and ``repr``."""
    return field(default_factory=_no_extra, hash=False, compare=False, repr=False)


def _record_if_mapping(kind: Any) -> Callable[[Any], Any]:
    """Read a nested record where the answer holds a mapping; keep anything else as sent."""
    return lambda value: kind.from_dict(value) if isinstance(value, Mapping) else value


class _Record:
    """What the records with ``extra`` share: reading a contract answer and writing it back.

    ``_nested`` names the fields that hold other records, with how each is read."""

    __slots__ = ()
    _nested: ClassVar[_Readers] = {}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        known, extra = _split(cls, data)
        for name, read in cls._nested.items():
            if name in known:
                known[name] = read(known[name])
        return cast(Any, cls)(**known, extra=extra)  # type: ignore[no-any-return]

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)


@dataclass(frozen=True, slots=True)
class DatasetChecksums(_Record):
    """sha256 checksums of the five datasets behind a link recommendation."""

    anchors: str | None = None
    model: str | None = None
    pageids: str | None = None
    redirects: str | None = None
    w2vfiltered: str | None = None
    extra: Mapping[str, Any] = _extra_field()

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in _plain(self).items() if v is not None}


@dataclass(frozen=True, slots=True)
class Meta(_Record):
    """Response metadata: producing build, dataset checksums, format version."""

    application_version: str | None = None
    dataset_checksums: DatasetChecksums | None = None
    format_version: int | None = None
    extra: Mapping[str, Any] = _extra_field()
    _nested: ClassVar[_Readers] = {"dataset_checksums": _record_if_mapping(DatasetChecksums)}


@dataclass(frozen=True, slots=True)
class LinkRecommendation(_Record):
    """A phrase of the article (``link_text``) that should link to ``link_target``."""

    link_text: str
    link_target: str
    score: float | None = None
    wikitext_offset: int | None = None
    context_before: str | None = None
    context_after: str | None = None
    link_index: int | None = None
    match_index: int | None = None
    extra: Mapping[str, Any] = _extra_field()


@dataclass(frozen=True, slots=True)
class LinkRecommendationSet(_Record):
    """The link recommendations for one page (response of both link operations)."""

    links: tuple[LinkRecommendation, ...] = ()
    links_count: int | None = None
    meta: Meta | None = None
    page_title: str | None = None
    pageid: int | None = None
    revid: int | None = None
    extra: Mapping[str, Any] = _extra_field()
    _nested: ClassVar[_Readers] = {
        "links": lambda links: tuple(LinkRecommendation.from_dict(x) for x in links or ()),
        "meta": _record_if_mapping(Meta),
    }

    def __len__(self) -> int:
        return len(self.links)

    def __bool__(self) -> bool:
        """Always true: a page with no links is still an answer (test ``len(result)``)."""
        return True

    def __iter__(self) -> Iterator[LinkRecommendation]:
        return iter(self.links)

    def __repr__(self) -> str:
        """One line, however many links: the page and the first links' phrases and targets
        (``to_dict()`` or the links themselves show everything)."""
        shown = ", ".join(f"{link.link_text!r} → {link.link_target!r}" for link in self.links[:3])
        more = f", … {len(self.links) - 3} more" if len(self.links) > 3 else ""
        return (
            f"LinkRecommendationSet(page_title={self.page_title!r}, revid={self.revid}, "
            f"{len(self.links)} links: [{shown}{more}])"
        )

    def to_dataframe(self) -> pandas.DataFrame:
        """One row per link, with the page's title, pageid and revid (needs pandas)."""
        page = {"page_title": self.page_title, "pageid": self.pageid, "revid": self.revid}
        rows = [{**page, **link.to_dict()} for link in self.links]
        return _dataframes.dataframe(
            rows, ["page_title", "pageid", "revid", *_dataframes.LINK_COLUMNS]
        )

    def _repr_html_(self) -> str:
        from ._html import link_set_html

        return link_set_html(self)


@dataclass(frozen=True, slots=True)
class PageCollectionMetadata(_Record):
    """The page collection an item was recommended from: its name, description, end date,
    size, and (``articles_by_language_count``) how many of its articles the target has."""

    name: str
    description: str | None = None
    end_date: str | None = None
    articles_count: int | None = None
    articles_by_language_count: Mapping[str, int] | None = field(default=None, hash=False)
    extra: Mapping[str, Any] = _extra_field()


@dataclass(frozen=True, slots=True)
class TranslationRecommendation(_Record):
    """An article of the source wiki that the target wiki lacks.

    ``size`` and ``lead_section_size`` are in bytes (the latter only when ``lead_section`` was
    asked for); ``collection`` is set for articles recommended from a page collection."""

    title: str
    pageviews: int | None = None
    wikidata_id: str | None = None
    rank: int | float | None = None
    langlinks_count: int | None = None
    size: int | None = None
    lead_section_size: int | None = None
    collection: PageCollectionMetadata | None = None
    extra: Mapping[str, Any] = _extra_field()
    _nested: ClassVar[_Readers] = {"collection": _record_if_mapping(PageCollectionMetadata)}


@dataclass(frozen=True, slots=True)
class TranslationPage:
    """One answer of the translation service: its items, and where the next page starts.

    Only single-collection answers continue: ``continue_offset`` is then the offset to send
    back (``-1`` once there is nothing more) with ``continue_seed``, the seed of the order.
    The next page starts with the last item of this one again, as the service pages."""

    items: tuple[TranslationRecommendation, ...] = ()
    continue_offset: int | None = None
    continue_seed: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | Sequence[Any]) -> TranslationPage:
        """Either shape: the bare array (no continuation) or the ``recommendations`` envelope."""
        if isinstance(data, Mapping):
            items = data.get("recommendations")
            if not isinstance(items, Sequence) or isinstance(items, str):
                raise TypeError("TranslationPage.from_dict expects a 'recommendations' list")
            return cls(
                tuple(TranslationRecommendation.from_dict(x) for x in items),
                data.get("continue_offset"),
                data.get("continue_seed"),
            )
        if isinstance(data, Sequence) and not isinstance(data, str):
            return cls(tuple(TranslationRecommendation.from_dict(x) for x in data))
        raise TypeError(
            f"TranslationPage.from_dict expects a list or a mapping, got {type(data).__name__}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The envelope shape."""
        return {
            "recommendations": [item.to_dict() for item in self.items],
            "continue_offset": self.continue_offset,
            "continue_seed": self.continue_seed,
        }

    @property
    def has_more(self) -> bool:
        """Whether the service offered a next page."""
        return self.continue_offset is not None and self.continue_offset >= 0

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[TranslationRecommendation]:
        return iter(self.items)


@dataclass(frozen=True, slots=True)
class PageCollection(_Record):
    """A page collection as the service lists it."""

    name: str
    description: str | None = None
    end_date: str | None = None
    articles_count: int | None = None
    extra: Mapping[str, Any] = _extra_field()


@dataclass(frozen=True, slots=True)
class PageCollectionGroups:
    """Collections grouped by the part of their name before ``/`` (groups of two or more),
    and the others (``ungrouped``)."""

    groups: Mapping[str, tuple[PageCollection, ...]] = field(default_factory=dict, hash=False)
    ungrouped: tuple[PageCollection, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PageCollectionGroups:
        if not isinstance(data, Mapping):
            raise TypeError(
                f"PageCollectionGroups.from_dict expects a mapping, got {type(data).__name__}"
            )

        def collections(items: Any) -> tuple[PageCollection, ...]:
            return tuple(PageCollection.from_dict(x) for x in items or ())

        return cls(
            {str(k): collections(v) for k, v in data.items() if k != "ungrouped"},
            collections(data.get("ungrouped")),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: [c.to_dict() for c in v] for k, v in self.groups.items()}
        out["ungrouped"] = [c.to_dict() for c in self.ungrouped]
        return out


@dataclass(frozen=True, slots=True)
class CollectionMembership:
    """For each title or Wikidata id asked about, whether the collection holds it."""

    found: Mapping[str, bool] = field(default_factory=dict, hash=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CollectionMembership:
        if not isinstance(data, Mapping) or not all(isinstance(v, bool) for v in data.values()):
            raise TypeError("CollectionMembership.from_dict expects a mapping of booleans")
        return cls({str(k): v for k, v in data.items()})

    def to_dict(self) -> dict[str, bool]:
        return dict(self.found)

    @property
    def members(self) -> tuple[str, ...]:
        """The ids asked about that are in the collection, in the order asked."""
        return tuple(k for k, v in self.found.items() if v)

    def __contains__(self, key: object) -> bool:
        return bool(self.found.get(key)) if isinstance(key, str) else False


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A rule that applied: its name (``target``, ``class``, ``anchor``, ``duplicate``,
    ``not_shown``, ``template``, ``category``, ``too_few_links``) and the entry of the rule set
    that made it apply (the title, item or phrase as written; for a limit, the limit)."""

    rule: str
    value: str


@dataclass(frozen=True, slots=True)
class ExcludedLink:
    """A link the engine found and a rule removed (``link.link_index``: the slot it would
    have taken)."""

    link: LinkRecommendation
    rule: str
    value: str


@dataclass(frozen=True, slots=True)
class ExplainedResult:
    """A page's result and what the rules removed from it."""

    result: LinkRecommendationSet
    excluded: tuple[ExcludedLink, ...]
    #: The rule that removed the whole page (template, category, too few links), if any.
    page_excluded: Exclusion | None = None
