"""The HTML view of links applied to a page (:class:`~wikisuggest.AppliedLinks`), for
notebooks: each placed link in a window of the original text, with the article it will link
to as MediaWiki reads the markup, and each skipped one with its reason. Everything from the
page is escaped (see :mod:`wikisuggest._html`), and targets are shown with their invisible
characters spelled out, so what the table shows is what will be linked.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Protocol

from .._html import SKIPPED, WINDOW, caption, escape, score, snippet, table
from ..records import LinkRecommendation

__all__ = ["applied_links_html", "visible"]


# What the view reads of :class:`~wikisuggest.AppliedLinks` and its items (the records are
# made where links are applied, and their ``to_html`` calls this view).
class _Placed(Protocol):
    @property
    def link(self) -> LinkRecommendation: ...
    @property
    def offset(self) -> int: ...
    @property
    def markup(self) -> str: ...
    @property
    def title(self) -> str: ...


class _Skipped(Protocol):
    @property
    def link(self) -> LinkRecommendation: ...
    @property
    def reason(self) -> Enum: ...
    @property
    def detail(self) -> str: ...


class _Applied(Protocol):
    @property
    def original(self) -> str: ...
    @property
    def applied(self) -> Sequence[_Placed]: ...
    @property
    def skipped(self) -> Sequence[_Skipped]: ...
    @property
    def page_title(self) -> str | None: ...
    @property
    def revid(self) -> int | None: ...


def visible(text: object) -> str:
    """``text`` with every character that is not printable (controls, bidirectional
    overrides, other invisible format characters, unusual spaces) written as ``\\uXXXX``."""
    value = "" if text is None else str(text)
    return "".join(ch if ch.isprintable() or ch == " " else f"\\u{ord(ch):04x}" for ch in value)


def applied_links_html(result: _Applied) -> str:
    """The links placed in a page, each in a window of the original text, and the skipped
    ones with their reason."""
    text = result.original
    rows = []
    for item in sorted(result.applied, key=lambda a: a.offset):
        end = item.offset + len(item.link.link_text)
        rows.append(
            [
                escape(item.link.link_index),
                snippet(
                    text[max(0, item.offset - WINDOW) : item.offset],
                    item.link.link_text,
                    text[end : end + WINDOW],
                ),
                escape(item.title),
                escape(score(item.link.score)),
                f"<code>{escape(visible(item.markup))}</code>",
            ]
        )
    skipped = [
        [
            escape(item.link.link_index),
            snippet(
                item.link.context_before or "",
                item.link.link_text,
                item.link.context_after or "",
                SKIPPED,
            ),
            escape(visible(item.link.link_target)),
            escape(score(item.link.score)),
            f"<b>{escape(item.reason.value)}</b>: {escape(item.detail)}",
        ]
        for item in result.skipped
    ]
    summary = f"{len(result.applied)} applied, {len(result.skipped)} skipped"
    out = [f"<div>{caption(result.page_title, result.revid, summary)}"]
    if rows:
        out.append(table(["#", "text", "links to", "score", "wikitext"], rows))
    if skipped:
        out.append(table(["#", "text", "target", "score", "skipped because"], skipped))
    out.append("</div>")
    return "".join(out)
