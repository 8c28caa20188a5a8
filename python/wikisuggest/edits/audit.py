"""A patroller's audit of saved link edits: which added links deserve a second look, and a
change that takes out only those.

>>> from wikisuggest.edits.audit import audit_edits
>>> queue = audit_edits(wiki, engine, rules=rules)  # recent Add a Link edits  # doctest: +SKIP
>>> queue.to_frame()  # doctest: +SKIP
>>> for edit in queue.flagged():  # doctest: +SKIP
...     print(edit.save(wiki).diff)  # a dry run: the change, not saved

For each edit (a revision of the wiki, found by its change tag in recent changes or given by
id), the audit reads the revision before it and the edit's own, finds the links the edit added,
runs the engine on the revision before, and flags each added link that

* ``not_suggested``: the engine does not suggest that phrase for that target there;
* ``excluded``: the rules exclude its target (after redirects), its class or its phrase;
* ``duplicate``: its target is linked earlier in the same section;
* ``homonym``: another target of the phrase scores within ``margin`` of (or above) its own;
* ``red_link``: its target does not exist on the wiki;
* ``redirect``: its target is a redirect (to the page the value names).

Per edit, :meth:`AuditedEdit.fix` writes the change that unlinks only the flagged links (their
text stays), based on the edit's own revision, and :meth:`AuditedEdit.save` saves it through
:meth:`Wiki.save` — a dry run unless ``dry_run=False``: if anyone edited the page since, the
wiki refuses it as an edit conflict.
"""

from __future__ import annotations

import html
import os
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._native import LINK_DEFAULTS, page_links
from ..engine.link_engine import LinkEngine
from ..engine.rules import LinkRules, native_rules
from ..errors import InvalidParameter
from .apply import AppliedLinks
from .wiki import EditResult, Wiki

if TYPE_CHECKING:
    import pandas

__all__ = [
    "ADD_LINK_TAG",
    "FLAGS",
    "AuditQueue",
    "AuditedEdit",
    "AuditedLink",
    "Flag",
    "audit_edits",
]

#: The change tag of edits made with the Add a Link task.
ADD_LINK_TAG = "newcomer task add link"
#: The flags, in the order they are checked.
FLAGS = ("not_suggested", "excluded", "duplicate", "homonym", "red_link", "redirect")
#: Titles a request asks about at once.
_BATCH = 50


@dataclass(frozen=True, slots=True)
class Flag:
    """Why an added link deserves a look: one of :data:`FLAGS`, and a detail (the rule, the
    earlier link, the runner-up target, the redirect's target)."""

    kind: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class AuditedLink:
    """A link an edit added."""

    #: The phrase shown (the label, or the target as written).
    link_text: str
    #: The target as written.
    title: str
    #: The target normalised and, where the wiki says it is a redirect, resolved.
    target: str
    #: Code point span of the ``[[…]]`` in the edit's revision.
    start: int
    end: int
    section: int
    flags: tuple[Flag, ...] = ()

    @property
    def flagged(self) -> bool:
        return bool(self.flags)


@dataclass(frozen=True)
class AuditedEdit:
    """One edit: its revisions, the links it added, and their flags."""

    title: str
    pageid: int
    revid: int
    parentid: int
    user: str
    timestamp: str
    links: tuple[AuditedLink, ...]
    #: The edit's revision text (what :meth:`fix` changes).
    wikitext: str = field(repr=False)

    @property
    def flagged_links(self) -> tuple[AuditedLink, ...]:
        return tuple(link for link in self.links if link.flagged)

    def fix(self, kinds: Collection[str] | None = None) -> AppliedLinks:
        """The edit's revision with the flagged links (only those with a flag in ``kinds``,
        when given) turned back into their text, based on the edit's revision."""
        unknown = set(kinds or ()) - set(FLAGS)
        if unknown:
            raise InvalidParameter(
                f"unknown flags: {', '.join(sorted(unknown))}", parameter="kinds"
            )
        chosen = [
            link
            for link in self.links
            if link.flags and (kinds is None or any(f.kind in kinds for f in link.flags))
        ]
        text = self.wikitext
        for link in sorted(chosen, key=lambda link: link.start, reverse=True):
            text = text[: link.start] + link.link_text + text[link.end :]
        return AppliedLinks(
            wikitext=text,
            original=self.wikitext,
            applied=(),
            skipped=(),
            page_title=self.title,
            pageid=self.pageid,
            revid=self.revid,
        )

    def save(
        self,
        wiki: Wiki,
        *,
        kinds: Collection[str] | None = None,
        summary: str = "Remove links flagged in review",
        dry_run: bool = True,
    ) -> EditResult:
        """Save :meth:`fix` as a new revision of the page, based on the edit's revision (a dry
        run by default: the diff, nothing saved)."""
        return wiki.save(self.fix(kinds), summary=summary, dry_run=dry_run)


@dataclass(frozen=True)
class AuditQueue:
    """The audited edits, newest first as they were read."""

    edits: tuple[AuditedEdit, ...]
    #: Edits that could not be audited (revision id → why).
    errors: Mapping[int, str] = field(default_factory=dict)

    def flagged(self) -> list[AuditedEdit]:
        """The edits with at least one flagged link."""
        return [edit for edit in self.edits if edit.flagged_links]

    def counts(self) -> Counter[str]:
        """How many added links carry each flag."""
        return Counter(f.kind for e in self.edits for link in e.links for f in link.flags)

    def to_frame(self) -> pandas.DataFrame:
        """One row per added link, its flags joined (needs pandas)."""
        import pandas as pd

        edit = ("title", "revid", "user", "timestamp")
        rows = [
            {
                **{k: getattr(e, k) for k in edit},
                "link_text": link.link_text,
                "target": link.target,
                "flags": ",".join(f.kind for f in link.flags),
                "details": "; ".join(f"{f.kind}: {f.detail}" for f in link.flags if f.detail),
            }
            for e in self.edits
            for link in e.links
        ]
        columns = [*edit, "link_text", "target", "flags", "details"]
        return pd.DataFrame(rows, columns=columns)

    def _repr_html_(self) -> str:
        cell = "border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top"
        rows = []
        for e in self.edits:
            for link in e.links:
                flags = "<br>".join(
                    f"<b>{html.escape(f.kind)}</b>"
                    + (f": {html.escape(f.detail)}" if f.detail else "")
                    for f in link.flags
                )
                context = html.escape(e.wikitext[max(0, link.start - 40) : link.start])
                after = html.escape(e.wikitext[link.end : link.end + 40])
                colour = "#ef9a9a" if link.flags else "#c8e6c9"
                markup = html.escape(e.wikitext[link.start : link.end])
                mark = f'<mark style="background:{colour}">{markup}</mark>'
                values = [html.escape(e.title), str(e.revid), html.escape(e.user),
                          f'<span style="font-family:monospace">…{context}{mark}{after}…</span>',
                          flags or "—"]  # fmt: skip
                rows.append(
                    "<tr>" + "".join(f'<td style="{cell}">{v}</td>' for v in values) + "</tr>"
                )
        head = "".join(
            f'<th style="{cell}">{h}</th>' for h in ("page", "revision", "user", "link", "flags")
        )
        summary = ", ".join(f"{k} {n}" for k, n in sorted(self.counts().items())) or "no flags"
        return (
            f'<div><div style="font:bold 14px sans-serif">{len(self.edits)} edits · {summary}</div>'
            f'<table style="border-collapse:collapse;font:13px/1.4 sans-serif"><thead><tr>{head}'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        )


def audit_edits(
    wiki: Wiki,
    engine: LinkEngine,
    revids: Iterable[int] | None = None,
    *,
    tag: str = ADD_LINK_TAG,
    limit: int = 50,
    rules: LinkRules | str | os.PathLike[str] | None = None,
    margin: float = 0.1,
    threshold: float = LINK_DEFAULTS["threshold"],
    language_code: str | None = LINK_DEFAULTS["language_code"],
) -> AuditQueue:
    """Audit the edits ``revids`` of ``wiki``, or its ``limit`` most recent edits tagged
    ``tag``, with ``engine`` (the wiki's dataset), ``rules`` and a homonym ``margin``."""
    if not 0 <= margin <= 1:
        raise InvalidParameter("margin must be between 0 and 1", parameter="margin")
    checked_rules = (
        None
        if rules is None
        else (rules if isinstance(rules, LinkRules) else LinkRules.load(rules))
    )
    native_rules(checked_rules)
    ids = list(revids) if revids is not None else _tagged(wiki, tag, limit)
    edits, errors = [], {}
    for revid in ids:
        try:
            edit = _audit(wiki, engine, int(revid), checked_rules, margin, threshold, language_code)
        except Exception as err:  # one edit's failure must not lose the others
            errors[int(revid)] = f"{type(err).__name__}: {err}"
            continue
        if edit is not None:
            edits.append(edit)
    return AuditQueue(tuple(edits), errors)


def _tagged(wiki: Wiki, tag: str, limit: int) -> list[int]:
    body = wiki.read(
        {
            "action": "query",
            "list": "recentchanges",
            "rctag": tag,
            "rctype": "edit",
            "rcprop": "ids",
            "rclimit": str(max(1, min(limit, 500))),
        }
    )
    return [int(rc["revid"]) for rc in body.get("query", {}).get("recentchanges", [])]


def _audit(
    wiki: Wiki,
    engine: LinkEngine,
    revid: int,
    rules: LinkRules | None,
    margin: float,
    threshold: float,
    language_code: str | None,
) -> AuditedEdit | None:
    info = wiki.read(
        {
            "action": "query",
            "prop": "revisions",
            "revids": str(revid),
            "rvprop": "ids|timestamp|user",
        }
    )
    pages = info.get("query", {}).get("pages", [])
    if not pages or not pages[0].get("revisions"):
        raise InvalidParameter(f"no revision {revid}", parameter="revids")
    revision = pages[0]["revisions"][0]
    parentid = int(revision.get("parentid") or 0)
    if not parentid:
        return None  # a page creation adds links to no earlier text
    before, after = wiki.page(revid=parentid), wiki.page(revid=revid)
    if before is None or after is None:
        raise InvalidParameter(
            f"revision {revid} or its parent is not readable", parameter="revids"
        )
    added = _added_links(before.wikitext, after.wikitext)
    if not added:
        return _edit(pages[0], revision, revid, parentid, after, ())
    links_after = page_links(after.wikitext)
    resolved = _resolve(wiki, {t for *_, t in links_after})
    explained = engine.explain(
        before.wikitext,
        before.title,
        rules=rules,
        threshold=threshold,
        max_recommendations=0,
        language_code=language_code,
    )
    suggested = {(link.link_text.lower(), link.link_target) for link in explained.result.links}
    removed = {(e.link.link_text.lower(), e.link.link_target): e for e in explained.excluded}
    audited = []
    for section, start, end, title, label, target in added:
        text = label if label is not None else title
        final, state = resolved.get(target, (target, "exists"))
        flags = []
        key = (text.strip().lower(), final)
        if key not in suggested and key not in removed:
            flags.append(Flag("not_suggested"))
        exclusion = removed.get(key)
        rule = f"{exclusion.rule}: {exclusion.value}" if exclusion is not None else None
        if rule is None and rules is not None:
            found = rules.link_exclusion(text, final)
            rule = None if found is None else f"{found.rule}: {found.value}"
        if rule is not None:
            flags.append(Flag("excluded", rule))
        earlier = [
            s for s in links_after
            if s[0] == section and s[1] < start and resolved.get(s[5], (s[5], ""))[0] == final
        ]  # fmt: skip
        if earlier:
            flags.append(Flag("duplicate", f"linked at {earlier[0][1]}"))
        runner_up = _homonym(engine, before.title, text, final, margin, language_code)
        if runner_up:
            flags.append(Flag("homonym", runner_up))
        if state == "missing":
            flags.append(Flag("red_link"))
        elif state == "redirect":
            flags.append(Flag("redirect", final))
        audited.append(AuditedLink(text, title, final, start, end, section, tuple(flags)))
    return _edit(pages[0], revision, revid, parentid, after, tuple(audited))


def _edit(
    page: Mapping[str, Any],
    revision: Mapping[str, Any],
    revid: int,
    parentid: int,
    after: Any,
    links: tuple[AuditedLink, ...],
) -> AuditedEdit:
    return AuditedEdit(
        title=after.title,
        pageid=int(page.get("pageid", after.pageid)),
        revid=revid,
        parentid=parentid,
        user=str(revision.get("user", "")),
        timestamp=str(revision.get("timestamp", "")),
        links=links,
        wikitext=after.wikitext,
    )


def _added_links(before: str, after: str) -> list[tuple[int, int, int, str, str | None, str]]:
    """The links of ``after`` beyond those ``before`` has with the same target and text: of
    each (target, text), the occurrences past the count before, the last ones."""

    def key(link: tuple[int, int, int, str, str | None, str]) -> tuple[str, str]:
        return (link[5], (link[4] if link[4] is not None else link[3]).strip())

    had = Counter(key(link) for link in page_links(before))
    links = page_links(after)
    total = Counter(key(link) for link in links)
    seen: Counter[tuple[str, str]] = Counter()
    added = []
    for link in links:
        k = key(link)
        seen[k] += 1
        if seen[k] > had[k] and total[k] > had[k] and ":" not in link[5]:
            added.append(link)
    return added


def _resolve(wiki: Wiki, titles: set[str]) -> dict[str, tuple[str, str]]:
    """Title → (the page it leads to, ``exists``, ``redirect`` or ``missing``)."""
    out: dict[str, tuple[str, str]] = {}
    ordered = sorted(t for t in titles if t)
    for start in range(0, len(ordered), _BATCH):
        chunk = ordered[start : start + _BATCH]
        body = wiki.read({"action": "query", "titles": "|".join(chunk), "redirects": "1"})
        query = body.get("query", {})
        normalized = {n["from"]: n["to"] for n in query.get("normalized", [])}
        redirects = {r["from"]: r["to"] for r in query.get("redirects", [])}
        missing = {
            p["title"] for p in query.get("pages", []) if p.get("missing") or p.get("invalid")
        }
        for title in chunk:
            name = normalized.get(title, title)
            if name in redirects:
                out[title] = (redirects[name], "redirect")
            elif name in missing:
                out[title] = (name, "missing")
            else:
                out[title] = (name, "exists")
    return out


def _homonym(
    engine: LinkEngine, page: str, text: str, target: str, margin: float, language: str | None
) -> str:
    """The best other candidate of the phrase, if it scores within ``margin`` of ``target``
    (or above it); empty when there is none or the phrase is no anchor."""
    scores = engine.score(page, text, language_code=language)
    if not scores:
        return ""
    own = next((c.probability for c in scores if c.title == target), None)
    others = sorted((c for c in scores if c.title != target), key=lambda c: -c.probability)
    if own is None or not others:
        return ""
    best = others[0]
    return best.title if best.probability >= own - margin else ""
