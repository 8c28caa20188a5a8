"""Turn link recommendations into wikitext: each accepted phrase becomes a link where it stands.

>>> import wikisuggest
>>> text = "The aardvark is a mammal native to Africa."
>>> rec = wikisuggest.LinkRecommendation("mammal", "Mammal", wikitext_offset=18,
...     context_before="ardvark is a ", context_after=" native to")
>>> wikisuggest.apply_links(text, [rec]).wikitext
'The aardvark is a [[mammal]] native to Africa.'

Placement follows the editor that shows these suggestions to newcomers: the recommendation's
``wikitext_offset`` is tried first and accepted only if the phrase and the text around it
(``context_before`` / ``context_after``) are still there, in plain article text. Otherwise the
phrase is searched in the page's plain text by its context, and ``match_index`` (the phrase's
occurrence number in the page's plain text) decides between several matches. A link that
cannot be placed with certainty is reported in ``skipped`` with a reason; it is never placed
somewhere else. Offsets are in code points, like the service's.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import Enum

from ..records import LinkRecommendation, LinkRecommendationSet
from ._wikitext import TextMap, linked_targets, normalise_title

__all__ = [
    "AppliedLink",
    "AppliedLinks",
    "SkipReason",
    "SkippedLink",
    "apply_links",
    "link_markup",
]

#: Characters that cannot appear in a page title (or would change the markup's meaning).
_BAD_TARGET_CHARS = frozenset("[]{}|<>\n\r\t")

#: Prefixes that make a link do something else: categorise the page, embed a file.
_NOT_ARTICLE_PREFIXES = ("category:", "file:", "image:", "media:")

#: Scripts written without spaces between words, where a phrase next to letters is normal.
_UNSPACED_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR", "TIBETAN")


class SkipReason(str, Enum):
    """Why a recommendation was not turned into a link."""

    #: The phrase is no longer where the recommendation says, nor anywhere with the same
    #: context in the page's plain text (the page changed since the recommendation).
    TEXT_CHANGED = "text_changed"
    #: The phrase occurs with the same context more than once and ``match_index`` does not
    #: say which occurrence is meant.
    AMBIGUOUS = "ambiguous"
    #: The phrase sits inside an existing link, or the page already links to the target.
    ALREADY_LINKED = "already_linked"
    #: The phrase is where the recommendation says, but that place is markup (a table, a
    #: template, a tag, …), where a link would change the markup's meaning.
    IN_MARKUP = "in_markup"
    #: The phrase overlaps a link placed earlier in this call.
    OVERLAPS = "overlaps"
    #: The phrase is part of a longer word: a link there would link a fragment of it.
    INSIDE_WORD = "inside_word"
    #: The recommendation cannot be written as a link (empty phrase, a target with
    #: characters a title cannot have, markup in the phrase).
    INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class AppliedLink:
    """A recommendation placed in the text."""

    link: LinkRecommendation
    #: Where the phrase starts in the original wikitext (code points).
    offset: int
    #: Where the link markup starts in the new wikitext (code points).
    new_offset: int
    #: The markup written, e.g. ``[[Mammal|mammals]]``.
    markup: str


@dataclass(frozen=True, slots=True)
class SkippedLink:
    """A recommendation that was accepted but not placed, and why."""

    link: LinkRecommendation
    reason: SkipReason
    detail: str


@dataclass(frozen=True, slots=True)
class AppliedLinks:
    """The page's wikitext with the accepted links in it, and what was skipped."""

    wikitext: str
    original: str
    applied: tuple[AppliedLink, ...]
    skipped: tuple[SkippedLink, ...]
    page_title: str | None = None
    pageid: int | None = None
    #: The revision the recommendations were made for: the base of an edit.
    revid: int | None = None

    @property
    def changed(self) -> bool:
        """Whether any link was placed."""
        return bool(self.applied)

    def diff(self, *, context: int = 3) -> str:
        """A unified diff from the original wikitext to the new one (empty if unchanged)."""
        name = self.page_title or "page"
        lines = difflib.unified_diff(
            self.original.splitlines(keepends=True),
            self.wikitext.splitlines(keepends=True),
            f"a/{name}",
            f"b/{name}",
            n=context,
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    def _repr_html_(self) -> str:
        from .review import applied_links_html

        return applied_links_html(self)


def link_markup(link_text: str, target: str) -> str:
    """``[[text]]`` when the text names the target (MediaWiki capitalises a title's first
    letter), else ``[[Target|text]]``."""
    first = link_text[:1].upper()
    if len(first) == 1 and first + link_text[1:] == target:
        return f"[[{link_text}]]"
    return f"[[{target}|{link_text}]]"


def apply_links(
    wikitext: str,
    recommendations: LinkRecommendationSet | Iterable[LinkRecommendation],
    *,
    accept: Callable[[LinkRecommendation], bool] | Collection[int] | None = None,
) -> AppliedLinks:
    """Insert the accepted recommendations into ``wikitext`` as links.

    ``accept`` is a predicate over each recommendation, or a collection of ``link_index``
    values; by default every recommendation is accepted. Recommendations are placed in the
    order given; one that overlaps an earlier placed link is skipped, as is a second link to
    the same target.
    """
    if not isinstance(wikitext, str):
        raise TypeError(f"wikitext must be a str, got {type(wikitext).__name__}")
    page: LinkRecommendationSet | None = None
    if isinstance(recommendations, LinkRecommendationSet):
        page = recommendations
        links: Iterable[LinkRecommendation] = recommendations.links
    else:
        links = recommendations
    chosen = [link for link in links if _accepted(link, accept)]

    text_map = TextMap(wikitext)
    already = linked_targets(wikitext)
    placed: list[tuple[int, int, LinkRecommendation, str]] = []
    skipped: list[SkippedLink] = []
    for link in chosen:
        outcome = _place(link, text_map, already, placed)
        if isinstance(outcome, SkippedLink):
            skipped.append(outcome)
            continue
        start = outcome
        markup = link_markup(link.link_text, link.link_target)
        placed.append((start, start + len(link.link_text), link, markup))
        already.add(normalise_title(link.link_target))

    return _assemble(wikitext, placed, skipped, page)


def _accepted(
    link: LinkRecommendation, accept: Callable[[LinkRecommendation], bool] | Collection[int] | None
) -> bool:
    if not isinstance(link, LinkRecommendation):
        raise TypeError(f"recommendations must be LinkRecommendation, got {type(link).__name__}")
    if accept is None:
        return True
    if callable(accept):
        return bool(accept(link))
    return link.link_index in accept


def _place(
    link: LinkRecommendation,
    text_map: TextMap,
    already: set[str],
    placed: list[tuple[int, int, LinkRecommendation, str]],
) -> int | SkippedLink:
    """Where ``link`` goes in the original text, or why it goes nowhere."""
    phrase, target = link.link_text, link.link_target
    if not phrase or not phrase.strip() or any(m in phrase for m in ("[[", "]]", "{{", "}}")):
        return SkippedLink(link, SkipReason.INVALID, f"cannot link the phrase {phrase!r}")
    if not target.strip() or any(c in _BAD_TARGET_CHARS for c in target):
        return SkippedLink(link, SkipReason.INVALID, f"{target!r} is not a valid page title")
    if normalise_title(target).lower().replace(" ", "").startswith(_NOT_ARTICLE_PREFIXES):
        return SkippedLink(link, SkipReason.INVALID, f"{target!r} is not an article")
    if normalise_title(target) in already:
        return SkippedLink(link, SkipReason.ALREADY_LINKED, f"the page already links to {target}")

    start = _locate(link, text_map)
    if isinstance(start, SkippedLink):
        return start
    end = start + len(phrase)
    for other_start, other_end, other, _ in placed:
        if start < other_end and other_start < end:
            return SkippedLink(
                link,
                SkipReason.OVERLAPS,
                f"overlaps the link {other.link_text!r} → {other.link_target} at {other_start}",
            )
    text = text_map.text
    if _joins_word(text, start - 1, phrase[0]) or _joins_word(text, end, phrase[-1]):
        return SkippedLink(
            link, SkipReason.INSIDE_WORD, f"{phrase!r} at {start} is part of a longer word"
        )
    return start


def _locate(link: LinkRecommendation, text_map: TextMap) -> int | SkippedLink:
    text = text_map.text
    phrase = link.link_text
    offset = link.wikitext_offset
    # Fast path: the phrase, with its context, is still exactly where the service saw it.
    if (
        offset is not None
        and 0 <= offset <= len(text) - len(phrase)
        and text.startswith(phrase, offset)
        and _context_matches(text, offset, link)
    ):
        if text_map.is_text(offset, offset + len(phrase)):
            return offset
        if text_map.in_link(offset):
            return SkippedLink(
                link, SkipReason.ALREADY_LINKED, f"{phrase!r} at {offset} is inside a link"
            )
        return SkippedLink(
            link, SkipReason.IN_MARKUP, f"{phrase!r} at {offset} is part of markup, not text"
        )
    # The page moved around it: look for the phrase in its context, in plain text only.
    occurrences = text_map.occurrences(phrase)
    fitting = [i for i, start in enumerate(occurrences) if _context_matches(text, start, link)]
    if not fitting:
        return SkippedLink(
            link,
            SkipReason.TEXT_CHANGED,
            f"{phrase!r} no longer appears in plain text with its context",
        )
    if len(fitting) == 1:
        return occurrences[fitting[0]]
    if link.match_index is not None and link.match_index in fitting:
        return occurrences[link.match_index]
    return SkippedLink(
        link,
        SkipReason.AMBIGUOUS,
        f"{phrase!r} appears {len(fitting)} times with its context"
        + ("" if link.match_index is None else f", none of them occurrence {link.match_index}"),
    )


def _context_matches(text: str, start: int, link: LinkRecommendation) -> bool:
    before, after = link.context_before, link.context_after
    end = start + len(link.link_text)
    if before and text[max(0, start - len(before)) : start] != before:
        return False
    return not (after and text[end : end + len(after)] != after)


def _joins_word(text: str, index: int, edge: str) -> bool:
    """Whether the character at ``index`` continues the word that ``edge`` belongs to."""
    if not 0 <= index < len(text):
        return False
    neighbour = text[index]
    if not (neighbour.isalnum() and edge.isalnum()):
        return False
    return not any(
        script in unicodedata.name(ch, "")
        for ch in (neighbour, edge)
        for script in _UNSPACED_SCRIPTS
    )


def _assemble(
    wikitext: str,
    placed: list[tuple[int, int, LinkRecommendation, str]],
    skipped: list[SkippedLink],
    page: LinkRecommendationSet | None,
) -> AppliedLinks:
    parts: list[str] = []
    applied: list[AppliedLink] = []
    pos = 0
    length = 0
    for start, end, link, markup in sorted(placed, key=lambda p: p[0]):
        parts.append(wikitext[pos:start])
        length += start - pos
        applied.append(AppliedLink(link, start, length, markup))
        parts.append(markup)
        length += len(markup)
        pos = end
    parts.append(wikitext[pos:])
    order = {id(p[2]): i for i, p in enumerate(placed)}
    applied.sort(key=lambda a: order[id(a.link)])
    return AppliedLinks(
        wikitext="".join(parts),
        original=wikitext,
        applied=tuple(applied),
        skipped=tuple(skipped),
        page_title=None if page is None else page.page_title,
        pageid=None if page is None else page.pageid,
        revid=None if page is None else page.revid,
    )
