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

Plain text is what the link engine itself reads: its own partition of the page (templates,
links, tags, tables, comments, headings and entities are markup), computed in Rust without
the interpreter, in time linear in the page. A target is written only if MediaWiki reads it
as one link to an article (:func:`~wikisuggest.edits.titles.link_title`).
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from enum import Enum

from .. import _args
from .._native import NativePlainText
from ..errors import WikitextError
from ..records import LinkRecommendation, LinkRecommendationSet
from .titles import InvalidTitle, SiteInfo, link_title

__all__ = [
    "AppliedLink",
    "AppliedLinks",
    "SkipReason",
    "SkippedLink",
    "apply_links",
    "link_markup",
]

#: What a phrase cannot hold: markup that would end the link early (a ``]`` at its end
#: merges with the closing ``]]``), open another construct, sign the page or break the line.
_BAD_PHRASE = ("[", "]", "{{", "}}", "\n", "''", "~~~")

#: Scripts written without spaces between words, where a phrase next to letters is normal.
_UNSPACED_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "THAI", "LAO", "KHMER", "MYANMAR", "TIBETAN")

#: Characters that belong to the character before them: a link boundary before one would cut
#: a letter from its accent, an emoji from its modifier, a ligature in two.
_JOINING = frozenset("\u200c\u200d\u034f")


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
    #: template, a tag, …) or next to a bracket, where a link would change the markup's meaning.
    IN_MARKUP = "in_markup"
    #: The phrase overlaps a link placed earlier in this call.
    OVERLAPS = "overlaps"
    #: The phrase is part of a longer word, or its edge would split a character from the
    #: combining mark or joiner after it: a link there would link a fragment.
    INSIDE_WORD = "inside_word"
    #: The recommendation cannot be written as a link to an article: an empty phrase or one
    #: holding markup, or a target MediaWiki would read as something else (a namespace such as
    #: ``Category:``, an interwiki or language prefix, a signature, a behaviour switch, an
    #: escape, a URL, characters a title cannot have).
    INVALID = "invalid"
    #: The page's markup could not be partitioned in time linear in its length (thousands of
    #: unclosed or nested constructs, as vandalism leaves them): no place in it is known to be
    #: plain text, so nothing is placed. The engine finds no links in such a page either.
    UNPARSABLE = "unparsable"


@dataclass(frozen=True, slots=True)
class AppliedLink:
    """A recommendation placed in the text: where its phrase was, where its link is now, and
    the markup that makes it."""

    link: LinkRecommendation
    #: Where the phrase starts in the original wikitext (code points).
    offset: int
    #: Where the link markup starts in the new wikitext (code points).
    new_offset: int
    #: The markup written, e.g. ``[[Mammal|mammals]]``.
    markup: str
    #: The article the link goes to, as MediaWiki reads the markup.
    title: str

    def __repr__(self) -> str:
        return f"AppliedLink({self.link.link_text!r} → {self.title!r} at {self.offset})"


@dataclass(frozen=True, slots=True)
class SkippedLink:
    """A recommendation that was accepted but not placed, and why."""

    link: LinkRecommendation
    reason: SkipReason
    detail: str

    def __repr__(self) -> str:
        return (
            f"SkippedLink({self.link.link_text!r} → {self.link.link_target!r}: {self.reason.value})"
        )


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

    def __repr__(self) -> str:
        page = "" if self.page_title is None else f"{self.page_title!r}, "
        revision = "" if self.revid is None else f"revid={self.revid}, "
        return (
            f"AppliedLinks({page}{revision}{len(self.applied)} applied, "
            f"{len(self.skipped)} skipped, {len(self.original):,} → "
            f"{len(self.wikitext):,} characters)"
        )

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

    def to_html(self) -> str:
        """The review of these links as an HTML fragment (what a notebook shows): each
        placed link in its text with the article it goes to, each skipped one with its
        reason. Everything from the page is escaped."""
        from .review import applied_links_html

        return applied_links_html(self)

    def _repr_html_(self) -> str:
        return self.to_html()


def link_markup(link_text: str, target: str, *, first_letter_case: bool = True) -> str:
    """``[[text]]`` when the text names the target (on a wiki that capitalises a title's
    first letter, as most do, up to that letter), else ``[[Target|text]]``."""
    if link_text == target:
        return f"[[{link_text}]]"
    first = link_text[:1].upper()
    if first_letter_case and len(first) == 1 and first + link_text[1:] == target:
        return f"[[{link_text}]]"
    return f"[[{target}|{link_text}]]"


def apply_links(
    wikitext: str,
    recommendations: LinkRecommendationSet | Iterable[LinkRecommendation],
    *,
    accept: Callable[[LinkRecommendation], bool] | Collection[int] | None = None,
    site: SiteInfo | None = None,
) -> AppliedLinks:
    """Insert the accepted recommendations into ``wikitext`` as links.

    ``accept`` is a predicate over each recommendation, or a collection of ``link_index``
    values; by default every recommendation is accepted. Recommendations are placed in the
    order given; one that overlaps an earlier placed link is skipped, as is a second link to
    the same target. ``site`` (:meth:`Wiki.siteinfo <wikisuggest.Wiki.siteinfo>`) gives the
    wiki's own namespace names and interwiki prefixes for checking targets; without it, those
    of every language are refused.
    """
    _check_text("wikitext", wikitext)
    if site is not None and not isinstance(site, SiteInfo):
        raise TypeError(f"site must be SiteInfo, got {type(site).__name__}")
    page: LinkRecommendationSet | None = None
    if isinstance(recommendations, LinkRecommendationSet):
        page = recommendations
        links: Iterable[LinkRecommendation] = recommendations.links
    elif isinstance(recommendations, (str, bytes)) or not isinstance(recommendations, Iterable):
        raise TypeError(
            "recommendations must be a LinkRecommendationSet or LinkRecommendation objects, "
            f"got {type(recommendations).__name__}"
        )
    else:
        links = recommendations
    chosen = [link for link in links if _accepted(link, accept)]

    page_text = _PageLinks(wikitext, site)
    placed: list[tuple[int, int, LinkRecommendation, str, str]] = []
    skipped: list[SkippedLink] = []
    for link in chosen:
        outcome = _place(link, page_text, placed)
        if isinstance(outcome, SkippedLink):
            skipped.append(outcome)
            continue
        start, title = outcome
        markup = link_markup(link.link_text, title, first_letter_case=page_text.first_letter)
        placed.append((start, start + len(link.link_text), link, markup, title))
        page_text.linked.add(page_text.key(title))

    return _assemble(wikitext, placed, skipped, page)


def _check_text(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    _args.encodable(name, value)


class _PageLinks:
    """One page's text, its partition (from the engine) and the targets it links to."""

    __slots__ = ("first_letter", "linked", "partition", "site", "text")

    def __init__(self, text: str, site: SiteInfo | None) -> None:
        self.text = text
        self.site = site
        self.first_letter = True if site is None else site.first_letter_case
        self.partition: NativePlainText | None
        try:
            self.partition = NativePlainText(text)
        except WikitextError:
            self.partition = None
        targets = [] if self.partition is None else self.partition.link_targets()
        self.linked = {self.key(target) for target in targets}

    def key(self, title: str) -> str:
        """A title as MediaWiki compares two: white space collapsed, no ``#fragment``, the
        first letter upper case where the wiki capitalises it."""
        title = " ".join(title.replace("_", " ").split("#", 1)[0].split())
        return title[:1].upper() + title[1:] if self.first_letter else title


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


def _invalid(link: LinkRecommendation) -> SkippedLink | str:
    """Why ``link`` cannot be written as a link, or the phrase if it can."""
    phrase = link.link_text
    if not isinstance(phrase, str) or not isinstance(link.link_target, str):
        return SkippedLink(link, SkipReason.INVALID, "the phrase and the target must be text")
    contexts = (link.context_before, link.context_after)
    if any(c is not None and not isinstance(c, str) for c in contexts) or not isinstance(
        link.match_index, (int, type(None))
    ):
        return SkippedLink(
            link, SkipReason.INVALID, "the contexts must be text and match_index a number"
        )
    if not phrase.strip():
        return SkippedLink(link, SkipReason.INVALID, f"cannot link the phrase {phrase!r}")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in phrase):
        return SkippedLink(link, SkipReason.INVALID, f"{phrase!r} holds a lone surrogate")
    bad = next((m for m in _BAD_PHRASE if m in phrase), None)
    if bad is not None:
        return SkippedLink(
            link, SkipReason.INVALID, f"cannot link the phrase {phrase!r}: it holds {bad!r}"
        )
    return phrase


def _place(
    link: LinkRecommendation,
    page: _PageLinks,
    placed: list[tuple[int, int, LinkRecommendation, str, str]],
) -> tuple[int, str] | SkippedLink:
    """Where ``link`` goes in the original text and the title it links to, or why it goes
    nowhere."""
    phrase = _invalid(link)
    if isinstance(phrase, SkippedLink):
        return phrase
    try:
        title = link_title(link.link_target, page.site)
    except InvalidTitle as err:
        return SkippedLink(link, SkipReason.INVALID, str(err))
    if page.key(title) in page.linked:
        return SkippedLink(link, SkipReason.ALREADY_LINKED, f"the page already links to {title}")

    if page.partition is None:
        return SkippedLink(
            link,
            SkipReason.UNPARSABLE,
            "the page's markup is too tangled to tell text from markup (thousands of unclosed "
            "or nested constructs)",
        )
    start = _locate(link, page.partition, page.text)
    if isinstance(start, SkippedLink):
        return start
    end = start + len(phrase)
    for other_start, other_end, other, _, other_title in placed:
        if start < other_end and other_start < end:
            return SkippedLink(
                link,
                SkipReason.OVERLAPS,
                f"overlaps the link {other.link_text!r} → {other_title} at {other_start}",
            )
    text = page.text
    if (start > 0 and text[start - 1] == "[") or text[end : end + 1] == "]":
        return SkippedLink(
            link,
            SkipReason.IN_MARKUP,
            f"{phrase!r} at {start} stands next to a bracket: the link would read as other markup",
        )
    if _joins_word(text, start - 1, phrase[0]) or _joins_word(text, end, phrase[-1]):
        return SkippedLink(
            link, SkipReason.INSIDE_WORD, f"{phrase!r} at {start} is part of a longer word"
        )
    if _splits_character(text, start, end):
        return SkippedLink(
            link,
            SkipReason.INSIDE_WORD,
            f"{phrase!r} at {start} would split a character from the mark or joiner next to it",
        )
    return start, title


def _locate(link: LinkRecommendation, partition: NativePlainText, text: str) -> int | SkippedLink:
    phrase = link.link_text
    offset = link.wikitext_offset
    hidden = partition.hidden_from()
    # Fast path: the phrase, with its context, is still exactly where the service saw it.
    if (
        isinstance(offset, int)
        and 0 <= offset <= len(text) - len(phrase)
        and text.startswith(phrase, offset)
        and _context_matches(text, offset, link)
    ):
        if partition.is_text(offset, offset + len(phrase)):
            return offset
        if hidden is not None and offset + len(phrase) > hidden:
            return SkippedLink(
                link,
                SkipReason.IN_MARKUP,
                f"{phrase!r} at {offset} follows a comment that is never closed ('<!--' at "
                f"{hidden}): MediaWiki hides the rest of the page",
            )
        node = partition.node_at(offset)
        if node is not None and node[0] == "wikilink":
            return SkippedLink(
                link, SkipReason.ALREADY_LINKED, f"{phrase!r} at {offset} is inside a link"
            )
        return SkippedLink(
            link, SkipReason.IN_MARKUP, f"{phrase!r} at {offset} is part of markup, not text"
        )
    # The page moved around it: look for the phrase in its context, in plain text only.
    occurrences = partition.occurrences(phrase)
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


def _attaches(ch: str) -> bool:
    """Whether ``ch`` belongs to the character before it (a combining mark, a joiner, a
    variation selector, an emoji modifier or tag)."""
    code = ord(ch)
    return (
        unicodedata.category(ch).startswith("M")
        or ch in _JOINING
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _splits_character(text: str, start: int, end: int) -> bool:
    """Whether a link boundary at ``start`` or ``end`` would cut one user-perceived character
    in two: a mark or joiner separated from its base, or a flag's two regional indicators."""
    for cut in (start, end):
        if 0 < cut < len(text):
            before, after = text[cut - 1], text[cut]
            if _attaches(after) or before in _JOINING or (_regional(before) and _regional(after)):
                return True
    return False


def _assemble(
    wikitext: str,
    placed: list[tuple[int, int, LinkRecommendation, str, str]],
    skipped: list[SkippedLink],
    page: LinkRecommendationSet | None,
) -> AppliedLinks:
    parts: list[str] = []
    applied: list[AppliedLink] = []
    pos = 0
    length = 0
    for start, end, link, markup, title in sorted(placed, key=lambda p: p[0]):
        parts.append(wikitext[pos:start])
        length += start - pos
        applied.append(AppliedLink(link, start, length, markup, title))
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
