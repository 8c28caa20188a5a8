"""The table of link targets' Wikidata classes (P31) that class rules need, filled from a wiki.

>>> from wikisuggest.edits.wikidata import fill_classes
>>> wiki = wikisuggest.Wiki("https://en.wikipedia.org/w/api.php", USER_AGENT)  # doctest: +SKIP
>>> wikidata = wikisuggest.Wiki("https://www.wikidata.org/w/api.php", USER_AGENT)  # doctest: +SKIP
>>> fill_classes(engine, wiki, wikidata, "enwiki-p31.tsv")  # doctest: +SKIP

For each title, the wiki's Action API gives its Wikidata item (``prop=pageprops``,
``wikibase_item``), and Wikidata's API gives the item's P31 values (``wbgetentities``,
``props=claims``), 50 titles or items a request, one request at a time, with a pause between
requests if asked. Rows are appended to the table as they arrive (``title``, ``item``, ``p31``
tab-separated, items separated by ``|``; a title without an item gets empty cells), so the
table is its own cache: running again skips every title it already holds, and an interrupted
run resumes where it stopped. Read the table with ``LinkRules(classes=path)``.

Rows are written by the engine's own encoder, the one its reader reads back: an answer whose
item or classes are not Wikidata item ids (``Q`` and digits), or that is not shaped as the
APIs document, raises :class:`~wikisuggest.DecodeError` before its batch is written, so no
answer can add a row of its own or leave a table that later ``LinkRules(classes=…)`` cannot
read; a title that cannot be written (a tab, a line break) raises
:class:`~wikisuggest.InvalidParameter` before anything is asked.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._native import CLASS_TABLE_HEADER, class_table_row, is_wikidata_item
from ..errors import DecodeError, InvalidParameter
from .wiki import Wiki

if TYPE_CHECKING:
    from ..engine.link_engine import LinkEngine

__all__ = ["ClassesFill", "fill_classes"]

#: The table's first line.
HEADER = CLASS_TABLE_HEADER
#: Titles or items per request: the Action API's limit for clients without the bot right.
BATCH = 50


@dataclass(frozen=True, slots=True)
class ClassesFill:
    """What a run added to the table."""

    path: str
    #: Titles the table holds now.
    titles: int
    #: Titles this run looked up.
    looked_up: int
    #: Of those, titles with a Wikidata item.
    with_item: int
    requests: int


def fill_classes(
    titles: Iterable[str] | LinkEngine,
    wiki: Wiki,
    wikidata: Wiki,
    path: str | os.PathLike[str],
    *,
    batch: int = BATCH,
    pause: float = 0.0,
) -> ClassesFill:
    """Look up the Wikidata item and its P31 values of every title (or, given an engine, of
    every link target of its dataset) not yet in the table at ``path``, appending as it goes.
    ``batch`` titles go in one request (at most 50); ``pause`` seconds pass between requests.
    """
    if not 1 <= batch <= BATCH:
        raise InvalidParameter(f"batch must be between 1 and {BATCH}", parameter="batch")
    if pause < 0:
        raise InvalidParameter("pause must not be negative", parameter="pause")
    path = Path(path)
    done = _done(path)
    wanted = titles.link_targets() if hasattr(titles, "link_targets") else titles
    pending = [t for t in dict.fromkeys(wanted) if t not in done]
    for title in pending:
        # Each title is checked as its row will be written, before anything is asked.
        class_table_row(title, "", [])
    requests = 0
    with_item = 0
    new_file = not path.exists() or path.stat().st_size == 0
    with path.open("a", encoding="utf-8") as out:
        if new_file:
            out.write(HEADER)
        for chunk in _chunks(pending, batch):
            if requests:
                time.sleep(pause)
            items = _items(wiki, chunk)
            requests += 1
            classes: dict[str, list[str]] = {}
            ids = sorted({q for q in items.values() if q})
            for id_chunk in _chunks(ids, batch):
                time.sleep(pause)
                classes.update(_p31(wikidata, id_chunk))
                requests += 1
            rows = []
            for title in chunk:
                item = items.get(title, "")
                with_item += bool(item)
                rows.append(class_table_row(title, item, classes.get(item, [])))
            out.write("".join(rows))
            # A finished batch is on disk before the next one is asked for.
            out.flush()
    return ClassesFill(
        path=str(path),
        titles=len(done) + len(pending),
        looked_up=len(pending),
        with_item=with_item,
        requests=requests,
    )


def _done(path: Path) -> set[str]:
    """The titles the table already holds (a last line cut short by an interruption is
    dropped, so that its title is asked again). Lines end at ``\n`` only, as the engine
    reads them."""
    if not path.is_file():
        return set()
    text = path.read_text("utf-8")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
        path.write_text(text, "utf-8")
    lines = text.split("\n")
    return {line.split("\t", 1)[0] for line in lines[1:] if line.strip()}


def _chunks(values: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _objects(value: Any) -> list[dict[str, Any]]:
    """The objects of a list in an answer (anything else in it is not one)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _item(api: Wiki, value: Any, what: str) -> str:
    """``value`` if it is a Wikidata item id, else the answer is not what the API sends."""
    if not isinstance(value, str) or not is_wikidata_item(value):
        raise DecodeError(
            f"{api.api_url}: {what} is {_short(value)}, not a Wikidata item id; nothing of "
            "this batch is written"
        )
    return value


def _short(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _items(wiki: Wiki, titles: list[str]) -> dict[str, str]:
    """Title → its Wikidata item, for the titles that have one."""
    body = wiki.read(
        {
            "action": "query",
            "prop": "pageprops",
            "ppprop": "wikibase_item",
            "titles": "|".join(titles),
        }
    )
    query = body.get("query", {})
    if not isinstance(query, dict):
        raise DecodeError(f"{wiki.api_url}: the query result is not an object")
    # The wiki answers with its own spelling of each title: map it back to ours.
    asked = {
        entry["to"]: entry["from"]
        for entry in _objects(query.get("normalized"))
        if isinstance(entry.get("to"), str) and isinstance(entry.get("from"), str)
    }
    out = {}
    for page in _objects(query.get("pages")):
        props = page.get("pageprops")
        title = page.get("title")
        if not isinstance(props, dict) or "wikibase_item" not in props:
            continue
        item = _item(wiki, props["wikibase_item"], f"the item of {_short(title)}")
        if isinstance(title, str):
            out[asked.get(title, title)] = item
    return out


def _p31(wikidata: Wiki, ids: list[str]) -> dict[str, list[str]]:
    """Item → its P31 values (deprecated statements left out)."""
    body = wikidata.read({"action": "wbgetentities", "ids": "|".join(ids), "props": "claims"})
    entities = body.get("entities")
    if not isinstance(entities, dict):
        raise DecodeError(f"{wikidata.api_url}: wbgetentities answered without entities")
    out = {}
    for item in ids:
        entity = entities.get(item)
        if not isinstance(entity, dict):
            continue
        claims = entity.get("claims", {})
        statements = _objects(claims.get("P31") if isinstance(claims, dict) else None)
        values = []
        for statement in statements:
            if statement.get("rank") == "deprecated":
                continue
            snak = statement.get("mainsnak")
            value = snak.get("datavalue", {}) if isinstance(snak, dict) else {}
            value = value.get("value") if isinstance(value, dict) else None
            if isinstance(value, dict) and "id" in value:
                values.append(_item(wikidata, value["id"], f"a class (P31) of {item}"))
        out[item] = values
    return out
