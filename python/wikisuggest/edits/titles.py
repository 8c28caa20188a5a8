"""Which link targets MediaWiki reads as one plain link to an article, by its title rules.

``[[target|phrase]]`` is a link to an article only when ``target`` is a valid title of the
main namespace. Otherwise MediaWiki reads the markup as something else: ``Category:Cats``
(also ``Category\\u00a0:Cats``, and ``Catégorie:Félin`` on a French wiki) removes the phrase and
categorises the page, ``fr:Chat`` adds a language link, ``File:`` embeds a file, ``~~~~``
signs, ``__NOTOC__`` switches a behaviour, and characters a title cannot hold (``%5D``,
``&#93;``, brackets, NUL, U+FFFD, a URL) leave literal brackets in the article.
:func:`link_title` applies MediaWiki 1.39's rules (``MediaWikiTitleCodec``, the parser's
link handling) and returns the title the link will go to, or raises :class:`InvalidTitle`.

Namespace names and interwiki prefixes differ between wikis. With a wiki's own
:class:`SiteInfo` (:meth:`Wiki.siteinfo <wikisuggest.Wiki.siteinfo>`) they are that wiki's
exactly; without one, a table of every namespace name and alias of every language MediaWiki
ships, every language code and the common interwiki prefixes is used (``data/``).
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from dataclasses import dataclass, field
from importlib import resources

from .._native import MAX_TITLE_BYTES, title_problem
from ..errors import InvalidParameter

__all__ = ["MAX_TITLE_BYTES", "InvalidTitle", "SiteInfo", "link_title"]

#: What MediaWiki treats as white space in a title (``MediaWikiTitleCodec``'s
#: ``$rxWhitespace``): collapsed to one space, and ignored around a namespace's colon.
_WHITESPACE = re.compile("[ _\u00a0\u1680\u180e\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
#: Sequences a title may not hold: percent escapes and HTML entities (``$rxTc``).
_ESCAPES = re.compile(r"%[0-9A-Fa-f]{2}|&[A-Za-z0-9\x80-\U0010ffff]+;|&#[0-9]+;|&#x[0-9A-Fa-f]+;")
#: Relative paths (``Title::secureAndSplit``).
_RELATIVE = re.compile(r"^\.\.?(?:/|$)|/\.\.?(?:/|$)")
#: ``$wgUrlProtocols`` (MediaWiki 1.39's default): a link target starting with one is no link.
_URL = re.compile(
    r"^(?:bitcoin:|ftp://|ftps://|geo:|git://|gopher://|https?://|ircs?://|magnet:|mailto:"
    r"|matrix:|mms://|news:|nntp://|redis://|sftp://|sips?:|sms:|ssh://|svn://|tel:"
    r"|telnet://|urn:|worldwind://|xmpp:|//)",
    re.IGNORECASE,
)
#: Invisible characters that MediaWiki strips from titles (so the markup would show one
#: target and link another) or that change how the text around them is drawn.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: Joiners are format characters that some scripts need inside words.
_JOINERS = frozenset("\u200c\u200d")


class InvalidTitle(InvalidParameter):
    """A link target that MediaWiki would not read as one link to an article."""


@dataclass(frozen=True, slots=True)
class SiteInfo:
    """What a wiki says about its titles (``action=query&meta=siteinfo``)."""

    #: The content language (``en``, ``fr``, …).
    lang: str
    #: Whether the first letter of a title is always upper case (``case: first-letter``).
    first_letter_case: bool = True
    #: Every name of every namespace but the main one: local names, canonical names, aliases.
    namespace_names: tuple[str, ...] = ()
    #: The interwiki prefixes, language links among them.
    interwiki_prefixes: tuple[str, ...] = ()
    #: Every alias of every double-underscore behaviour switch (``__NOTOC__``, …).
    behaviour_switches: tuple[str, ...] = ()
    #: ``legaltitlechars`` as the wiki reports it (informative; the default is assumed).
    legal_title_chars: str = field(default="", repr=False)

    def __repr__(self) -> str:
        return (
            f"SiteInfo(lang={self.lang!r}, {len(self.namespace_names)} namespace names, "
            f"{len(self.interwiki_prefixes)} interwiki prefixes)"
        )


@dataclass(frozen=True, slots=True)
class _Prefixes:
    namespaces: frozenset[str]
    #: Localised names built from the project's name (``$1 talk``), as patterns.
    patterns: tuple[re.Pattern[str], ...]
    interwiki: frozenset[str]

    def meaning(self, prefix: str) -> str | None:
        key = _key(prefix)
        if key in self.namespaces or any(p.fullmatch(key) for p in self.patterns):
            return "a namespace"
        if key in self.interwiki:
            return "an interwiki or language prefix"
        return None


def _key(name: str) -> str:
    return _WHITESPACE.sub(" ", name).strip(" ").lower()


@functools.cache
def _builtin() -> _Prefixes:
    raw = json.loads(
        resources.files(__package__).joinpath("data/title_prefixes.json").read_text("utf-8")
    )
    names = [n for n in raw["namespaces"] if "$1" not in n]
    patterns = tuple(
        re.compile(".+".join(re.escape(part) for part in n.split("$1")))
        for n in raw["namespaces"]
        if "$1" in n
    )
    return _Prefixes(frozenset(names), patterns, frozenset(raw["interwiki"]))


@functools.lru_cache(maxsize=16)
def _site_prefixes(site: SiteInfo) -> _Prefixes:
    return _Prefixes(
        frozenset(_key(n) for n in site.namespace_names),
        (),
        frozenset(_key(p) for p in site.interwiki_prefixes),
    )


def link_title(target: str, site: SiteInfo | None = None) -> str:
    """The title of the article ``[[target|…]]`` links to (white space collapsed, the first
    letter upper case where the wiki capitalises it), or :class:`InvalidTitle` saying why
    MediaWiki would read the markup as something else."""
    if not isinstance(target, str):
        raise InvalidTitle(
            f"a title must be a str, got {type(target).__name__}", parameter="target"
        )
    reason = _refusal(target, site)
    if reason is not None:
        raise InvalidTitle(
            f"{_visible(target)} is not an article title: {reason}", parameter="target"
        )
    title = _WHITESPACE.sub(" ", target).strip(" ")
    first_letter = True if site is None else site.first_letter_case
    return title[:1].upper() + title[1:] if first_letter else title


def _refusal(target: str, site: SiteInfo | None) -> str | None:
    for ch in target:
        if 0xD800 <= ord(ch) <= 0xDFFF:
            return "it holds a lone surrogate (not text)"
        if ch in _BIDI or (unicodedata.category(ch) == "Cf" and ch not in _JOINERS):
            return f"it holds the invisible character U+{ord(ch):04X}"
    # MediaWiki's rules for every title (its characters, its length), checked where every
    # front end checks them; what follows are the rules of a link's target.
    problem = title_problem(_WHITESPACE.sub(" ", target).strip(" "))
    if problem is not None:
        return problem
    escape = _ESCAPES.search(target)
    if escape:
        return f"a title cannot hold the escape {escape.group()!r}"
    if "~~~" in target:
        return "three tildes sign the page when it is saved"
    if "__" in target:
        return "double underscores are how behaviour switches (__NOTOC__) are written"
    if _URL.match(target.strip()):
        return "it is a URL"
    title = _WHITESPACE.sub(" ", target).strip(" ")
    if title.startswith(":"):
        return "a leading colon links to a namespace or another wiki"
    if title.startswith("/") or _RELATIVE.search(title):
        return "it is a relative path (a subpage link)"
    if ":" in title:
        prefix = title.split(":", 1)[0]
        meaning = (_builtin() if site is None else _site_prefixes(site)).meaning(prefix)
        if meaning is not None:
            return f"{prefix.strip()!r} is {meaning}"
    return None


def _visible(text: str) -> str:
    """``text`` quoted, with invisible and control characters spelled out (``repr`` escapes
    every character that is not printable)."""
    return repr(text)
