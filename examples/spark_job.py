"""A Spark job that recommends links for every page of a DataFrame and writes them to Parquet.

It runs Spark in local mode on this machine over a DataFrame built from the sample articles
shipped with the package, in the shape of Wikimedia's ``wmf.mediawiki_wikitext_current`` table;
on the analytics cluster ``pages`` would be that table (see the comment in ``main``) and the
dataset one per wiki. The output has one row per link: exactly ``LinkEngine.recommend``'s
links for each page, and a row with ``error`` set for a page that failed.

Run it (needs ``pip install 'wikisuggest[spark]'`` and a Java runtime):

    python examples/spark_job.py [OUTPUT_FOLDER]

OUTPUT_FOLDER (default ``spark-output``, or ``EXAMPLE_OUTPUT``) receives ``links.parquet``.
``SPARK_MASTER`` chooses the master (default ``local[2]``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from wikisuggest.engine import default_dataset_path, demo_articles
from wikisuggest.engine.spark import recommend_links

#: The columns of ``wmf.mediawiki_wikitext_current`` that the job reads.
PAGES_SCHEMA = (
    "wiki_db string, page_id bigint, page_namespace int, page_title string, "
    "revision_id bigint, revision_text string"
)


def main() -> None:
    out = Path(
        sys.argv[1] if len(sys.argv) > 1 else os.environ.get("EXAMPLE_OUTPUT", "spark-output")
    )
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # everything on the loopback
    # Python workers run this interpreter (the one with wikisuggest), whatever PATH holds.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(os.environ.get("SPARK_MASTER", "local[2]"))
        .appName("wikisuggest-example")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        # On the cluster:
        #   pages = spark.table("wmf.mediawiki_wikitext_current").where(
        #       "snapshot = '2026-10' AND wiki_db = 'enwiki'")
        #   datasets = {"enwiki": "/srv/linkdata/enwiki"}
        rows = [
            ("enwiki", page_id, 0, title, 1000 + page_id, text)
            for page_id, (title, text) in enumerate(sorted(demo_articles().items()), start=1)
        ]
        pages = spark.createDataFrame(rows, PAGES_SCHEMA)
        datasets = {"enwiki": str(default_dataset_path())}
        links = recommend_links(pages.where(F.col("page_namespace") == 0), datasets, ship=True)
        target = out / "links.parquet"
        links.write.mode("overwrite").parquet(str(target))

        written = spark.read.parquet(str(target))
        total = written.count()
        errors = written.where(F.col("error").isNotNull()).count()
        print(f"{total} rows ({errors} errors) written to {target}\n")
        written.groupBy("page_title").agg(
            F.count("link_text").alias("links"), F.round(F.avg("score"), 3).alias("mean_score")
        ).orderBy("page_title").show(truncate=False)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
