"""Where a page's wikitext is plain article text, and which pages it already links to.

The link engine only ever suggests phrases from the page's top-level text: not from templates,
links, tags (bold and italics included), comments, headings, tables, external links or entities.
Placing a suggestion back into the text needs the same partition, so that a phrase is never
linked inside markup and occurrences are counted where the engine counted them.

This is a small scanner, not a parser: it finds the spans of the constructs above and treats
everything else as text. Unclosed ``[[``, ``{{`` and ``{|`` stay text, as MediaWiki's parser
leaves them.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

__all__ = ["TextMap", "linked_targets", "normalise_title"]

_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)(?:\s[^<>]*?)?\s*(/?)>")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_URL = re.compile(
    r"(?:https?|ftp|ftps|mailto|news|irc|ircs|gopher|telnet|sftp|ssh)://[^\s<>\[\]\"{}|]+"
    r"|(?:mailto|news):[^\s<>\[\]\"{}|]+",
    re.IGNORECASE,
)
_BRACKET_URL = re.compile(
    r"\[(?:(?:https?|ftp|ftps|irc|ircs|gopher|telnet|sftp|ssh)://|//|mailto:|news:)[^\]\n]*\]",
    re.IGNORECASE,
)
_LIST_MARKER = re.compile(r"[*#:;]+|-{4,}")
_HEADING = re.compile(r"=+[^\n]*=")
_LINK_TARGET = re.compile(r"\[\[([^\[\]|\n{}<>]*)(?:\||\]\])")


def normalise_title(title: str) -> str:
    """A link target as MediaWiki compares titles on a wiki with capitalised first letters:
    ``_`` as a space, surrounding spaces and any ``#fragment`` dropped, first letter upper."""
    title = title.replace("_", " ").split("#", 1)[0].strip()
    title = " ".join(title.split(" "))
    return title[:1].upper() + title[1:] if title else title


def linked_targets(wikitext: str) -> set[str]:
    """The normalised targets of every ``[[…]]`` link in ``wikitext``, at any depth (links in
    image captions and template arguments included)."""
    targets = set()
    for match in _LINK_TARGET.finditer(wikitext):
        target = normalise_title(match.group(1))
        if target:
            targets.add(target)
    return targets


def _balanced(text: str, start: int, opener: str, closer: str) -> int | None:
    """End of the construct opened at ``start`` (``opener`` nested), or None if unclosed."""
    depth = 0
    i = start
    n = len(text)
    while i < n:
        if text.startswith(opener, i):
            depth += 1
            i += len(opener)
        elif text.startswith(closer, i):
            depth -= 1
            i += len(closer)
            if depth == 0:
                return i
        elif text.startswith("<!--", i):
            end = text.find("-->", i + 4)
            i = n if end < 0 else end + 3
        else:
            i += 1
    return None


def _table_end(text: str, start: int) -> int | None:
    """End of the table ``{|`` at a line start, nested tables counted; None if unclosed."""
    depth = 0
    pos = start
    for line in text[start:].splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped.startswith("{|"):
            depth += 1
        elif stripped.startswith("|}"):
            depth -= 1
            if depth == 0:
                return pos + len(line.rstrip("\r\n"))
        pos += len(line)
    return None


def _tag_end(text: str, match: re.Match[str]) -> int:
    """End of the element whose opening tag is ``match``: its closing tag (same name, nested
    ones counted) or, for a self-closing, closing or unclosed tag, the tag itself."""
    closing, name, self_closing = match.group(1), match.group(2).lower(), match.group(3)
    if closing or self_closing:
        return match.end()
    pattern = re.compile(rf"<(/?){re.escape(name)}(?:\s[^<>]*?)?\s*(/?)>", re.IGNORECASE)
    depth = 1
    for other in pattern.finditer(text, match.end()):
        if other.group(2):
            continue
        depth += -1 if other.group(1) else 1
        if depth == 0:
            return other.end()
    return match.end()


def _quote_end(text: str, start: int) -> int:
    """End of the bold/italic span whose quote run starts at ``start``: the next quote run of
    two or more on the same line, or the run alone when none follows."""
    run = start
    while run < len(text) and text[run] == "'":
        run += 1
    line_end = text.find("\n", run)
    line_end = len(text) if line_end < 0 else line_end
    close = text.find("''", run, line_end)
    if close < 0:
        return run
    while close < line_end and text[close] == "'":
        close += 1
    return close


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    link: bool


class TextMap:
    """The partition of one page: which code point ranges are plain article text."""

    __slots__ = ("_markup", "_markup_starts", "_text", "_text_starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._markup = _scan(text)
        self._markup_starts = [span.start for span in self._markup]
        self._text = _complement(self._markup, len(text))
        self._text_starts = [start for start, _ in self._text]

    def _covering(self, offset: int) -> _Span | None:
        i = bisect.bisect_right(self._markup_starts, offset) - 1
        if i >= 0 and self._markup[i].start <= offset < self._markup[i].end:
            return self._markup[i]
        return None

    def in_link(self, offset: int) -> bool:
        """Whether ``offset`` lies inside a ``[[…]]`` link."""
        span = self._covering(offset)
        return span is not None and span.link

    def is_text(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` lies within one run of plain text."""
        i = bisect.bisect_right(self._text_starts, start) - 1
        return i >= 0 and self._text[i][0] <= start and end <= self._text[i][1]

    def occurrences(self, phrase: str) -> list[int]:
        """Start offsets of ``phrase`` in plain text, non-overlapping within each text run,
        in page order (how the engine counts ``match_index``)."""
        found: list[int] = []
        if not phrase:
            return found
        for start, end in self._text:
            i = self.text.find(phrase, start, end)
            while i >= 0:
                found.append(i)
                i = self.text.find(phrase, i + len(phrase), end)
        return found


def _scan(text: str) -> list[_Span]:
    spans: list[_Span] = []
    n = len(text)
    i = 0
    while i < n:
        end: int | None = None
        link = False
        ch = text[i]
        line_start = i == 0 or text[i - 1] == "\n"
        if ch == "<":
            if text.startswith("<!--", i):
                close = text.find("-->", i + 4)
                end = n if close < 0 else close + 3
            else:
                tag = _TAG.match(text, i)
                if tag:
                    end = _tag_end(text, tag)
        elif ch == "{":
            if text.startswith("{{", i):
                end = _balanced(text, i, "{{", "}}")
            elif line_start and text.startswith("{|", i):
                end = _table_end(text, i)
        elif ch == "[":
            if text.startswith("[[", i):
                end = _balanced(text, i, "[[", "]]")
                link = end is not None
            else:
                url = _BRACKET_URL.match(text, i)
                end = url.end() if url else None
        elif ch == "&":
            entity = _ENTITY.match(text, i)
            end = entity.end() if entity else None
        elif ch == "'" and text.startswith("''", i):
            end = _quote_end(text, i)
        elif line_start and ch == "=":
            heading = _HEADING.match(text, i)
            end = heading.end() if heading else None
        elif line_start and ch in "*#:;-":
            marker = _LIST_MARKER.match(text, i)
            end = marker.end() if marker else None
        elif ch.isalpha():
            url = _URL.match(text, i) if (i == 0 or not text[i - 1].isalnum()) else None
            end = url.end() if url else None
        if end is not None and end > i:
            spans.append(_Span(i, end, link))
            i = end
        else:
            i += 1
    return spans


def _complement(markup: list[_Span], length: int) -> list[tuple[int, int]]:
    runs = []
    pos = 0
    for span in markup:
        if span.start > pos:
            runs.append((pos, span.start))
        pos = max(pos, span.end)
    if pos < length:
        runs.append((pos, length))
    return runs
