"""Argument checks shared by the public classes.

The native layer validates ranges; here we make sure each value has a type that can be
converted, so that a wrong type is a clear ``InvalidParameter`` rather than a ``TypeError``
from deep inside the extension.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from .errors import InvalidParameter

if TYPE_CHECKING:
    from typing_extensions import NotRequired


# The dicts that cross into the extension, field for field as the binding extracts them (its
# `#[pyo3(from_item_all)]` structs): a key missing or misspelt is a type error here.


#: A page of the engine: ``(wikitext, page_title, pageid, revid, language_code)``, the order
#: ``LinkEngine.recommend`` takes them (``src/engine.rs`` ``PageArgs``).
NativePage = tuple[str, str, int | None, int | None, str | None]


class LinkArgs(TypedDict):
    """One link request (``src/client.rs`` ``LinkArgs``): the GET form, or the POST form
    with ``wikitext``, ``revid`` and ``pageid``."""

    project: str
    domain: str
    page_title: str
    language_code: str | None
    threshold: float
    sections_to_exclude: list[str]
    max_recommendations: int
    revision: NotRequired[int | None]
    wikitext: NotRequired[str]
    revid: NotRequired[int]
    pageid: NotRequired[int]


class TranslationFilters(TypedDict, total=False):
    """The translation options that cross into the extension as the caller gives them
    (type-checked, not converted): the keyword arguments' ``TranslationOptions`` and the
    boundary's ``TranslationArgs`` both take them from here."""

    collections: bool
    featured_collection: str | None
    min_size: int | None
    max_size: int | None
    lead_section: bool
    continue_offset: int | None
    continue_seed: int | None


class TranslationArgs(TranslationFilters):
    """One translation request (``src/client.rs`` ``TranslationArgs``; ``translation_args``
    fills every key, the inherited ones included)."""

    source: str
    target: str
    count: int
    seed: list[str]
    topic: list[str]
    include_pageviews: bool
    search_algorithm: str
    rank_method: str
    country: list[str]


class CodeGrantArgs(TypedDict):
    """The authorization-code grant (``src/client.rs`` ``CodeGrantArgs``)."""

    code: str
    client_id: str
    client_secret: str | None
    code_verifier: str | None
    redirect_uri: str | None


class MembershipArgs(TypedDict):
    """A page-collection-membership request (``src/client.rs`` ``MembershipArgs``)."""

    collection: str
    qids: list[str] | None
    titles: list[str] | None
    language: str | None


class ManagerArgs(TypedDict):
    """A renewing token manager's options (``src/oauth.rs`` ``ManagerArgs``)."""

    auth_url: str | None
    user_agent: str | None
    leeway: float
    store_path: str | None
    store_load: Callable[[], Any] | None
    store_save: Callable[[Any], Any] | None


class EngineOptions(TypedDict):
    """The options shared by the pages of an engine call (``src/engine.rs`` ``OptionArgs``):
    :class:`~wikisuggest.engine.PassOptions` type-checked, over their defaults."""

    language_code: str | None
    threshold: float
    max_recommendations: int
    sections_to_exclude: list[str]
    time_budget: float | None
    #: A ``NativeLinkRules`` (typed loosely: this module sits below the extension).
    rules: Any


def text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidParameter(
            f"{name} must be a string, got {type(value).__name__}", parameter=name
        )
    return encodable(name, value)


def encodable(name: str, value: str) -> str:
    """``value``, if it can be sent as UTF-8: a lone surrogate (e.g. from a file decoded with
    ``surrogateescape``) is refused here, as this one argument's error, instead of failing
    the conversion of a whole call or batch."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as err:
            raise InvalidParameter(
                f"{name} is not valid Unicode text: a lone surrogate at position {err.start}",
                parameter=name,
            ) from None
    return value


def optional_text(name: str, value: Any) -> str | None:
    return None if value is None else text(name, value)


def integer(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidParameter(f"{name} must be an integer, got {value!r}", parameter=name)
    if not -(2**63) <= value < 2**63:
        raise InvalidParameter(f"{name} is out of range: {value}", parameter=name)
    return value


def optional_integer(name: str, value: Any) -> int | None:
    return None if value is None else integer(name, value)


def number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidParameter(f"{name} must be a number, got {value!r}", parameter=name)
    return float(value)


def optional_number(name: str, value: Any) -> float | None:
    return None if value is None else number(name, value)


def seconds(name: str, value: Any) -> float:
    """A number of seconds, as a float (its range is checked natively, where it becomes a
    duration)."""
    return number(name, value)


def retries(value: Any) -> int:
    """A number of retries: 0 to 100."""
    checked = integer("max_retries", value)
    if not 0 <= checked <= 100:
        raise InvalidParameter(
            f"max_retries must be between 0 and 100, got {checked}", parameter="max_retries"
        )
    return checked


def text_list(name: str, value: Any) -> list[str]:
    """``None`` → ``[]``; a string → ``[string]``; any other iterable of strings → list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [encodable(name, value)]
    if not isinstance(value, Iterable) or isinstance(value, (bytes, dict)):
        raise InvalidParameter(
            f"{name} must be a string or a list of strings, got {type(value).__name__}",
            parameter=name,
        )
    items = list(value)
    for item in items:
        if not isinstance(item, str):
            raise InvalidParameter(
                f"{name} must contain only strings, got {type(item).__name__}", parameter=name
            )
        encodable(name, item)
    return items


def string_list(name: str, value: Any) -> list[str]:
    """:func:`text_list` where a list is meant: a bare string is refused (it would otherwise
    be one entry, or, read letter by letter, one entry per letter)."""
    if isinstance(value, str):
        raise InvalidParameter(
            f"{name} must be a list of strings, not a string: write {name}=[{value!r}]",
            parameter=name,
        )
    return text_list(name, value)


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidParameter(f"{name} must be True or False, got {value!r}", parameter=name)
    return value


def user_agent(value: Any) -> str | None:
    """Where a User-Agent comes from, for every caller: the explicit argument (a string), else
    ``WIKISUGGEST_USER_AGENT``, else ``None``, which each caller answers in its own way (the
    clients refuse to send without one, dataset downloads send wikisuggest's own). The native
    layer checks its form."""
    if value is None:
        value = os.environ.get("WIKISUGGEST_USER_AGENT") or None
        if value is None:
            return None
    return text("user_agent", value)


def link_options(
    project: Any,
    domain: Any,
    page_title: Any,
    language_code: Any,
    threshold: Any,
    sections_to_exclude: Any,
    max_recommendations: Any,
) -> LinkArgs:
    """The options dict of one link request, each value type-checked (ranges: native)."""
    return {
        "project": text("project", project),
        "domain": text("domain", domain),
        "page_title": text("page_title", page_title),
        "language_code": optional_text("language_code", language_code),
        "threshold": number("threshold", threshold),
        "sections_to_exclude": text_list("sections_to_exclude", sections_to_exclude),
        "max_recommendations": integer("max_recommendations", max_recommendations),
    }


def translation_options(
    source: Any,
    target: Any,
    count: Any,
    seed: Any,
    topic: Any,
    include_pageviews: Any,
    search_algorithm: Any,
    rank_method: Any,
    country: Any = None,
    collections: Any = False,
    featured_collection: Any = None,
    min_size: Any = None,
    max_size: Any = None,
    lead_section: Any = False,
    continue_offset: Any = None,
    continue_seed: Any = None,
) -> TranslationArgs:
    """The options dict of one translation request, each value type-checked (ranges and
    combinations are checked by the core before sending)."""
    return {
        "source": text("source", source),
        "target": text("target", target),
        "count": integer("count", count),
        "seed": text_list("seed", seed),
        "topic": text_list("topic", topic),
        "include_pageviews": flag("include_pageviews", include_pageviews),
        "search_algorithm": text("search_algorithm", search_algorithm),
        "rank_method": text("rank_method", rank_method),
        "country": text_list("country", country),
        "collections": flag("collections", collections),
        "featured_collection": optional_text("featured_collection", featured_collection),
        "min_size": optional_integer("min_size", min_size),
        "max_size": optional_integer("max_size", max_size),
        "lead_section": flag("lead_section", lead_section),
        "continue_offset": optional_integer("continue_offset", continue_offset),
        "continue_seed": optional_integer("continue_seed", continue_seed),
    }


def code_grant(
    code: Any, client_id: Any, client_secret: Any, code_verifier: Any, redirect_uri: Any
) -> CodeGrantArgs:
    """The authorization-code grant's arguments, each type-checked."""
    return {
        "code": text("code", code),
        "client_id": text("client_id", client_id),
        "client_secret": optional_text("client_secret", client_secret),
        "code_verifier": optional_text("code_verifier", code_verifier),
        "redirect_uri": optional_text("redirect_uri", redirect_uri),
    }


def with_defaults(defaults: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` keyword arguments over ``defaults``, the one place an operation's defaults
    are written; a name ``defaults`` does not know is refused, as Python refuses an unknown
    keyword argument, but as :class:`InvalidParameter`."""
    unknown = set(given) - set(defaults)
    if unknown:
        raise InvalidParameter(
            f"unknown arguments: {', '.join(sorted(unknown))}", parameter=min(unknown)
        )
    return {**defaults, **given}


def not_text(name: str, value: Any) -> None:
    """Refuse a string (or bytes, or a mapping) where an iterable of items is expected:
    iterating it would make one item per character (or key)."""
    if isinstance(value, (str, bytes, Mapping)):
        raise InvalidParameter(
            f"{name} must be an iterable of items (e.g. a list), not a single "
            f"{type(value).__name__}",
            parameter=name,
        )
