"""Gap tables: every article a target lacks, checked against a computation of production's rule
made here from the dumps themselves (the test side's own readers), and the same table on
Spark; the engine's calls run without the GIL, in asyncio too."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from support.dump_formats import integer, pageview_file, pageview_rows, run_file, sql_rows, text

from wikisuggest import InvalidParameter, TranslationEngine

LINK_CODES = {"nb": "no", "yue": "zh-yue", "be-tarask": "be-x-old"}


def expected_missing(target: str) -> dict[str, int]:
    """Title → views of every enwiki article whose interlanguage links lack ``target``'s code,
    disambiguation pages left out, from the fixture dumps."""
    pages = {
        integer(r[0]): text(r[2])
        for r in sql_rows(run_file("enwiki", "20260601", "page"), "page")
        if integer(r[1]) == 0 and integer(r[3]) == 0
    }
    disambiguation = {
        integer(r[0])
        for r in sql_rows(run_file("enwiki", "20260601", "page_props"), "page_props")
        if text(r[1]) == "disambiguation"
    }
    links: dict[int, set[str]] = defaultdict(set)
    for r in sql_rows(run_file("enwiki", "20260601", "langlinks"), "langlinks"):
        links[integer(r[0])].add(text(r[1]))
    views: dict[str, int] = defaultdict(int)
    for row in pageview_rows(pageview_file("20260614")):
        if row.wiki == "en.wikipedia":
            views[row.title] += row.views
    code = LINK_CODES.get(target, target)
    return {
        title.replace("_", " "): views.get(title, 0)
        for page_id, title in pages.items()
        if page_id not in disambiguation and code not in links[page_id]
    }


@pytest.mark.parametrize("target", ["sw", "fr", "nb", "be-tarask"])
def test_every_missing_article_most_viewed_first(catalogs: dict[str, Path], target: str) -> None:
    engine = TranslationEngine.open(catalogs["enwiki"])
    table = engine.missing(target)
    want = expected_missing(target)
    assert table.num_rows == len(want)
    rows = table.to_pylist()
    assert {r["title"]: r["pageviews"] for r in rows} == want
    views = [r["pageviews"] for r in rows]
    assert views == sorted(views, reverse=True)
    assert table.column_names == [
        "title",
        "page_id",
        "wikidata_id",
        "langlinks_count",
        "pageviews",
        "page_len",
        "text_bytes",
        "lead_section_size",
        "topics",
        "countries",
    ]


def test_filters_several_targets_and_bad_arguments(catalogs: dict[str, Path]) -> None:
    engine = TranslationEngine.open(catalogs["enwiki"])
    everything = engine.missing("sw").to_pylist()
    women = engine.missing("sw", topic="women").to_pylist()
    assert women and all("women" in r["topics"] for r in women)
    assert {r["title"] for r in women} < {r["title"] for r in everything}
    small = engine.missing("sw", max_size=2000).to_pylist()
    assert small and all(r["page_len"] <= 2000 for r in small)
    chosen = [everything[0]["title"], everything[1]["title"]]
    assert [r["title"] for r in engine.missing("sw", titles=chosen).to_pylist()] == chosen
    both = engine.missing(["sw", "yo"])
    assert both.column_names[0] == "target"
    assert set(both.column("target").to_pylist()) == {"sw", "yo"}
    by_links = engine.missing("sw", order_by="langlinks_count").to_pylist()
    counts = [r["langlinks_count"] for r in by_links]
    assert counts == sorted(counts, reverse=True)
    bad_arguments: list[dict[str, Any]] = [{"order_by": "size"}, {"min_size": -1}]
    for bad in bad_arguments:
        with pytest.raises(InvalidParameter):
            engine.missing("sw", **bad)
    with pytest.raises(InvalidParameter):
        engine.missing("en")


def test_calls_release_the_gil_and_have_asyncio_twins(catalogs: dict[str, Path]) -> None:
    engine = TranslationEngine.open(catalogs["enwiki"])
    ticks = 0
    stop = threading.Event()

    def tick() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    thread = threading.Thread(target=tick)
    thread.start()
    try:
        for _ in range(20):
            engine.missing(["sw", "fr", "de", "ja", "yo"])
    finally:
        stop.set()
        thread.join()
    assert ticks > 5

    async def both() -> tuple[int, int]:
        table, items = await asyncio.gather(
            engine.missing_async("sw"), engine.recommend_async("sw", count=3, random_seed=1)
        )
        return table.num_rows, len(items)

    rows, items = asyncio.run(both())
    assert rows == engine.missing("sw").num_rows
    assert items == 3
    assert engine.recommend("sw", count=3, random_seed=1) == engine.recommend(
        "sw", count=3, random_seed=1
    )


@pytest.mark.filterwarnings("ignore:distutils Version classes:DeprecationWarning")
# PySpark leaves the sockets it reads results from to the garbage collector.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.timeout(300)
def test_the_gap_table_on_spark(catalogs: dict[str, Path]) -> None:
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime")
    from pyspark.sql import SparkSession

    from wikisuggest.translation.spark import missing_articles

    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # Spark's context installs a Ctrl-C handler that outlives it: put Python's own back.
    ctrl_c = signal.getsignal(signal.SIGINT)
    spark = (
        SparkSession.builder.master("local[1]")
        .appName("gaps")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    try:
        gaps = missing_articles(
            spark, {"enwiki": catalogs["enwiki"]}, [("enwiki", "sw"), ("enwiki", "nb")]
        )
        rows = gaps.orderBy("target", "rank").collect()
    finally:
        spark.stop()
        signal.signal(signal.SIGINT, ctrl_c)
    engine = TranslationEngine.open(catalogs["enwiki"])
    for target in ("sw", "nb"):
        spark_titles = [r["title"] for r in rows if r["target"] == target]
        assert spark_titles == engine.missing(target).column("title").to_pylist()
