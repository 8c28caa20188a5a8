"""Local link engine benchmark: ``LinkEngine.recommend`` against ``mwparserfromhell.parse``.

Production's engine parses each page with mwparserfromhell before doing anything else, so
parsing alone is a floor for its cost per page. We time, on the same articles:

* ``mwparserfromhell.parse`` (pinned 0.7.2, its C tokenizer), one core;
* ``LinkEngine.recommend`` with the HTTP API's defaults (threshold 0.5, at most 15 links),
  one page at a time on one core, and ``recommend_many`` on all cores;
* the same with the parity set's ``exhaustive`` settings (threshold 0, no maximum), which
  classifies every candidate mention of the page.

Articles: the 71 parity articles plus the other pages of the enwiki sample in gensim's wheel
(106 articles in all). The wheel is the one ``bash scripts/test`` downloads into
``target/reference-fixtures/downloads``; when it is missing the benchmark downloads it there,
and fails rather than measure a smaller set. Each measurement is the best of ``--repeat``
runs; one-core runs are timed in process CPU time, so a busy machine does not skew the ratios.
Run ``bash bench/run engine``.
"""

from __future__ import annotations

import argparse
import bz2
import io
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARITY = ROOT / "tests" / "data" / "parity"
DOWNLOADS = ROOT / "target" / "reference-fixtures" / "downloads"
DUMP = "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


def parity_articles() -> dict[str, str]:
    lines = (PARITY / "articles" / "manifest.tsv").read_text("utf-8").splitlines()[1:]
    out = {}
    for line in lines:
        file, title = line.split("\t")[:2]
        out[title] = (PARITY / "articles" / file).read_text("utf-8")
    return out


def gensim_wheel() -> Path:
    """gensim 4.4.0's wheel (the one the test suite pins), downloaded when missing."""
    wheels = sorted(DOWNLOADS.glob("gensim-4.4.0-*.whl"))
    if not wheels:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary",
                ":all:",
                "--python-version",
                "3.11",
                "--platform",
                "manylinux_2_28_x86_64",
                "gensim==4.4.0",
                "-d",
                str(DOWNLOADS),
            ],
            check=True,
        )
        wheels = sorted(DOWNLOADS.glob("gensim-4.4.0-*.whl"))
    if not wheels:
        raise SystemExit(f"gensim 4.4.0's wheel is not in {DOWNLOADS}: cannot build the input")
    return wheels[-1]


def gensim_articles() -> dict[str, str]:
    """Main-namespace, non-redirect pages of the dump excerpt in gensim's wheel."""
    wheels = [gensim_wheel()]
    with zipfile.ZipFile(wheels[-1]) as wheel:
        data = bz2.decompress(wheel.read(DUMP))
    out = {}
    for _, element in ET.iterparse(io.BytesIO(data)):
        if not element.tag.endswith("}page"):
            continue
        ns = element.find("{*}ns")
        text = element.find("{*}revision/{*}text")
        title = element.find("{*}title")
        is_redirect = element.find("{*}redirect") is not None
        if ns is not None and ns.text == "0" and not is_redirect and text is not None:
            out[title.text or ""] = text.text or ""
        element.clear()
    return out


def best_of(repeat: int, run: Callable[[], object], clock: Callable[[], float]) -> float:
    times = []
    for _ in range(repeat):
        start = clock()
        run()
        times.append(clock() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--parity-only", action="store_true", help="skip the gensim sample")
    args = parser.parse_args()

    import mwparserfromhell

    import wikisuggest
    from wikisuggest.engine import Page

    articles = parity_articles()
    if not args.parity_only:
        for title, text in gensim_articles().items():
            articles.setdefault(title, text)
    pages = list(articles.items())
    chars = sum(len(t) for _, t in pages)
    megabytes = sum(len(t.encode("utf-8")) for _, t in pages) / 1e6
    engine = wikisuggest.LinkEngine.default()
    cores = os.cpu_count() or 1
    source = "71 parity articles" if args.parity_only else "parity articles + gensim 4.4.0 sample"
    print(
        f"input: {source}, embedded enwiki sample dataset; "
        f"{len(pages)} articles, {chars:,} characters ({megabytes:.2f} MB UTF-8); "
        f"{cores} cores; best of {args.repeat}; mwparserfromhell {mwparserfromhell.__version__}"
        f" (C tokenizer: {mwparserfromhell.parser.use_c})"
    )

    # Pages as recommend takes its arguments: wikitext first, then the title.
    in_order = [Page(text, title) for title, text in pages]

    def parse_all() -> None:
        for _, text in pages:
            mwparserfromhell.parse(text)

    settings = {"api": {}, "exhaustive": {"threshold": 0.0, "max_recommendations": 0}}
    # One-core runs are timed in this process's CPU time, immune to other processes competing
    # for the cores (not this thread's: `recommend` runs each page on the extension's worker
    # pool while the caller waits). Multi-core runs can only be timed by the wall clock.
    cpu, wall = time.process_time, time.perf_counter
    rows: list[tuple[str, float]] = [
        ("mwparserfromhell.parse, 1 core", best_of(args.repeat, parse_all, cpu))
    ]
    for name, options in settings.items():

        def one_core(options: dict[str, float] = options) -> None:
            for title, text in pages:
                engine.recommend(text, title, **options)

        def all_cores(options: dict[str, float] = options) -> None:
            batch = engine.recommend_many(in_order, workers=cores, **options)
            assert not batch.errors, batch.errors[:3]

        rows.append((f"recommend ({name}), 1 core", best_of(args.repeat, one_core, cpu)))
        rows.append(
            (f"recommend ({name}), {cores} cores, wall", best_of(args.repeat, all_cores, wall))
        )

    baseline = rows[0][1]
    print(f"\n{'':38}{'seconds':>9}{'articles/s':>12}{'MB/s':>9}{'vs parse':>10}")
    for label, seconds in rows:
        print(
            f"{label:38}{seconds:9.3f}{len(pages) / seconds:12.1f}{megabytes / seconds:9.2f}"
            f"{baseline / seconds:9.1f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
