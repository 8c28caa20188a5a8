"""Link recommendations for whole wikis on Spark (the optional ``spark`` extra).

>>> from wikisuggest.engine.spark import recommend_links
>>> pages = spark.table("wmf.mediawiki_wikitext_current")  # doctest: +SKIP
>>> pages = pages.where("page_namespace = 0")  # doctest: +SKIP
>>> links = recommend_links(pages, {"enwiki": "/srv/linkdata/enwiki"})  # doctest: +SKIP
>>> links.write.parquet("links.parquet")  # doctest: +SKIP

Each Python worker opens each wiki's engine once (a native file is memory-mapped, so the
workers of a node share one copy through the page cache) and runs it on one thread: one core
per task, as Spark schedules them. Pages reach the workers as Arrow batches of at most
``batch_rows`` rows (``mapInArrow`` on Spark 3.3+, ``mapInPandas`` before) and are processed in
chunks of about ``chunk_bytes`` of wikitext, so a batch of long pages cannot exhaust a worker's
memory. The rows are built by the extension straight from the Arrow batch (no wikitext or link
becomes a Python object). A page that fails, or runs over its time budget, gives one row with
``error`` set; it never fails the task.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _args
from .._native import LINK_ROWS_SPARK_DDL, NativeEngine, link_rows, link_rows_schema
from ..errors import DatasetError, InvalidParameter
from .dump import DEFAULT_TIME_BUDGET
from .link_engine import LinkEngine
from .options import ScoringOptions, pass_options
from .rules import LinkRules

if TYPE_CHECKING:
    import pyarrow
    from pyspark.sql import Column, DataFrame
    from typing_extensions import Unpack

__all__ = ["COLUMNS", "link_row_schema", "recommend_links"]

#: The columns of the link rows, in order (their one definition is the extension's schema).
COLUMNS: tuple[str, ...] = tuple(name.split(" ", 1)[0] for name in LINK_ROWS_SPARK_DDL.split(", "))
#: Spark's setting for the rows per Arrow batch handed to a Python worker.
_MAX_RECORDS = "spark.sql.execution.arrow.maxRecordsPerBatch"
#: Input columns, as the worker receives them.
_INPUT = ("wiki_db", "page_id", "revision_id", "page_title", "wikitext")
#: Stands for "the one dataset" when ``datasets`` is a single path.
_ANY_WIKI = ""


def link_row_schema() -> pyarrow.Schema:
    """The link rows' schema as a ``pyarrow.Schema`` (needs pyarrow); ``recommend_dump``
    writes it and ``recommend_links`` returns it."""
    import pyarrow as pa

    return pa.record_batch(link_rows_schema()).schema


@dataclass(frozen=True)
class _Job:
    """What a worker needs: where each dataset is and the recommendation options."""

    #: wiki_db (or ``_ANY_WIKI``) → local path, or SparkFiles name when ``shipped``.
    datasets: tuple[tuple[str, str], ...]
    shipped: bool
    #: The engine's pass options, as checked on the driver.
    options: tuple[tuple[str, Any], ...]
    chunk_bytes: int
    #: wiki_db (or ``_ANY_WIKI``) → its never-link rules (they pickle to a self-contained dict).
    rules: tuple[tuple[str, LinkRules], ...] = ()


#: Engines opened by this Python process, by (wiki, path): opened once per worker. A dataset
#: that failed to open is remembered too, so its pages fail without another attempt each.
_ENGINES: dict[tuple[str, str], LinkEngine | Exception] = {}


def _engine(job: _Job, wiki: str) -> LinkEngine:
    paths = dict(job.datasets)
    location = paths.get(wiki, paths.get(_ANY_WIKI))
    if location is None:
        raise DatasetError(f"no dataset for wiki {wiki!r} (known: {', '.join(sorted(paths))})")
    if job.shipped:
        from pyspark import SparkFiles

        location = SparkFiles.get(location)
    key = (wiki, location)
    engine = _ENGINES.get(key)
    if engine is None:
        try:
            engine = LinkEngine.open(location, wiki)
        except Exception as err:
            engine = err
        _ENGINES[key] = engine
    if isinstance(engine, Exception):
        raise engine.with_traceback(None)
    return engine


def _rows(job: _Job, pages: pyarrow.RecordBatch) -> Iterator[pyarrow.RecordBatch]:
    """The link rows of ``pages`` (the ``_INPUT`` columns), a chunk at a time: built by the
    extension from the Arrow batch, so no wikitext or link becomes a Python object."""
    import pyarrow as pa
    import pyarrow.compute as pc

    engines: dict[str, NativeEngine] = {}
    refused: dict[str, str] = {}
    for wiki in pc.unique(pages.column("wiki_db")).to_pylist():
        if wiki is None:
            continue
        try:
            engines[wiki] = _engine(job, wiki).native
        except Exception as err:  # a page of an unusable wiki fails alone, as its row
            refused[wiki] = f"{type(err).__name__}: {err}"
    known = dict(job.rules)
    if set(known) <= {_ANY_WIKI}:
        groups = [(pages, known.get(_ANY_WIKI))]
    else:
        # Rules differ by wiki: each wiki's pages go with their own.
        wikis = pages.column("wiki_db")
        groups = [
            (
                pages.filter(pc.is_null(wikis) if wiki is None else pc.equal(wikis, wiki)),
                known.get(wiki, known.get(_ANY_WIKI)) if wiki is not None else None,
            )
            for wiki in pc.unique(wikis).to_pylist()
        ]
    for group, rules in groups:
        options = pass_options({**dict(job.options), "rules": rules})
        for chunk in link_rows(group, engines, refused, options, job.chunk_bytes):
            rows = pa.record_batch(chunk)
            if rows.num_rows:
                yield rows


def _map_arrow(job: _Job, batches: Iterable[Any]) -> Iterator[Any]:
    for batch in batches:
        yield from _rows(job, batch)


def _int_or_none(value: Any) -> int | None:
    """Ids as Python ints; pandas hands over missing integers as NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value)


def _str_or_none(value: Any) -> Any:
    """Text values as they are, pandas' missing values as None."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _rules(rules: Any) -> tuple[tuple[str, LinkRules], ...]:
    """The rules of each wiki (``_ANY_WIKI``: of every wiki), loaded on the driver."""
    if rules is None:
        return ()
    per_wiki = rules.items() if isinstance(rules, Mapping) else [(_ANY_WIKI, rules)]
    out = []
    for wiki, given in per_wiki:
        checked = given if isinstance(given, LinkRules) else LinkRules.load(given)
        out.append((_args.text("rules", wiki) if wiki else wiki, checked))
    return tuple(sorted(out, key=lambda pair: pair[0]))


def _map_pandas(job: _Job, frames: Iterable[Any]) -> Iterator[Any]:
    """The fallback before Spark 3.3: each frame becomes an Arrow batch of pages, each batch
    of rows a frame of object columns (ints and nulls kept exact until Spark converts them)."""
    import pandas as pd
    import pyarrow as pa

    schema = pa.schema([("wiki_db", pa.string()), ("page_id", pa.int64()),
                        ("revision_id", pa.int64()), ("page_title", pa.string()),
                        ("wikitext", pa.string())])  # fmt: skip
    for frame in frames:
        columns = {name: frame[name].tolist() for name in _INPUT}
        columns["page_id"] = [_int_or_none(v) for v in columns["page_id"]]
        columns["revision_id"] = [_int_or_none(v) for v in columns["revision_id"]]
        for name in ("wiki_db", "page_title", "wikitext"):
            columns[name] = [_str_or_none(v) for v in columns[name]]
        pages = pa.RecordBatch.from_pydict(columns, schema=schema)
        for rows in _rows(job, pages):
            yield pd.DataFrame(
                {c: pd.Series(rows.column(c).to_pylist(), dtype=object) for c in COLUMNS}
            )


def _column(value: str | Column, argument: str, name: str, kind: str) -> Column:
    """``value`` (a name or an expression) cast to ``kind`` and named ``name``."""
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if isinstance(value, str):
        value = F.col(value)
    if not isinstance(value, Column):
        raise InvalidParameter(
            f"{argument} must be a column name or a Column, got {type(value).__name__}",
            parameter=argument,
        )
    return value.cast(kind).alias(name)


def _datasets(
    datasets: str | os.PathLike[str] | Mapping[str, str | os.PathLike[str]],
) -> dict[str, Path]:
    if isinstance(datasets, Mapping):
        if not datasets:
            raise InvalidParameter("datasets is empty", parameter="datasets")
        return {_args.text("datasets", wiki): Path(path) for wiki, path in datasets.items()}
    if isinstance(datasets, (str, os.PathLike)):
        return {_ANY_WIKI: Path(datasets)}
    raise InvalidParameter(
        f"datasets must be a path or a mapping wiki_db -> path, got {type(datasets).__name__}",
        parameter="datasets",
    )


def _ship(spark_context: Any, paths: dict[str, Path]) -> dict[str, str]:
    """Adds each dataset to the job's files; workers find them by name with SparkFiles."""
    names: dict[str, str] = {}
    shipped: dict[str, Path] = {}
    for wiki, path in paths.items():
        resolved = path.resolve()
        other = shipped.get(resolved.name)
        if other is not None and other != resolved:
            raise InvalidParameter(
                f"datasets {other} and {resolved} share the file name {resolved.name!r}, "
                "which shipped files cannot; rename one",
                parameter="datasets",
            )
        if other is None:
            spark_context.addFile(str(resolved), recursive=resolved.is_dir())
            shipped[resolved.name] = resolved
        names[wiki] = resolved.name
    return names


def recommend_links(
    df: DataFrame,
    datasets: str | os.PathLike[str] | Mapping[str, str | os.PathLike[str]],
    *,
    wiki_id: str | None = None,
    text_col: str | Column = "revision_text",
    title_col: str | Column = "page_title",
    page_id_col: str | Column = "page_id",
    revision_col: str | Column = "revision_id",
    wiki_col: str | Column = "wiki_db",
    rules: LinkRules | str | os.PathLike[str] | Mapping[str, Any] | None = None,
    ship: bool = False,
    batch_rows: int = 64,
    chunk_bytes: int = 16 << 20,
    method: str = "auto",
    **options: Unpack[ScoringOptions],
) -> DataFrame:
    """Link recommendations for every page of ``df``: one row per link (``wiki_db, page_id,
    revision_id, page_title, link_index, link_text, link_target, score, wikitext_offset,
    match_index, context_before, context_after, error``), exactly those of
    :meth:`LinkEngine.recommend` on each page, and one row with ``error`` set for a page that
    failed (null text, unknown wiki, …).

    The ``*_col`` arguments are column names or Column expressions (for instance
    ``F.col("revision_content_slots")["main"]["content_body"]``). ``options`` are those of
    :meth:`LinkEngine.recommend_many`, except that ``time_budget`` defaults to
    :data:`~wikisuggest.engine.dump.DEFAULT_TIME_BUDGET` seconds per page and a page over it
    is an error row, never a partial list of links. ``datasets`` is one dataset
    path (a ``.linkdata`` file or a folder, as :meth:`LinkEngine.open`) or a mapping
    ``wiki_db → path`` for a job over several wikis. With ``wiki_id``, every page belongs to
    that wiki and ``wiki_col`` is not read.

    Executors read the datasets at the same paths, unless ``ship`` is true: then they are
    added to the job (``SparkContext.addFile``) and fetched once per executor.

    ``batch_rows`` caps the rows of each Arrow batch handed to Python workers (Spark's
    ``spark.sql.execution.arrow.maxRecordsPerBatch`` is lowered to it on this session when
    higher); ``chunk_bytes`` caps the wikitext processed at once inside a batch. ``method``:
    ``"arrow"`` (``mapInArrow``, Spark 3.3+), ``"pandas"`` (``mapInPandas``) or ``"auto"``.

    ``rules`` (a :class:`~wikisuggest.LinkRules` or a rule file's path, or a mapping
    ``wiki_db → rules`` for a job over several wikis) are read here and sent to the workers
    with the job.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    if not isinstance(df, DataFrame):
        raise InvalidParameter(f"df must be a Spark DataFrame, got {type(df).__name__}")
    if method not in ("auto", "arrow", "pandas"):
        raise InvalidParameter("method must be 'auto', 'arrow' or 'pandas'", parameter="method")
    has_arrow = hasattr(DataFrame, "mapInArrow")
    if method == "arrow" and not has_arrow:
        raise InvalidParameter("mapInArrow needs Spark 3.3 or later", parameter="method")
    for name, value in [("batch_rows", batch_rows), ("chunk_bytes", chunk_bytes)]:
        if _args.integer(name, value) < 1:
            raise InvalidParameter(f"{name} must be at least 1", parameter=name)
    checked = pass_options({"time_budget": DEFAULT_TIME_BUDGET, **options})
    paths = _datasets(datasets)
    if wiki_id is not None:
        _args.text("wiki_id", wiki_id)
        if _ANY_WIKI not in paths and wiki_id not in paths:
            raise InvalidParameter(f"no dataset for wiki {wiki_id!r}", parameter="wiki_id")
    for path in paths.values():
        if not path.exists():
            raise InvalidParameter(f"{path}: no such dataset", parameter="datasets")
    spark = df.sparkSession
    if ship:
        locations = _ship(spark.sparkContext, paths)
    else:
        locations = {wiki: str(path.resolve()) for wiki, path in paths.items()}
    job = _Job(
        datasets=tuple(sorted(locations.items())),
        shipped=bool(ship),
        options=tuple(checked.items()),
        chunk_bytes=chunk_bytes,
        rules=_rules(rules),
    )
    current = spark.conf.get(_MAX_RECORDS, "10000")
    if current is None or int(current) > batch_rows:
        spark.conf.set(_MAX_RECORDS, str(batch_rows))
    wiki = F.lit(wiki_id) if wiki_id is not None else wiki_col
    pages = df.select(
        _column(wiki, "wiki_col", "wiki_db", "string"),
        _column(page_id_col, "page_id_col", "page_id", "bigint"),
        _column(revision_col, "revision_col", "revision_id", "bigint"),
        _column(title_col, "title_col", "page_title", "string"),
        _column(text_col, "text_col", "wikitext", "string"),
    )
    if method == "pandas" or not has_arrow:
        return pages.mapInPandas(functools.partial(_map_pandas, job), LINK_ROWS_SPARK_DDL)
    return pages.mapInArrow(functools.partial(_map_arrow, job), LINK_ROWS_SPARK_DDL)
