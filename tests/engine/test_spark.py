"""`wikisuggest.engine.spark.recommend_links` on a real local Spark (`local[2]`): rows identical to
`LinkEngine.recommend` on each page, with `mapInArrow` and with `mapInPandas`, an error row
for a bad page, several wikis in one job, and both shapes of Wikimedia's wikitext tables.

One SparkSession serves the whole module (starting the JVM dominates the cost).
"""

from __future__ import annotations

import bz2
import glob
import os
import shutil
import signal
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.builder_data import synthetic_dump

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import wikisuggest
from wikisuggest.engine import default_dataset_path, demo_articles
from wikisuggest.engine import spark as wspark

ENWIKI = default_dataset_path()
SAMPLE = (
    "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)
#: Columns of Wikimedia's `wmf.mediawiki_wikitext_current`.
WIKITEXT_CURRENT = (
    "wiki_db string, page_id bigint, page_namespace int, page_title string, "
    "revision_id bigint, revision_text string"
)
#: The columns of `wmf_content.mediawiki_content_current_v1` that matter here.
CONTENT_CURRENT = (
    "wiki_db string, page_id bigint, page_namespace_id int, page_title string, "
    "revision_id bigint, revision_content_slots "
    "map<string, struct<content_body: string, content_format: string, content_model: string>>"
)
TESTWIKI_ARTICLES = [
    "The red fox and the grey wolf live in the forest near the River Thames.",
    "In London, many people know the brown bear and the salmon of Europe.",
    "An oak tree stands by the thames; a red fox sleeps under it in winter.",
]


def _java_available() -> bool:
    return any(
        os.access(os.path.join(d, "java"), os.X_OK)
        for d in os.environ.get("PATH", "").split(os.pathsep)
    ) or bool(os.environ.get("JAVA_HOME"))


pytestmark = [
    pytest.mark.skipif(not _java_available(), reason="Spark needs a Java runtime"),
    # PySpark 3.5 compares library versions with distutils' deprecated classes.
    pytest.mark.filterwarnings("ignore:distutils Version classes:DeprecationWarning"),
    # and leaves the sockets it reads results from to the garbage collector.
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    # Starting the JVM alone takes half a minute on a busy machine.
    pytest.mark.timeout(300),
]


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    # Everything on the loopback interface.
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    # Python workers run this interpreter (the one with wikisuggest), whatever PATH holds.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # Spark's context installs a Ctrl-C handler that outlives it (and fails once it is
    # stopped): the tests after these get Python's own back.
    ctrl_c = signal.getsignal(signal.SIGINT)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("wikisuggest-tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
    signal.signal(signal.SIGINT, ctrl_c)


def _enwiki_articles() -> list[tuple[int, int, str, str]]:
    """(page_id, revision_id, title, wikitext): the shipped articles, and the first 40 articles
    of the enwiki excerpt in gensim's wheel when the suite has downloaded it (all 106 are
    checked by the tests of `recommend-dump`)."""
    pages = [
        (900_000 + i, 800_000 + i, title, text)
        for i, (title, text) in enumerate(sorted(demo_articles().items()))
    ]
    fixtures = os.environ.get("WIKISUGGEST_FIXTURES", "target/reference-fixtures")
    wheels = sorted(glob.glob(f"{fixtures}/downloads/gensim-4.4.0-*.whl"))
    if wheels:
        import xml.etree.ElementTree as ET

        xml = bz2.decompress(zipfile.ZipFile(wheels[0]).read(SAMPLE))
        for page in ET.fromstring(xml).iter("{http://www.mediawiki.org/xml/export-0.10/}page"):
            fields = {c.tag.rsplit("}", 1)[-1]: c for c in page}
            if fields["ns"].text != "0" or "redirect" in fields:
                continue
            revision = {c.tag.rsplit("}", 1)[-1]: c for c in fields["revision"]}
            pages.append((int(fields["id"].text or ""), int(revision["id"].text or ""),
                          fields["title"].text or "", revision["text"].text or ""))  # fmt: skip
    return pages[:42]


@pytest.fixture(scope="module")
def testwiki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second wiki's dataset, built by the package from a small synthetic dump."""
    pytest.importorskip("xgboost")
    from wikisuggest.datasets.build import build

    root = tmp_path_factory.mktemp("testwiki")
    synthetic_dump(root / "testwiki.xml")
    report = build(root / "testwiki.xml", "testwiki", root / "data", min_link_count=1,
                   backtest=False)  # fmt: skip
    return Path(report.native_path)


def _expected(engine: wikisuggest.LinkEngine, wiki: str, pages: Any) -> list[dict[str, Any]]:
    rows = []
    for page_id, revision_id, title, text in pages:
        result = engine.recommend(text, title, pageid=page_id, revid=revision_id)
        for link in result.links:
            rows.append(
                {
                    "wiki_db": wiki,
                    "page_id": page_id,
                    "revision_id": revision_id,
                    "page_title": title,
                    **{c: getattr(link, c) for c in wspark.COLUMNS[4:-1]},
                    "error": None,
                }
            )
    return rows


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def key(r: dict[str, Any]) -> tuple[str, int, int]:
        return (r["wiki_db"], r["page_id"], -1 if r["link_index"] is None else r["link_index"])

    return sorted(rows, key=key)


def _collect(frame: Any) -> list[dict[str, Any]]:
    assert tuple(frame.columns) == wspark.COLUMNS
    return [row.asDict() for row in frame.collect()]


def test_rows_identical_to_recommend_with_map_in_arrow(spark: SparkSession) -> None:
    articles = _enwiki_articles()
    rows: list[tuple[str, int, int, str | None, int, str | None]] = [
        ("enwiki", pid, 0, title, rev, text) for pid, rev, title, text in articles
    ]
    rows.append(("enwiki", 1, 0, "No text", 2, None))
    rows.append(("dewiki", 3, 0, "Unknown wiki", 4, "Ein [[Text]]."))
    pages = spark.createDataFrame(rows, WIKITEXT_CURRENT).repartition(2)
    frame = wspark.recommend_links(pages, {"enwiki": ENWIKI}, method="arrow", batch_rows=16)
    assert "MapInArrow" in frame._jdf.queryExecution().executedPlan().toString()
    assert spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch") == "16"
    got = _collect(frame)
    errors = {r["page_title"]: r for r in got if r["error"] is not None}
    links = [r for r in got if r["error"] is None]
    expected = _expected(wikisuggest.LinkEngine.default(), "enwiki", articles)
    assert len(expected) > 20
    assert _sorted(links) == _sorted(expected)
    assert set(errors) == {"No text", "Unknown wiki"}
    assert errors["No text"]["error"].startswith("WikitextError: ")
    assert errors["No text"]["page_id"] == 1 and errors["No text"]["revision_id"] == 2
    assert errors["Unknown wiki"]["error"].startswith("DatasetError: no dataset for wiki 'dewiki'")
    assert errors["Unknown wiki"]["link_text"] is None


def test_many_wikis_in_one_job_with_map_in_pandas_and_shipped_datasets(
    spark: SparkSession, testwiki: Path
) -> None:
    enwiki_pages = _enwiki_articles()[:12]
    testwiki_pages = [(i, 100 + i, f"Essay {i}", t) for i, t in enumerate(TESTWIKI_ARTICLES)]
    slots = {"content_format": "text/x-wiki", "content_model": "wikitext"}
    rows: list[tuple[str, int, int, str | None, int, dict[str, dict[str, str]]]] = [
        ("enwiki", pid, 0, title, rev, {"main": {"content_body": text, **slots}})
        for pid, rev, title, text in enwiki_pages
    ]
    rows += [
        ("testwiki", pid, 0, title, rev, {"main": {"content_body": text, **slots}})
        for pid, rev, title, text in testwiki_pages
    ]
    rows.append(("testwiki", 50, 0, None, 51, {"main": {"content_body": "A red fox.", **slots}}))
    pages = spark.createDataFrame(rows, CONTENT_CURRENT).repartition(2)
    frame = wspark.recommend_links(
        pages.where(F.col("page_namespace_id") == 0),
        # A native file, and a folder of datasets (shipped whole).
        {"enwiki": ENWIKI, "testwiki": testwiki.parent},
        text_col=F.col("revision_content_slots")["main"]["content_body"],
        ship=True,
        method="pandas",
    )
    assert "MapInPandas" in frame._jdf.queryExecution().executedPlan().toString()
    shipped = {Path(p).name for p in spark.sparkContext.listFiles}
    assert {ENWIKI.name, testwiki.parent.name} <= shipped
    got = _collect(frame)
    en = _expected(wikisuggest.LinkEngine.default(), "enwiki", enwiki_pages)
    test = _expected(wikisuggest.LinkEngine.open(testwiki, "testwiki"), "testwiki", testwiki_pages)
    assert en and test
    assert _sorted([r for r in got if r["error"] is None]) == _sorted(en + test)
    (error,) = [r for r in got if r["error"] is not None]
    assert error["wiki_db"] == "testwiki" and error["page_id"] == 50
    assert error["error"].startswith("InvalidParameter: ")


def test_one_wiki_id_for_every_page(spark: SparkSession) -> None:
    title, text = sorted(demo_articles().items())[0]
    schema = "id bigint, rev bigint, t string, x string"
    pages = spark.createDataFrame([(7, 8, title, text)], schema)
    frame = wspark.recommend_links(
        pages, ENWIKI, wiki_id="enwiki", page_id_col="id", revision_col="rev",
        title_col="t", text_col=F.col("x"),
    )  # fmt: skip
    expected = _expected(wikisuggest.LinkEngine.default(), "enwiki", [(7, 8, title, text)])
    assert _sorted(_collect(frame)) == _sorted(expected)


def test_worker_function_opens_each_engine_once_and_bounds_its_chunks() -> None:
    """The function Spark runs in each worker, called directly."""
    articles = sorted(demo_articles().items())
    job = wspark._Job(
        datasets=(("enwiki", str(ENWIKI)),),
        shipped=False,
        options=(("threshold", 0.5),),
        chunk_bytes=1,  # every page its own chunk
    )
    batch = pa.RecordBatch.from_pydict(
        {
            "wiki_db": ["enwiki"] * len(articles),
            "page_id": list(range(len(articles))),
            "revision_id": [None] * len(articles),
            "page_title": [t for t, _ in articles],
            "wikitext": [x for _, x in articles],
        }
    )
    wspark._ENGINES.clear()
    out = list(wspark._map_arrow(job, [batch, batch]))
    assert len(wspark._ENGINES) == 1
    # One output batch per page and input batch: a chunk never holds more than one long page.
    assert len(out) == 2 * len(articles)
    assert {b.column("page_title")[0].as_py() for b in out} == {t for t, _ in articles}


def test_bad_arguments_are_refused_before_the_job(spark: SparkSession, tmp_path: Path) -> None:
    pages = spark.createDataFrame([("enwiki", 1, "T", "x")], "wiki_db string, page_id bigint, "
                                  "page_title string, revision_text string")  # fmt: skip
    with pytest.raises(wikisuggest.InvalidParameter, match="no such dataset"):
        wspark.recommend_links(pages, tmp_path / "missing")
    with pytest.raises(wikisuggest.InvalidParameter, match="method"):
        wspark.recommend_links(pages, ENWIKI, method="rdd")
    with pytest.raises(wikisuggest.InvalidParameter, match="title_col"):
        wspark.recommend_links(pages, ENWIKI, title_col=3)  # type: ignore[arg-type]
    with pytest.raises(wikisuggest.InvalidParameter, match="threshold"):
        wspark.recommend_links(pages, ENWIKI, threshold="high")  # type: ignore[arg-type]


def test_rules_reach_the_workers(spark: SparkSession, tmp_path: Path) -> None:
    """Never-link rules go to the workers with the job: per wiki, or for every wiki, as a rule
    set or a rule file read on the driver."""
    articles = _enwiki_articles()[:8]
    engine = wikisuggest.LinkEngine.default()
    plain = [engine.recommend(text, title) for _, _, title, text in articles]
    gone = sorted({link.link_target for result in plain for link in result.links[::2]})
    rules = wikisuggest.LinkRules(exclude_targets=gone)
    path = rules.save(tmp_path / "enwiki.toml")
    rows = [("enwiki", pid, 0, title, rev, text) for pid, rev, title, text in articles]
    pages = spark.createDataFrame(rows, WIKITEXT_CURRENT).repartition(2)
    expected = []
    for pid, rev, title, text in articles:
        result = engine.recommend(text, title, rules=rules)
        expected += [
            {
                "wiki_db": "enwiki",
                "page_id": pid,
                "revision_id": rev,
                "page_title": title,
                **{c: getattr(link, c) for c in wspark.COLUMNS[4:-1]},
                "error": None,
            }
            for link in result.links
        ]
    assert expected and not {r["link_target"] for r in expected} & set(gone)
    for given in (rules, {"enwiki": path}):
        got = _collect(wspark.recommend_links(pages, {"enwiki": ENWIKI}, rules=given))
        assert _sorted(got) == _sorted(expected)


def test_worker_function_gives_a_page_over_its_budget_an_error_row() -> None:
    """A nested-markup page of 400 KB among ordinary ones: over the per-page budget, it is that
    page's error row (the default budget applies when none is given; here a short one)."""
    title, text = sorted(demo_articles().items())[0]
    nested = "[[a|" * 66_000 + "a" + "]]" * 66_000
    job = wspark._Job(
        datasets=(("enwiki", str(ENWIKI)),),
        shipped=False,
        options=(("time_budget", 1.0),),
        chunk_bytes=1 << 30,
    )
    batch = pa.RecordBatch.from_pydict(
        {
            "wiki_db": ["enwiki"] * 3,
            "page_id": [1, 2, 3],
            "revision_id": [11, 12, 13],
            "page_title": [title, "Nested", title],
            "wikitext": [text, nested, text],
        }
    )
    (rows,) = list(wspark._map_arrow(job, [batch]))
    got = rows.to_pylist()
    (error,) = [r for r in got if r["error"] is not None]
    assert (error["page_id"], error["revision_id"]) == (2, 12)
    # Refused by the engine's bound on nested links, or stopped by the budget: an error row.
    assert error["error"].startswith("WikitextError: ")
    expected = _expected(wikisuggest.LinkEngine.default(), "enwiki", [(1, 11, title, text)])
    assert [r for r in got if r["page_id"] == 1] == expected
    assert rows.schema == wspark.link_row_schema()


def test_the_cache_s_current_link_is_a_dataset_path(spark: SparkSession, tmp_path: Path) -> None:
    # `<cache>/datasets/<wiki>/current` is a link to the current snapshot's folder: Spark
    # takes it as it takes the folder, shipped or not.
    snapshot = tmp_path / "datasets" / "enwiki" / "snapshots" / "0123456789abcdef"
    snapshot.mkdir(parents=True)
    shutil.copyfile(ENWIKI, snapshot / "enwiki.linkdata")
    current = snapshot.parent.parent / "current"
    current.symlink_to("snapshots/0123456789abcdef", target_is_directory=True)
    articles = _enwiki_articles()[:4]
    rows = [("enwiki", pid, 0, title, rev, text) for pid, rev, title, text in articles]
    pages = spark.createDataFrame(rows, WIKITEXT_CURRENT)
    expected = _sorted(_expected(wikisuggest.LinkEngine.default(), "enwiki", articles))
    assert expected
    for ship in (False, True):
        got = _collect(wspark.recommend_links(pages, {"enwiki": current}, ship=ship))
        assert _sorted(got) == expected, ship
