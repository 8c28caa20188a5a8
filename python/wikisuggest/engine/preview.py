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
"""

from __future__ import annotations

import html
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._native import LINK_DEFAULTS, NativeDumpPages, page_sections
from ..errors import InvalidParameter
from ..records import LinkRecommendation
from .link_engine import LinkEngine
from .rules import ExplainedResult, LinkRules

if TYPE_CHECKING:
    import pandas

__all__ = ["LinkChange", "RuleSummary", "RulesPreview", "preview_rules"]

_MAIN_NAMESPACE = 0

#: The columns of :meth:`RulesPreview.to_frame`.
_COLUMNS = ["page_title", "pageid", "change", "rule", "value", "link_text", "link_target",
            "score", "wikitext_offset", "context_before", "context_after"]  # fmt: skip

#: Why a link appeared: a slot a removal freed (the next link production finds), or a rule of
#: the old set that the new one no longer has.
#: A change's (change, rule, entry).
_Key = tuple[Literal["removed", "added"], str, str]

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
    if sample is not None and sample < 1:
        raise InvalidParameter("sample must be at least 1", parameter="sample")
    new, old = _checked(rules), _checked(rules_before)
    page_list = list(_pages(pages, sample))
    runs = [
        engine.explain_iter(
            page_list,
            rules=ruled,
            workers=workers,
            threshold=threshold,
            max_recommendations=max_recommendations,
            language_code=language_code,
        )
        for ruled in (old, new)
    ]
    before, after = runs
    new_sections = set() if rules is None else _section_titles(rules)
    new_spec = {} if rules is None else _spec(rules)
    changes: list[LinkChange] = []
    lost, gained, errors = [], [], {}
    counted = links_before = links_after = 0
    for page, b, a in zip(page_list, before, after, strict=True):
        title = str(page["page_title"])
        if b.error is not None or a.error is not None:
            errors[title] = f"{type(b.error or a.error).__name__}: {b.error or a.error}"
            continue
        assert b.result is not None and a.result is not None
        counted += 1
        old_links, new_links = b.result.result.links, a.result.result.links
        links_before += len(old_links)
        links_after += len(new_links)
        if old_links and not new_links:
            lost.append(title)
        if new_links and not old_links:
            gained.append(title)
        full = 0 < max_recommendations <= len(new_links)
        changes.extend(
            _diff(
                title,
                page.get("pageid"),
                page["wikitext"],
                b.result,
                a.result,
                new_sections,
                {**new_spec, "displaced": max_recommendations if full else None},
            )
        )
    return RulesPreview(
        pages=counted,
        links_before=links_before,
        links_after=links_after,
        changes=tuple(changes),
        lost_last=tuple(lost),
        gained_first=tuple(gained),
        errors=errors,
    )


def _checked(rules: LinkRules | str | os.PathLike[str] | None) -> LinkRules | None:
    if rules is None or isinstance(rules, LinkRules):
        return rules
    return LinkRules.load(rules)


def _key(link: LinkRecommendation) -> tuple[str, str, int | None]:
    return (link.link_text, link.link_target, link.wikitext_offset)


def _diff(
    title: str,
    pageid: int | None,
    wikitext: str,
    before: ExplainedResult,
    after: ExplainedResult,
    new_sections: set[str],
    new_spec: dict[str, Any],
) -> Iterator[LinkChange]:
    old = {_key(link): link for link in before.result.links}
    new = {_key(link): link for link in after.result.links}
    removed_by = {_key(e.link): (e.rule, e.value) for e in after.excluded}
    removed_before = {_key(e.link): (e.rule, e.value) for e in before.excluded}
    sections = None
    for index, (key, link) in enumerate(old.items()):
        if key in new:
            continue
        if key in removed_by:
            rule, value = removed_by[key]
        elif after.page_excluded is not None:
            rule, value = after.page_excluded.rule, after.page_excluded.value
        else:
            if sections is None:
                sections = page_sections(wikitext)
            rule, value = _other_reason(link, index, sections, new_sections, new_spec)
        yield LinkChange(title, "removed", rule, value, link, pageid)
    for key, link in new.items():
        if key in old:
            continue
        if key in removed_before:
            rule, value = removed_before[key]
            yield LinkChange(title, "added", RELEASED, f"{rule}: {value}", link, pageid)
        else:
            yield LinkChange(title, "added", REFILL, "", link, pageid)


def _other_reason(
    link: LinkRecommendation,
    index: int,
    sections: list[tuple[str | None, int]],
    excluded_sections: set[str],
    spec: dict[str, Any],
) -> tuple[str, str]:
    """Why a link the new rules did not exclude outright is gone: its section is excluded,
    its score is below the new lowest score, or it is past the new most links."""
    offset = link.wikitext_offset or 0
    heading = None
    for section_title, start in sections:
        if start <= offset:
            heading = section_title
    if heading is None and "%LEAD%" in excluded_sections:
        return "section", "%LEAD%"
    if heading is not None and heading.casefold() in excluded_sections:
        return "section", heading
    min_score = spec.get("min_score")
    if min_score is not None and link.score is not None and link.score < min_score:
        return "min_score", str(min_score)
    max_links = spec.get("max_links")
    if max_links is not None and index >= max_links:
        return "max_links", str(max_links)
    if spec.get("displaced") is not None:
        # The result is full: a link the new rules let through took this one's slot.
        return "displaced", str(spec["displaced"])
    return "other", ""


def _spec(rules: LinkRules | str | os.PathLike[str]) -> dict[str, Any]:
    return (rules if isinstance(rules, LinkRules) else LinkRules.load(rules)).to_dict()


def _section_titles(rules: LinkRules | str | os.PathLike[str]) -> set[str]:
    titles = _spec(rules).get("exclude_sections", [])
    return {t if t == "%LEAD%" else t.strip().casefold() for t in titles}


def _pages(pages: Any, sample: int | None) -> Iterator[dict[str, Any]]:
    """Pages as dicts: the articles of a dump (main namespace, no redirects), or as given."""
    if isinstance(pages, (str, os.PathLike)):
        path = Path(pages)
        if not path.is_file():
            raise InvalidParameter(f"{path}: no such dump file", parameter="pages")
        reader = NativeDumpPages(path, [_MAIN_NAMESPACE], True, 0, 256, 32 << 20)
        taken = 0
        while (batch := reader.next_batch()) is not None:
            for pid, rev, title, text in batch[0]:
                if sample is not None and taken >= sample:
                    return
                taken += 1
                yield {"wikitext": text, "page_title": title, "pageid": pid, "revid": rev}
        return
    for n, page in enumerate(pages):
        if sample is not None and n >= sample:
            return
        if isinstance(page, dict):
            yield {**page, "page_title": page.get("page_title", page.get("title"))}
        else:
            fields = ("wikitext", "page_title", "pageid", "revid", "language_code")
            yield dict(zip(fields, page, strict=False))


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
