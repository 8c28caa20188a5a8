"""A notebook-style analysis of link recommendations: a DataFrame, a summary table, a plot.

Each step is what one notebook cell would do: recommend links for the sample articles shipped
with the package (the local engine over the enwiki sample, no network), put every link in a
pandas DataFrame, summarise it per article, and draw the number of links per article as a bar
chart. The chart is a small hand-written SVG, so nothing beyond pandas is needed; in a notebook
``summary["links"].plot.bar()`` draws the same with matplotlib.

Run it (needs pandas: ``pip install 'wikisuggest[pandas]'``):

    python examples/notebook_analysis.py [OUTPUT_FOLDER]

It writes ``links.csv``, ``summary.csv`` and ``links_per_article.svg`` into OUTPUT_FOLDER
(default: ``notebook-output``, created if absent; or set ``EXAMPLE_OUTPUT``).
"""

from __future__ import annotations

import os
import sys
from html import escape
from pathlib import Path

import pandas as pd

import wikisuggest
from wikisuggest.engine import demo_articles


def link_table(engine: wikisuggest.LinkEngine, pages: dict[str, str]) -> pd.DataFrame:
    """One row per recommended link, as a notebook would hold them."""
    rows = [
        {
            "article": title,
            "link_index": link.link_index,
            "link_text": link.link_text,
            "link_target": link.link_target,
            "score": link.score,
        }
        for title, wikitext in pages.items()
        for link in engine.recommend(wikitext, title).links
    ]
    columns = ["article", "link_index", "link_text", "link_target", "score"]
    return pd.DataFrame(rows, columns=columns)


def summarise(links: pd.DataFrame, articles: list[str]) -> pd.DataFrame:
    """Per article: how many links, and their mean, lowest and highest score."""
    summary = links.groupby("article")["score"].agg(["count", "mean", "min", "max"])
    summary = summary.rename(columns={"count": "links"}).reindex(articles)
    return summary.fillna({"links": 0}).astype({"links": int})


def bar_chart(counts: dict[str, int], title: str) -> str:
    """A horizontal bar chart as SVG: one bar (a ``rect``) per entry, labelled."""
    bar, gap, label, width = 24, 8, 160, 300
    most = max(counts.values(), default=0) or 1
    height = 40 + len(counts) * (bar + gap)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{label + width + 60}" '
        f'height="{height}" font-family="sans-serif" font-size="12">',
        f'<text x="8" y="20" font-size="14">{escape(title)}</text>',
    ]
    for i, (name, count) in enumerate(counts.items()):
        y = 32 + i * (bar + gap)
        length = round(width * count / most)
        parts += [
            f'<text x="{label - 8}" y="{y + 16}" text-anchor="end">{escape(name)}</text>',
            f'<rect x="{label}" y="{y}" width="{length}" height="{bar}" fill="#36c">'
            f"<title>{escape(name)}: {count}</title></rect>",
            f'<text x="{label + length + 6}" y="{y + 16}">{count}</text>',
        ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> None:
    default = os.environ.get("EXAMPLE_OUTPUT", "notebook-output")
    out = Path(sys.argv[1] if len(sys.argv) > 1 else default)
    out.mkdir(parents=True, exist_ok=True)

    # Cell 1: the engine and the articles.
    engine = wikisuggest.LinkEngine.default()
    pages = demo_articles()

    # Cell 2: every link in a DataFrame.
    links = link_table(engine, pages)
    print(f"{len(links)} links over {len(pages)} articles\n")
    print(links.sort_values("score", ascending=False).head(10).to_string(index=False))

    # Cell 3: a summary table per article.
    summary = summarise(links, list(pages))
    print("\nPer article:")
    print(summary.to_string(float_format="{:.3f}".format))

    # Cell 4: the plot, and the tables for later.
    chart = out / "links_per_article.svg"
    chart.write_text(bar_chart(summary["links"].to_dict(), "Links per article"), "utf-8")
    links.to_csv(out / "links.csv", index=False)
    summary.to_csv(out / "summary.csv")
    print(f"\nWrote {chart}, {out / 'links.csv'} and {out / 'summary.csv'}")


if __name__ == "__main__":
    main()
