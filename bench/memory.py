"""Memory benchmark: peak RSS of ``LinkEngine.recommend_many`` (and ``recommend_iter``) as the
number of pages grows.

Each measurement runs in a fresh process: it opens the parity sample's enwiki dataset, then
streams ``--pages`` pages from a generator that repeats the 106 articles of the gensim enwiki
sample (see ``bench/server_links.py``), each page a fresh copy of its wikitext, as a reader of
a dump would hand them over. It reports the process's peak RSS (``ru_maxrss``), the RSS before
the batch (interpreter, extension, dataset, the sample) and the growth per page.
``recommend_many`` returns every page's item (its input, the page as given, and its result),
so what it keeps grows with the count: by the wikitext and the result of each page when the
pages are fresh strings (``recommend_many``), by the result alone when the caller's pages
share their strings (``recommend_many-shared``, e.g. a list the caller holds anyway).
``recommend_iter`` keeps nothing, so its peak should not move with the count.

Run ``bash bench/run memory`` (dist build), or ``python bench/memory.py``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATASETS = ROOT / "tests/data/parity/datasets"


def rss_mb() -> float:
    """Current resident set size of this process."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(how: str, count: int) -> dict[str, object]:
    sys.path.insert(0, str(Path(__file__).parent))
    from server_links import articles, sample

    import wikisuggest
    from wikisuggest.engine import Page

    sample_pages = [(title, text) for title, _, _, text in articles(sample())]
    engine = wikisuggest.LinkEngine.open(DATASETS / "enwiki", "enwiki")
    engine.recommend(sample_pages[0][1], sample_pages[0][0])  # map what a page touches

    def pages() -> Iterator[Page]:
        for i in range(count):
            title, text = sample_pages[i % len(sample_pages)]
            if how.endswith("shared"):
                yield Page(text, title)
            else:
                # A new string each time, as a dump reader yields them (a slice of the whole
                # string would be the same object).
                yield Page(text[:-1] + text[-1:], title)

    before = rss_mb()
    started = time.perf_counter()
    links = 0
    if how.startswith("recommend_many"):
        results = engine.recommend_many(pages(), workers=2)
        links = sum(len(item.unwrap().links) for item in results)
    else:
        for item in engine.recommend_iter(pages(), workers=2):
            links += len(item.unwrap().links)
    wall = time.perf_counter() - started
    after = rss_mb()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "how": how,
        "pages": count,
        "seconds": round(wall, 1),
        "links": links,
        "rss_before_mb": round(before, 1),
        "rss_after_mb": round(after, 1),
        "peak_rss_mb": round(peak, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1000,10000,20000", help="page counts, comma-separated")
    parser.add_argument(
        "--how",
        default="recommend_iter,recommend_many-shared,recommend_many",
        help="recommend_iter, recommend_many-shared (pages share their strings) or "
        "recommend_many (each page a fresh string)",
    )
    parser.add_argument("--worker", nargs=2, metavar=("HOW", "COUNT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(measure(args.worker[0], int(args.worker[1]))))
        return 0
    rows = []
    for how in args.how.split(","):
        for count in (int(c) for c in args.counts.split(",")):
            out = subprocess.run(
                [sys.executable, __file__, "--worker", how, str(count)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), flush=True)
    print(
        f"\n{'call':<24}{'pages':>8}{'seconds':>9}{'RSS before MB':>15}{'peak RSS MB':>13}"
        f"{'peak - before, KB/page':>24}"
    )
    for row in rows:
        grown = (float(row["peak_rss_mb"]) - float(row["rss_before_mb"])) * 1024 / int(row["pages"])
        print(
            f"{row['how']:<24}{row['pages']:>8}{row['seconds']:>9}{row['rss_before_mb']:>15}"
            f"{row['peak_rss_mb']:>13}{grown:>24.1f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
