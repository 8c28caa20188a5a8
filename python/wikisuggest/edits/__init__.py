"""From recommendation to edit: place links in wikitext (:func:`apply_links`), review them in a
notebook, and save them to a wiki through its Action API (:class:`Wiki`, :class:`AsyncWiki`)."""

from __future__ import annotations

from .apply import AppliedLink, AppliedLinks, SkippedLink, SkipReason, apply_links
from .titles import InvalidTitle, SiteInfo, link_title
from .wiki import AsyncWiki, EditResult, Revision, Wiki

__all__ = [
    "AppliedLink",
    "AppliedLinks",
    "AsyncWiki",
    "EditResult",
    "InvalidTitle",
    "Revision",
    "SiteInfo",
    "SkipReason",
    "SkippedLink",
    "Wiki",
    "apply_links",
    "link_title",
]
