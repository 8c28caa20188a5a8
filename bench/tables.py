"""Table-size benchmark: per-article CPU of ``recommend`` on the shipped 6.7 MB enwiki
sample against an enwiki-size dataset (the sample's tables plus synthetic filler to 7 M
titles and 15 M anchors, built once per format version under ``target/bench-tables/``).

This script writes the benchmark's articles (the 71 parity articles plus the other pages of
the enwiki sample in gensim's wheel, 106 in all, as ``bench/engine.py`` uses them) to
``target/bench-tables/articles/`` and runs the Rust side, ``engine_data tables``, which
builds or reuses the large file and times both. Run ``bash bench/run tables [ROUNDS]``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from articles import ROOT, gensim_articles, parity_articles


def main() -> int:
    articles = parity_articles()
    for title, text in gensim_articles().items():
        articles.setdefault(title, text)
    out = ROOT / "target" / "bench-tables" / "articles"
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (title, text) in enumerate(articles.items()):
        name = f"{i:03}.wikitext"
        (out / name).write_text(text, "utf-8")
        rows.append(f"{name}\t{title}\n")
    (out / "titles.tsv").write_text("".join(rows), "utf-8")
    command = ["cargo", "bench", "--quiet", "-p", "wikisuggest-engine", "--bench", "engine_data"]
    return subprocess.call([*command, "--", "tables", str(out), *sys.argv[1:]], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
