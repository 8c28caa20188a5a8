"""HTML views of recommendations for notebooks: each phrase highlighted in its text.

Every piece of text that comes from a page or a service (wikitext, titles, contexts) is
escaped: a page is untrusted input, and nothing in it may become markup or script in the
viewer. Styles are inline so that a view changes nothing else on the notebook's page.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .apply import AppliedLinks
    from .models import LinkRecommendation, LinkRecommendationSet

__all__ = [
    "HIGHLIGHT",
    "applied_links_html",
    "batch_results_html",
    "link_set_html",
]

#: Background of a highlighted phrase (an applied or suggested link).
HIGHLIGHT = "#ffd54f"
#: Background of a phrase that was skipped.
SKIPPED = "#cfd8dc"
#: How much text of the page is shown on each side of a phrase, in code points.
WINDOW = 60

_TABLE = "border-collapse:collapse;font:13px/1.4 sans-serif;margin:4px 0"
_CELL = "border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top"
_TEXT = "white-space:pre-wrap;font-family:monospace;color:#333"


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _mark(phrase: str, colour: str) -> str:
    return (
        f'<mark style="background:{colour};color:#000;padding:0 1px;'
        f'font-weight:bold">{_e(phrase)}</mark>'
    )


def _snippet(before: str, phrase: str, after: str, colour: str = HIGHLIGHT) -> str:
    return f'<span style="{_TEXT}">…{_e(before)}{_mark(phrase, colour)}{_e(after)}…</span>'


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _table(head: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """Rows of already escaped cells under escaped headings."""
    out = [f'<table style="{_TABLE}"><thead><tr>']
    out += [f'<th style="{_CELL}">{_e(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f'<td style="{_CELL}">{cell}</td>' for cell in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _caption(title: str | None, revid: int | None, summary: str) -> str:
    name = "(untitled page)" if title is None else title
    rev = "" if revid is None else f" · revision {_e(revid)}"
    return (
        f'<div style="font:bold 14px sans-serif;margin-top:6px">{_e(name)}{rev} · {summary}</div>'
    )


def _link_row(link: LinkRecommendation) -> list[str]:
    return [
        _e(link.link_index),
        _snippet(link.context_before or "", link.link_text, link.context_after or ""),
        _e(link.link_target),
        _e(_score(link.score)),
        _e(link.wikitext_offset),
    ]


def link_set_html(result: LinkRecommendationSet) -> str:
    """The suggestions of one page: the phrase in the context the service returned, its
    target, score and offset."""
    summary = f"{len(result.links)} suggested link{'' if len(result.links) == 1 else 's'}"
    head = ["#", "text", "target", "score", "offset"]
    body = _table(head, (_link_row(link) for link in result.links)) if result.links else ""
    return f"<div>{_caption(result.page_title, result.revid, summary)}{body}</div>"


def applied_links_html(result: AppliedLinks) -> str:
    """The links placed in a page, each in a window of the original text, and the skipped
    ones with their reason."""
    text = result.original
    rows = []
    for item in sorted(result.applied, key=lambda a: a.offset):
        end = item.offset + len(item.link.link_text)
        rows.append(
            [
                _e(item.link.link_index),
                _snippet(
                    text[max(0, item.offset - WINDOW) : item.offset],
                    item.link.link_text,
                    text[end : end + WINDOW],
                ),
                _e(item.link.link_target),
                _e(_score(item.link.score)),
                f"<code>{_e(item.markup)}</code>",
            ]
        )
    skipped = [
        [
            _e(item.link.link_index),
            _snippet(
                item.link.context_before or "",
                item.link.link_text,
                item.link.context_after or "",
                SKIPPED,
            ),
            _e(item.link.link_target),
            _e(_score(item.link.score)),
            f"<b>{_e(item.reason.value)}</b>: {_e(item.detail)}",
        ]
        for item in result.skipped
    ]
    summary = f"{len(result.applied)} applied, {len(result.skipped)} skipped"
    out = [f"<div>{_caption(result.page_title, result.revid, summary)}"]
    if rows:
        out.append(_table(["#", "text", "target", "score", "wikitext"], rows))
    if skipped:
        out.append(_table(["#", "text", "target", "score", "skipped because"], skipped))
    out.append("</div>")
    return "".join(out)


def batch_results_html(items: Iterable[Any]) -> str:
    """A batch: each page's view in input order, a failed input with its error."""
    out = ["<div>"]
    for item in items:
        if item.error is not None:
            out.append(
                f'<div style="font:13px sans-serif;color:#b00020;margin-top:6px">'
                f"{_e(item.input)}: {_e(type(item.error).__name__)}: {_e(item.error)}</div>"
            )
        elif hasattr(item.result, "_repr_html_"):
            out.append(item.result._repr_html_())
        else:
            out.append(f"<pre>{_e(item.result)}</pre>")
    out.append("</div>")
    return "".join(out)
