"""A page given to the engine: :class:`Page`, or a tuple in its order, or a dict with its
fields; checked and turned into the native page tuple ``(wikitext, title, pageid, revid,
language)`` here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .. import _args
from .._args import NativePage
from ..errors import InvalidParameter, WikitextError

__all__ = ["Page", "PageSpec", "native_page", "single_page"]

_PAGE_FIELDS = frozenset({"wikitext", "page_title", "title", "pageid", "revid", "language_code"})


class Page(NamedTuple):
    """A page of :meth:`LinkEngine.recommend_many`, in the order :meth:`LinkEngine.recommend`
    takes its arguments: ``Page(wikitext, page_title)`` or with keywords. A dict with these
    keys (``title`` for ``page_title`` too) or a plain tuple in this order works the same."""

    wikitext: str
    page_title: str
    pageid: int | None = None
    revid: int | None = None
    language_code: str | None = None

    def __repr__(self) -> str:
        # Short: the wikitext of an article runs to tens of thousands of characters.
        size = len(self.wikitext) if isinstance(self.wikitext, str) else "?"
        return f"Page(page_title={self.page_title!r}, wikitext=<{size} characters>)"


#: A page of a batch: a :class:`Page`, a tuple in its order, or a dict with its fields.
PageSpec = Page | tuple[Any, ...] | Mapping[str, Any]


def single_page(
    wikitext: Any,
    page_title: Any,
    pageid: Any = None,
    revid: Any = None,
    language_code: Any = None,
) -> NativePage:
    """A page as the native tuple ``(wikitext, title, pageid, revid, language)``, its values
    type-checked (the engine checks the title by MediaWiki's rules, as every front end does:
    a title that breaks them is most often the page's text in the title's place)."""
    if not isinstance(wikitext, str):
        raise WikitextError(f"wikitext must be a string, got {type(wikitext).__name__}")
    return (
        _args.encodable("wikitext", wikitext),
        _args.text("page_title", page_title),
        _args.optional_integer("pageid", pageid),
        _args.optional_integer("revid", revid),
        _args.optional_text("language_code", language_code),
    )


def native_page(spec: Any) -> NativePage:
    """A page of a batch: a :class:`Page` (or a tuple in its order) or a dict."""
    if isinstance(spec, Mapping):
        unknown = set(spec) - _PAGE_FIELDS
        if unknown:
            raise InvalidParameter(
                f"unknown page fields: {', '.join(sorted(map(str, unknown)))}", parameter="pages"
            )
        return single_page(
            spec.get("wikitext"),
            spec.get("page_title", spec.get("title")),
            spec.get("pageid"),
            spec.get("revid"),
            spec.get("language_code"),
        )
    if isinstance(spec, (tuple, list)) and 2 <= len(spec) <= 5:
        return single_page(*spec)
    raise InvalidParameter(
        "a page must be a Page(wikitext, page_title, ...), a tuple in that order or a dict, "
        f"got {type(spec).__name__}",
        parameter="pages",
    )
