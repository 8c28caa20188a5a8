"""Readers of the Wikimedia dump formats the translation fixtures are written in.

Written for the tests (standard library only, whole files in memory): they read
``tests/data/translation/dumps/`` to check it is self-consistent and to let the loopback
api.php (``support.translation_upstream``) answer from the same data the local engine reads.

* :func:`sql_rows`: the rows of a mysqldump ``.sql.gz`` (extended ``INSERT`` statements,
  MySQL string escapes, ``NULL``, numbers).
* :func:`search_documents`: the documents of CirrusSearch index dump shards (bzip2
  Elasticsearch bulk NDJSON: an action line, then the document).
* :func:`pageview_rows`: the lines of a ``pageview_complete`` daily file.
* :func:`xml_pages`: the pages of a ``pages-articles.xml.bz2`` export.
* :func:`redirects`: the rows of a ``redirect`` table dump, typed.
* :func:`siteinfo_namespaces`: a run's ``siteinfo-namespaces.json.gz`` (api.php's siteinfo
  answer, format version 1): the namespaces with their local and canonical names and aliases.
"""

from __future__ import annotations

import bz2
import gzip
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.paths import DATA

#: The fixture tree, laid out like the dumps host.
DUMPS = DATA / "translation" / "dumps"
#: The answers production's service gave on the fixtures.
EXPECTED = DATA / "translation" / "expected"

SqlValue = int | float | str | None
_ESCAPES = {"0": "\0", "n": "\n", "r": "\r", "Z": "\x1a", "b": "\b", "t": "\t"}


class DumpFormatError(ValueError):
    """A dump file that does not read as its format says."""


def integer(value: SqlValue) -> int:
    """A column that holds a number."""
    if not isinstance(value, int):
        raise DumpFormatError(f"not an integer: {value!r}")
    return value


def text(value: SqlValue) -> str:
    """A column that holds a string."""
    if not isinstance(value, str):
        raise DumpFormatError(f"not a string: {value!r}")
    return value


def sql_rows(path: Path, table: str) -> Iterator[tuple[SqlValue, ...]]:
    """Every row of every ``INSERT INTO `table` VALUES`` statement of a ``.sql.gz`` dump."""
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    prefix = f"INSERT INTO `{table}` VALUES "
    found = False
    for line in text.split(";\n"):
        start = line.find(prefix)
        if start < 0 or (start > 0 and line[start - 1] != "\n"):
            continue
        found = True
        yield from _tuples(line[start + len(prefix) :])
    if not found and f"CREATE TABLE `{table}`" not in text:
        raise DumpFormatError(f"{path.name}: no table `{table}`")


_FIELD = r"'(?:[^'\\]|\\.)*'|[^,()']+"
_ROW = re.compile(rf"\(((?:{_FIELD})(?:,(?:{_FIELD}))*)\)(,|$)", re.S)
_VALUE = re.compile(r"'((?:[^'\\]|\\.)*)'|([^,()']+)", re.S)
_ESCAPE = re.compile(r"\\(.)", re.S)


def _tuples(values: str) -> Iterator[tuple[SqlValue, ...]]:
    position = 0
    while position < len(values):
        row = _ROW.match(values, position)
        if row is None:
            raise DumpFormatError(f"not a row at {position}: {values[position : position + 40]!r}")
        position = row.end()
        fields: list[SqlValue] = []
        for quoted, bare in _VALUE.findall(row.group(1)):
            if bare:
                if bare == "NULL":
                    fields.append(None)
                elif any(c in bare for c in ".eE"):
                    fields.append(float(bare))
                else:
                    fields.append(int(bare))
            else:
                fields.append(_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), quoted))
        yield tuple(fields)


def search_documents(paths: list[Path]) -> Iterator[dict[str, Any]]:
    """The documents of index dump shards, each checked against its action line."""
    for path in paths:
        lines = bz2.decompress(path.read_bytes()).decode("utf-8").splitlines()
        if len(lines) % 2:
            raise DumpFormatError(f"{path.name}: an action line without its document")
        for action_line, document_line in zip(lines[::2], lines[1::2], strict=True):
            action = json.loads(action_line)
            document = json.loads(document_line)
            if str(action["index"]["_id"]) != str(document["page_id"]):
                raise DumpFormatError(f"{path.name}: action {action} for {document['page_id']}")
            yield document


def index_shards(date: str, index: str) -> list[Path]:
    """The shards of one index of one index dump (``enwiki_content``), in name order."""
    folder = DUMPS / "other" / "cirrus_search_index" / date / f"index_name={index}"
    return sorted(folder.glob(f"{index}-{date}-*.json.bz2"))


@dataclass(frozen=True)
class PageviewRow:
    wiki: str  # "en.wikipedia"
    title: str  # as requested, underscores for spaces
    page_id: int | None
    access: str  # desktop, mobile-web, mobile-app
    views: int
    hourly: str  # A..X (hours 0..23) each followed by that hour's count


def pageview_rows(path: Path) -> Iterator[PageviewRow]:
    for line in bz2.decompress(path.read_bytes()).decode("utf-8").splitlines():
        wiki, title, page_id, access, views, hourly = line.split(" ")
        yield PageviewRow(
            wiki, title, None if page_id == "null" else int(page_id), access, int(views), hourly
        )


def pageview_file(day: str, kind: str = "user") -> Path:
    """``day`` as ``YYYYMMDD``."""
    return (
        DUMPS
        / "other"
        / "pageview_complete"
        / day[:4]
        / f"{day[:4]}-{day[4:6]}"
        / f"pageviews-{day}-{kind}.bz2"
    )


@dataclass(frozen=True)
class XmlPage:
    page_id: int
    ns: int
    title: str  # with its namespace prefix
    revision: int
    text: str
    text_sha1: str


def xml_pages(path: Path) -> Iterator[XmlPage]:
    root = ET.fromstring(bz2.decompress(path.read_bytes()))
    ns = root.tag.split("}")[0] + "}"
    for page in root.iter(f"{ns}page"):
        revision = page.find(f"{ns}revision")
        assert revision is not None
        text = revision.find(f"{ns}text")
        assert text is not None
        yield XmlPage(
            page_id=int(page.findtext(f"{ns}id", "0")),
            ns=int(page.findtext(f"{ns}ns", "0")),
            title=page.findtext(f"{ns}title", ""),
            revision=int(revision.findtext(f"{ns}id", "0")),
            text=text.text or "",
            text_sha1=text.get("sha1", ""),
        )


@dataclass(frozen=True)
class Redirect:
    page_id: int  # rd_from: the redirect page
    namespace: int  # the target's
    title: str  # the target's, underscores for spaces
    interwiki: str | None
    fragment: str | None


def redirects(path: Path) -> Iterator[Redirect]:
    for row in sql_rows(path, "redirect"):
        if len(row) != 5:
            raise DumpFormatError(f"{path.name}: a redirect row of {len(row)} columns")
        interwiki, fragment = row[3], row[4]
        yield Redirect(
            integer(row[0]),
            integer(row[1]),
            text(row[2]),
            None if interwiki is None else text(interwiki),
            None if fragment is None else text(fragment),
        )


@dataclass(frozen=True)
class Namespace:
    id: int
    name: str  # the local name ("" for the main namespace)
    canonical: str | None  # MediaWiki's own name ("Project" for "Wikipedia")
    content: bool
    aliases: tuple[str, ...]


def siteinfo(path: Path) -> dict[str, Any]:
    """The ``query`` object of a run's ``siteinfo-namespaces.json.gz``."""
    answer = json.loads(gzip.decompress(path.read_bytes()))
    if not isinstance(answer, dict) or not isinstance(answer.get("query"), dict):
        raise DumpFormatError(f"{path.name}: no query object")
    query: dict[str, Any] = answer["query"]
    return query


def siteinfo_namespaces(path: Path) -> dict[int, Namespace]:
    """Namespace id → its names, from format version 1 (the name under ``*``, ``true`` as
    ``""``, ``false`` left out)."""
    query = siteinfo(path)
    aliases: dict[int, list[str]] = {}
    for alias in query.get("namespacealiases", []):
        aliases.setdefault(int(alias["id"]), []).append(str(alias["*"]))
    found = {}
    for key, entry in query["namespaces"].items():
        if int(key) != entry["id"]:
            raise DumpFormatError(f"{path.name}: namespace {key} says it is {entry['id']}")
        found[int(key)] = Namespace(
            id=int(key),
            name=str(entry["*"]),
            canonical=entry.get("canonical"),
            content="content" in entry,
            aliases=tuple(aliases.get(int(key), [])),
        )
    return found


def run_file(wiki: str, run: str, table: str) -> Path:
    """``enwiki``, ``20260601``, ``page`` → the run's ``enwiki-20260601-page.sql.gz``; a name
    with its extension (``siteinfo-namespaces.json.gz``) is kept."""
    suffix = "" if "." in table else ".sql.gz"
    return DUMPS / wiki / run / f"{wiki}-{run}-{table}{suffix}"
