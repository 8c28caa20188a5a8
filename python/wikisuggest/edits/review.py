"""The HTML view of links applied to a page (:class:`~wikisuggest.AppliedLinks`), for
notebooks: each placed link in a window of the original text, each skipped one with its reason.
Everything from the page is escaped (see :mod:`wikisuggest._html`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._html import SKIPPED, WINDOW, caption, escape, score, snippet, table

if TYPE_CHECKING:
    from .apply import AppliedLinks

__all__ = ["applied_links_html"]


def applied_links_html(result: AppliedLinks) -> str:
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
                escape(item.link.link_target),
                escape(score(item.link.score)),
                f"<code>{escape(item.markup)}</code>",
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
            escape(item.link.link_target),
            escape(score(item.link.score)),
            f"<b>{escape(item.reason.value)}</b>: {escape(item.detail)}",
        ]
        for item in result.skipped
    ]
    summary = f"{len(result.applied)} applied, {len(result.skipped)} skipped"
    out = [f"<div>{caption(result.page_title, result.revid, summary)}"]
    if rows:
        out.append(table(["#", "text", "target", "score", "wikitext"], rows))
    if skipped:
        out.append(table(["#", "text", "target", "score", "skipped because"], skipped))
    out.append("</div>")
    return "".join(out)
