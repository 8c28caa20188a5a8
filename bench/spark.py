"""Whole-wiki benchmark: ``wikisuggest.engine.spark.recommend_links`` in ``local[2]`` against a
plain ``LinkEngine.recommend_many`` loop on the same rows, in one run.

Rows: the articles of the enwiki sample in gensim's wheel (``bash scripts/test`` downloads it
into ``target/reference-fixtures/downloads``), or the parity articles without it, repeated
``--copies`` times. The Spark input is cached in memory first and the output is written to
Spark's ``noop`` sink, so the figures are those of recommending, not of reading a table.

CPU is counted for every process involved: this one, the JVM (started after the loop is
measured) and its Python workers (from
``/proc``, children included), so Spark's own work is in the figure. Each measurement is the
best of ``--repeat`` runs after a warm-up (JVM started, workers forked, engines opened). Run
``bash bench/run spark``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

# Run as a script: bench/ is on the path, with the article loaders of the engine benchmark.
from engine import gensim_articles, parity_articles

_TICKS = os.sysconf("SC_CLK_TCK")


def _tree_cpu(root: int) -> dict[str, float]:
    """CPU seconds of ``root`` and its living descendants (reaped children included), as
    ``python`` (``root`` itself), ``jvm`` and ``workers`` (the JVM's Python workers)."""
    children: dict[int, list[int]] = {}
    cpu: dict[int, float] = {}
    java: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        pid, ppid = int(entry), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        cpu[pid] = sum(int(v) for v in fields[11:15]) / _TICKS
        if stat[stat.index("(") + 1 : stat.rindex(")")] == "java":
            java.add(pid)
    totals = {"python": cpu.get(root, 0.0), "jvm": 0.0, "workers": 0.0}
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        totals["jvm" if pid in java else "workers"] += cpu.get(pid, 0.0)
        todo.extend(children.get(pid, []))
    return totals


def measure(run: Callable[[], object], repeat: int) -> tuple[float, dict[str, float]]:
    """Best (wall seconds, CPU seconds of this process tree by part) of ``repeat`` runs."""
    best: tuple[float, dict[str, float]] = (float("inf"), {})
    for _ in range(repeat):
        before, wall = _tree_cpu(os.getpid()), time.perf_counter()
        run()
        took = time.perf_counter() - wall
        after = _tree_cpu(os.getpid())
        if took < best[0]:
            best = (took, {k: after[k] - before[k] for k in after})
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=12, help="times each article is repeated")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark import __version__ as spark_version
    from pyspark.sql import SparkSession

    import wikisuggest
    from wikisuggest.engine.spark import recommend_links

    articles = gensim_articles() or parity_articles()
    rows = [
        ("enwiki", copy * 100_000 + i, i, title, text)
        for copy in range(args.copies)
        for i, (title, text) in enumerate(sorted(articles.items()))
    ]
    pages = [
        {"page_title": title, "wikitext": text, "pageid": pid, "revid": rev}
        for _, pid, rev, title, text in rows
    ]
    engine = wikisuggest.LinkEngine.default()
    dataset = wikisuggest.engine.default_dataset_path()

    def baseline() -> None:
        done = engine.recommend_many(pages, workers=2)
        assert not done.errors

    # The loop is measured before the JVM starts, so none of Spark's idle work counts for it.
    baseline()
    loop = measure(baseline, args.repeat)

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    schema = (
        "wiki_db string, page_id bigint, revision_id bigint, page_title string, "
        "revision_text string"
    )
    frame = spark.createDataFrame(rows, schema).repartition(2).cache()
    frame.count()

    def spark_run(method: str) -> Callable[[], None]:
        def run() -> None:
            out = recommend_links(frame, dataset, method=method)
            out.write.format("noop").mode("overwrite").save()

        return run

    # Warm-up: engines opened, Python workers forked, code paths compiled by the JVM.
    spark_run("arrow")()
    spark_run("pandas")()

    n = len(rows)
    print(f"{n} articles ({len(articles)} distinct x {args.copies}), 2 cores, "
          f"pyspark {spark_version}, best of {args.repeat}")  # fmt: skip
    results = [
        ("recommend_many, 2 threads", loop),
        ("recommend_links, local[2], mapInArrow", measure(spark_run("arrow"), args.repeat)),
        ("recommend_links, local[2], mapInPandas", measure(spark_run("pandas"), args.repeat)),
    ]
    base_cpu = sum(results[0][1][1].values()) / n
    print(
        f"{'':40} {'articles/s':>10} {'CPU ms/article':>14} {'vs loop':>8}"
        f" {'(Python':>8} {'JVM':>6} {'workers)':>8}"
    )
    for name, (wall, cpu) in results:
        per = sum(cpu.values()) / n
        parts = " ".join(f"{cpu[k] / n * 1000:>7.2f}" for k in ("python", "jvm", "workers"))
        print(f"{name:40} {n / wall:10.1f} {per * 1000:14.2f} {per / base_cpu - 1:+8.1%}  {parts}")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
