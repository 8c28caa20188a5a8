"""The table of links that whole-wiki runs write (``wikisuggest.dump`` and ``wikisuggest.spark``):
one row per recommended link, and one row with ``error`` set for a page that failed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..batch import BatchItem
from ..records import LinkRecommendationSet

if TYPE_CHECKING:
    import pyarrow

#: Column names and types, in order (types as Arrow names them).
SCHEMA: tuple[tuple[str, str], ...] = (
    ("wiki_db", "string"),
    ("page_id", "int64"),
    ("revision_id", "int64"),
    ("page_title", "string"),
    ("link_index", "int64"),
    ("link_text", "string"),
    ("link_target", "string"),
    ("score", "double"),
    ("wikitext_offset", "int64"),
    ("match_index", "int64"),
    ("context_before", "string"),
    ("context_after", "string"),
    ("error", "string"),
)
COLUMNS: tuple[str, ...] = tuple(name for name, _ in SCHEMA)

_SPARK_TYPES = {"string": "string", "int64": "bigint", "double": "double"}
#: The same schema as a Spark DDL string.
SPARK_DDL = ", ".join(f"{name} {_SPARK_TYPES[kind]}" for name, kind in SCHEMA)


def arrow_schema() -> pyarrow.Schema:
    """The schema as a ``pyarrow.Schema`` (needs pyarrow)."""
    import pyarrow as pa

    return pa.schema([(name, pa.type_for_alias(kind)) for name, kind in SCHEMA])


def error_text(error: BaseException) -> str:
    """How a failed page's error reads in the ``error`` column."""
    return f"{type(error).__name__}: {error}"


class LinkRows:
    """Rows collected column by column, ready to become an Arrow record batch."""

    __slots__ = ("columns", "errors", "links")

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in COLUMNS}
        self.links = 0
        self.errors = 0

    def __len__(self) -> int:
        return len(self.columns["wiki_db"])

    def add_page(
        self,
        wiki_db: str,
        page_id: int | None,
        revision_id: int | None,
        page_title: str | None,
        item: BatchItem[LinkRecommendationSet],
    ) -> None:
        """The rows of one page: its links, or its error."""
        if item.error is not None:
            self.add_error(wiki_db, page_id, revision_id, page_title, item.error)
            return
        assert item.result is not None
        c = self.columns
        for link in item.result.links:
            c["wiki_db"].append(wiki_db)
            c["page_id"].append(page_id)
            c["revision_id"].append(revision_id)
            c["page_title"].append(page_title)
            c["link_index"].append(link.link_index)
            c["link_text"].append(link.link_text)
            c["link_target"].append(link.link_target)
            c["score"].append(link.score)
            c["wikitext_offset"].append(link.wikitext_offset)
            c["match_index"].append(link.match_index)
            c["context_before"].append(link.context_before)
            c["context_after"].append(link.context_after)
            c["error"].append(None)
        self.links += len(item.result.links)

    def add_error(
        self,
        wiki_db: str | None,
        page_id: int | None,
        revision_id: int | None,
        page_title: str | None,
        error: BaseException,
    ) -> None:
        """The row of a page that failed."""
        row = dict.fromkeys(COLUMNS)
        row.update(
            wiki_db=wiki_db,
            page_id=page_id,
            revision_id=revision_id,
            page_title=page_title,
            error=error_text(error),
        )
        for name, value in row.items():
            self.columns[name].append(value)
        self.errors += 1

    def to_arrow(self) -> pyarrow.RecordBatch:
        """The rows as a ``pyarrow.RecordBatch`` (needs pyarrow)."""
        import pyarrow as pa

        return pa.RecordBatch.from_pydict(self.columns, schema=arrow_schema())
