"""Translation catalogs and gap tables for many wikis on Spark (the optional ``spark`` extra).

>>> from wikisuggest.translation.spark import build_catalogs, missing_articles
>>> catalogs = build_catalogs(spark, ["enwiki", "frwiki"], "/shared/catalogs")  # doctest: +SKIP
>>> gaps = missing_articles(spark, catalogs, [("enwiki", "sw"), ("frwiki", "sw")])  # doctest: +SKIP
>>> gaps.write.partitionBy("source", "target").parquet("gaps")  # doctest: +SKIP

:func:`build_catalogs` runs the catalog build of :func:`wikisuggest.translation.fetch` on the
executors, one wiki per task (each build streams its dumps in bounded memory, so a task needs
about the build's ``memory`` and a core), and puts each catalog in a shared folder.
:func:`missing_articles` is the gap table of :meth:`TranslationEngine.missing` as a Spark query
over the catalogs' ``articles.parquet``: production's rule (no interlanguage link with the
target's code as links store it, disambiguation pages left out), every article, for any
number of (source, target) pairs at once.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._native import translation_constants
from ..datasets.published import wiki_id
from ..errors import InvalidParameter

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["build_catalogs", "missing_articles"]

#: Language code → the code interlanguage links store (the one mapping, from the extension).
DOMAIN_MAPPING: dict[str, str] = dict(translation_constants()["domain_mapping"])


def _build_one(
    item: tuple[str, str, tuple[str, ...], str | None, str | None, int],
) -> tuple[str, str]:
    """On an executor: fetch and build one wiki's catalog, then copy it under ``out``."""
    from .fetch import fetch

    wiki, out, parts, day, cache_dir, memory = item
    path = fetch(wiki, parts=parts, day=day, cache_dir=cache_dir, memory=memory)
    target = Path(out) / wiki
    staging = Path(out) / f".{wiki}.copy-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(path, staging)
    old = Path(out) / f".{wiki}.old-{os.getpid()}"
    if target.exists():
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)
    return wiki, str(target)


def build_catalogs(
    spark: SparkSession,
    wikis: Iterable[str],
    out: str | os.PathLike[str],
    *,
    parts: Sequence[str] = ("sql",),
    day: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    memory: int = 1 << 30,
) -> dict[str, str]:
    """Builds the catalog of each of ``wikis`` on the executors (one task per wiki) into
    ``out/<wiki>/`` (a folder every executor and the driver can read); returns wiki → folder.
    ``cache_dir`` is each executor's download cache (default: its platform cache)."""
    names = [wiki_id(w) for w in wikis]
    if not names:
        return {}
    os.makedirs(out, exist_ok=True)
    items = [
        (
            w,
            os.fspath(out),
            tuple(parts),
            day,
            None if cache_dir is None else os.fspath(cache_dir),
            memory,
        )
        for w in names
    ]
    rdd = spark.sparkContext.parallelize(items, len(items))
    return dict(rdd.map(_build_one).collect())


def missing_articles(
    spark: SparkSession,
    catalogs: Mapping[str, str | os.PathLike[str]],
    pairs: Iterable[tuple[str, str]],
    *,
    order_by: str = "pageviews",
) -> DataFrame:
    """Every article of each pair's source that its target lacks, as a DataFrame with the
    columns ``source``, ``target``, ``rank`` (1 = most viewed, or most linked with
    ``order_by="langlinks_count"``) and those of :meth:`TranslationEngine.missing`
    (``title``, ``page_id``, ``wikidata_id``, ``langlinks_count``, ``pageviews``,
    ``page_len``, ``text_bytes``, ``lead_section_size``, ``topics``, ``countries`` as labels).
    ``catalogs`` maps source wiki ids to catalog folders."""
    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    if order_by not in ("pageviews", "langlinks_count"):
        raise InvalidParameter(
            f"order_by must be 'pageviews' or 'langlinks_count', got {order_by!r}",
            parameter="order_by",
        )
    folders = {wiki_id(w): os.fspath(p) for w, p in catalogs.items()}
    wanted: dict[str, list[str]] = {}
    for source, target in pairs:
        source = wiki_id(source)
        if source not in folders:
            raise InvalidParameter(f"no catalog for {source}", parameter="catalogs")
        wanted.setdefault(source, []).append(target)
    frames = []
    for source, targets in wanted.items():
        articles = spark.read.parquet(str(Path(folders[source]) / "articles.parquet"))
        pairs_df = spark.createDataFrame(
            [(t, DOMAIN_MAPPING.get(t, t)) for t in dict.fromkeys(targets)],
            "target string, link_code string",
        )
        joined = articles.where(~F.col("disambiguation")).crossJoin(pairs_df)
        lacking = joined.where(
            ~F.exists("langlinks", lambda link: link["lang"] == F.col("link_code"))
        )
        frames.append(lacking.withColumn("source", F.lit(source)))
    if not frames:
        raise InvalidParameter("give at least one (source, target) pair", parameter="pairs")
    table = frames[0]
    for frame in frames[1:]:
        table = table.unionByName(frame)
    views = F.coalesce(F.col("pageviews"), F.lit(-1))
    keys: list[Any] = (
        [views.desc(), F.col("langlinks_count").desc()]
        if order_by == "pageviews"
        else [F.col("langlinks_count").desc(), views.desc()]
    )
    window = Window.partitionBy("source", "target").orderBy(*keys, F.col("page_id").asc())
    return table.select(
        "source",
        "target",
        F.row_number().over(window).alias("rank"),
        "title",
        "page_id",
        "wikidata_id",
        "langlinks_count",
        "pageviews",
        "page_len",
        "text_bytes",
        "lead_section_size",
        F.transform("topics", lambda t: t["label"]).alias("topics"),
        F.transform("countries", lambda t: t["label"]).alias("countries"),
    )
