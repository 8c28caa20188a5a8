"""The workload that trains the profile guiding the release build (``scripts/train-profile``).

Runs the installed ``wikisuggest`` (a build that counts its branches) over the training
articles (``bench/articles.py``: the gensim sample's pages that are no parity article), the
way the package is used: one page at a time at the API's defaults and with every candidate
classified, on fresh strings, and as a batch on every core.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from articles import fresh, training_articles

import wikisuggest


def main() -> None:
    pages = list(training_articles().items())
    engine = wikisuggest.LinkEngine.default()
    for _ in range(3):
        for title, text in pages:
            engine.recommend(fresh(text), title)
            engine.recommend(fresh(text), title, threshold=0.0, max_recommendations=0)
    batch = list(engine.recommend_many((fresh(text), title) for title, text in pages))
    print(f"trained on {len(pages)} articles (a batch of {len(batch)} pages)")


if __name__ == "__main__":
    main()
