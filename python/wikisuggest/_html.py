"""HTML views of recommendations for notebooks (the records' ``_repr_html_``): each phrase
highlighted in its text.

Every piece of text that comes from a page or a service (wikitext, titles, contexts) is
escaped: a page is untrusted input, and nothing in it may become markup or script in the
viewer. Styles are inline so that a view changes nothing else on the notebook's page.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

__all__ = [
    "HIGHLIGHT",
    "SKIPPED",
    "WINDOW",
    "batch_results_html",
    "caption",
    "escape",
    "link_set_html",
    "score",
    "snippet",
    "table",
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


def escape(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _mark(phrase: str, colour: str) -> str:
    return (
        f'<mark style="background:{colour};color:#000;padding:0 1px;'
        f'font-weight:bold">{escape(phrase)}</mark>'
    )


def snippet(before: str, phrase: str, after: str, colour: str = HIGHLIGHT) -> str:
    return f'<span style="{_TEXT}">…{escape(before)}{_mark(phrase, colour)}{escape(after)}…</span>'


def score(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def table(head: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """Rows of already escaped cells under escaped headings."""
    out = [f'<table style="{_TABLE}"><thead><tr>']
    out += [f'<th style="{_CELL}">{escape(h)}</th>' for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f'<td style="{_CELL}">{cell}</td>' for cell in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def caption(title: str | None, revid: int | None, summary: str) -> str:
    name = "(untitled page)" if title is None else title
    rev = "" if revid is None else f" · revision {escape(revid)}"
    style = "font:bold 14px sans-serif;margin-top:6px"
    return f'<div style="{style}">{escape(name)}{rev} · {summary}</div>'


def _link_row(link: Any) -> list[str]:
    return [
        escape(link.link_index),
        snippet(link.context_before or "", link.link_text, link.context_after or ""),
        escape(link.link_target),
        escape(score(link.score)),
        escape(link.wikitext_offset),
    ]


def link_set_html(result: Any) -> str:
    """The suggestions of one page: the phrase in the context the service returned, its
    target, score and offset."""
    summary = f"{len(result.links)} suggested link{'' if len(result.links) == 1 else 's'}"
    head = ["#", "text", "target", "score", "offset"]
    body = table(head, (_link_row(link) for link in result.links)) if result.links else ""
    return f"<div>{caption(result.page_title, result.revid, summary)}{body}</div>"


def batch_results_html(items: Iterable[Any]) -> str:
    """A batch: each page's view in input order, a failed input with its error."""
    out = ["<div>"]
    for item in items:
        if item.error is not None:
            out.append(
                f'<div style="font:13px sans-serif;color:#b00020;margin-top:6px">'
                f"{escape(item.input)}: {escape(type(item.error).__name__)}: "
                f"{escape(item.error)}</div>"
            )
        elif hasattr(item.result, "_repr_html_"):
            out.append(item.result._repr_html_())
        else:
            out.append(f"<pre>{escape(item.result)}</pre>")
    out.append("</div>")
    return "".join(out)
