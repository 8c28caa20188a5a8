"""What a change of never-link rules would do, before anyone is shown its effect.

>>> from wikisuggest.engine.preview import preview_rules
>>> report = preview_rules("enwiki-pages-articles.xml.bz2", engine, new_rules,
...                        rules_before=old_rules, sample=2000)  # doctest: +SKIP
>>> print(report.format_table())  # doctest: +SKIP

The exact engine runs over the pages twice, under the rules before (production's output when
there are none) and after. Every link that differs is reported with the rule that made the
difference: the entry that removed it (a target, class, phrase, duplicate, a page template or
category, a limit), or why it appeared (a slot freed by a removal, a rule that no longer
applies). Pages that lose their last suggestion, and pages that gain their first, are listed:
an article that loses every suggestion leaves the task pool.

The comparison is computed in the extension, where the pages are read: a dump's articles
never become Python objects, and only the links that differ come back.
"""

from __future__ import annotations

import html
import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .. import _args
from .._native import LINK_DEFAULTS, rules_preview
from ..records import LinkRecommendation
from .link_engine import LinkEngine
from .options import pass_options
from .pages import native_page
from .rules import LinkRules

if TYPE_CHECKING:
    import pandas

__all__ = ["LinkChange", "RuleSummary", "RulesPreview", "preview_rules"]

#: The columns of :meth:`RulesPreview.to_frame`.
_COLUMNS = ["page_title", "pageid", "change", "rule", "value", "link_text", "link_target",
            "score", "wikitext_offset", "context_before", "context_after"]  # fmt: skip

#: A change's (change, rule, entry).
_Key = tuple[Literal["removed", "added"], str, str]

#: Why a link appeared: a slot a removal freed (the next link production finds), or a rule of
#: the old set that the new one no longer has.
REFILL = "refill"
RELEASED = "released"


@dataclass(frozen=True, slots=True)
class LinkChange:
    """One link that one rule set suggests and the other does not."""

    page_title: str
    #: ``removed`` (suggested before, not after) or ``added`` (after, not before).
    change: Literal["removed", "added"]
    #: For a removal: the rule that removed it (``target``, ``class``, ``anchor``,
    #: ``duplicate``, ``section``, ``template``, ``category``, ``too_few_links``,
    #: ``not_shown``, ``min_score``, ``max_links``; ``displaced``: the result is full and a link
    #: the old rules removed took its slot). For an addition: ``refill`` (it took a freed slot)
    #: or ``released`` (an old rule removed it; ``value`` names that rule).
    rule: str
    value: str
    link: LinkRecommendation
    pageid: int | None = None


@dataclass(frozen=True, slots=True)
class RuleSummary:
    """The changes of one rule entry: how many links, on how many pages."""

    change: Literal["removed", "added"]
    rule: str
    value: str
    links: int
    pages: int


@dataclass(frozen=True)
class RulesPreview:
    """The difference between two rule sets over the same pages."""

    pages: int
    links_before: int
    links_after: int
    changes: tuple[LinkChange, ...]
    #: Pages with suggestions before and none after.
    lost_last: tuple[str, ...]
    #: Pages without suggestions before and some after.
    gained_first: tuple[str, ...]
    #: Pages that failed (title → error), left out of every count.
    errors: dict[str, str] = field(default_factory=dict)

    def by_rule(self) -> list[RuleSummary]:
        """One row per (change, rule, entry), most links first."""
        links: Counter[_Key] = Counter()
        pages: defaultdict[_Key, set[str]] = defaultdict(set)
        for c in self.changes:
            key = (c.change, c.rule, c.value)
            links[key] += 1
            pages[key].add(c.page_title)
        return [
            RuleSummary(change, rule, value, count, len(pages[(change, rule, value)]))
            for (change, rule, value), count in sorted(
                links.items(), key=lambda kv: (kv[0][0] != "removed", -kv[1], kv[0])
            )
        ]

    def examples(self, per_rule: int = 3) -> dict[_Key, list[LinkChange]]:
        """Up to ``per_rule`` changes of each (change, rule, entry), in page order."""
        out: defaultdict[_Key, list[LinkChange]] = defaultdict(list)
        for c in self.changes:
            key = (c.change, c.rule, c.value)
            if len(out[key]) < per_rule:
                out[key].append(c)
        return dict(out)

    @property
    def removed(self) -> int:
        return sum(1 for c in self.changes if c.change == "removed")

    @property
    def added(self) -> int:
        return len(self.changes) - self.removed

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary: totals, the rows of :meth:`by_rule`, the pages lists."""
        return {
            "pages": self.pages,
            "links_before": self.links_before,
            "links_after": self.links_after,
            "removed": self.removed,
            "added": self.added,
            "lost_last": list(self.lost_last),
            "gained_first": list(self.gained_first),
            "by_rule": [asdict(row) for row in self.by_rule()],
            "errors": self.errors,
        }

    def to_frame(self) -> pandas.DataFrame:
        """One row per changed link (needs pandas)."""
        import pandas as pd

        own = _COLUMNS[: _COLUMNS.index("link_text")]
        rows = [{**{k: getattr(c, k) for k in own}, **c.link.to_dict()} for c in self.changes]
        return pd.DataFrame(rows, columns=_COLUMNS)

    def summary_frame(self) -> pandas.DataFrame:
        """:meth:`by_rule` as a frame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame([asdict(r) for r in self.by_rule()],
                            columns=["change", "rule", "value", "links", "pages"])  # fmt: skip

    def format_table(self) -> str:
        """A plain-text report for a terminal."""
        lines = [
            f"{self.pages} pages: {self.links_before} links before, {self.links_after} after "
            f"({self.removed} removed, {self.added} added)",
            f"pages losing their last suggestion: {len(self.lost_last)}; "
            f"gaining their first: {len(self.gained_first)}",
        ]
        if self.errors:
            lines.append(f"pages that failed: {len(self.errors)}")
        rows = [("change", "rule", "entry", "links", "pages")]
        rows += [(r.change, r.rule, r.value, str(r.links), str(r.pages)) for r in self.by_rule()]
        widths = [min(40, max(len(row[i]) for row in rows)) for i in range(5)]
        lines.append("")
        for row in rows:
            cells = [cell[:40].ljust(width) for cell, width in zip(row, widths, strict=True)]
            lines.append("  ".join(cells).rstrip())
        for key, changes in self.examples(1).items():
            c = changes[0]
            lines.append(
                f"  e.g. {key[0]} by {key[1]} {key[2]!r}: {c.page_title}: "
                f"…{c.link.context_before}[{c.link.link_text} → {c.link.link_target}]"
                f"{c.link.context_after}…"
            )
        if self.lost_last:
            lines.append("lose their last suggestion: " + ", ".join(self.lost_last[:20]))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return _html(self)


def preview_rules(
    pages: str | os.PathLike[str] | Iterable[Any],
    engine: LinkEngine,
    rules: LinkRules | str | os.PathLike[str] | None,
    *,
    rules_before: LinkRules | str | os.PathLike[str] | None = None,
    sample: int | None = None,
    workers: int | None = None,
    threshold: float = LINK_DEFAULTS["threshold"],
    max_recommendations: int = LINK_DEFAULTS["max_recommendations"],
    language_code: str | None = LINK_DEFAULTS["language_code"],
) -> RulesPreview:
    """Run ``engine`` over ``pages`` (a MediaWiki XML dump, of which the first ``sample``
    articles when given, or pages as :meth:`LinkEngine.recommend_many` takes them) under
    ``rules_before`` (``None``: production's output) and ``rules``, and report the difference.
    """
    options = {
        "threshold": threshold,
        "max_recommendations": max_recommendations,
        "language_code": language_code,
    }
    before = pass_options({**options, "rules": rules_before})
    after = pass_options({**options, "rules": rules})
    source: str | list[Any]
    if isinstance(pages, (str, os.PathLike)):
        source = os.fspath(pages)
    else:
        _args.not_text("pages", pages)
        source = [native_page(page) for page in pages]
    found = rules_preview(
        engine.native,
        source,
        before,
        after,
        sample=_args.optional_integer("sample", sample),
        workers=_args.optional_integer("workers", workers),
    )
    return RulesPreview(
        pages=found["pages"],
        links_before=found["links_before"],
        links_after=found["links_after"],
        changes=tuple(LinkChange(*change) for change in found["changes"]),
        lost_last=tuple(found["lost_last"]),
        gained_first=tuple(found["gained_first"]),
        errors=found["errors"],
    )


_CELL = "border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top"
_MARK = {"removed": "#ef9a9a", "added": "#a5d6a7"}


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _html(report: RulesPreview, per_rule: int = 3) -> str:
    """The report for a notebook: totals, one row per rule entry with examples of its links
    in their context (every text from a page escaped)."""
    head = (
        f'<div style="font:bold 14px sans-serif">{report.pages} pages · '
        f"{report.links_before} → {report.links_after} links · {report.removed} removed · "
        f"{report.added} added · {len(report.lost_last)} lose their last suggestion · "
        f"{len(report.gained_first)} gain their first</div>"
    )
    examples = report.examples(per_rule)
    rows = []
    for r in report.by_rule():
        shown = []
        for c in examples.get((r.change, r.rule, r.value), []):
            mark = (
                f'<mark style="background:{_MARK[c.change]};font-weight:bold">'
                f"{_e(c.link.link_text)}</mark>"
            )
            shown.append(
                f'{_e(c.page_title)}: <span style="font-family:monospace">…'
                f"{_e(c.link.context_before)}{mark}{_e(c.link.context_after)}…</span> → "
                f"{_e(c.link.link_target)}"
            )
        cells = [r.change, r.rule, r.value, r.links, r.pages]
        rows.append(
            "<tr>"
            + "".join(f'<td style="{_CELL}">{_e(v)}</td>' for v in cells)
            + f'<td style="{_CELL}">{"<br>".join(shown)}</td></tr>'
        )
    heads = "".join(
        f'<th style="{_CELL}">{h}</th>'
        for h in ("change", "rule", "entry", "links", "pages", "examples")
    )
    table = (
        '<table style="border-collapse:collapse;font:13px/1.4 sans-serif">'
        f"<thead><tr>{heads}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    lost = ""
    if report.lost_last:
        lost = "<div>Lose their last suggestion: " + _e(", ".join(report.lost_last)) + "</div>"
    return f"<div>{head}{table}{lost}</div>"
