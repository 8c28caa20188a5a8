"""From recommendation to edit: place links in wikitext (:func:`apply_links`), review them in a
notebook, and save them to a wiki through its Action API (:class:`Wiki`)."""

from __future__ import annotations

from .apply import AppliedLink, AppliedLinks, SkippedLink, SkipReason, apply_links
from .wiki import EditResult, Revision, Wiki

__all__ = [
    "AppliedLink",
    "AppliedLinks",
    "EditResult",
    "Revision",
    "SkipReason",
    "SkippedLink",
    "Wiki",
    "apply_links",
]
