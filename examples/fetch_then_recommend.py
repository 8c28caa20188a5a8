"""Fetch production's published link datasets for a wiki, then recommend links.

The first run downloads the wiki's datasets from Wikimedia's analytics server, checks them
against their published sha256 values and converts them once; later runs open the cached
snapshot at once, without the network. It then recommends links for the sample articles
shipped with the package (English Wikipedia articles, so use an English wiki), or for the
wikitext files named on the command line (the file name, less its extension, is the title).

Run it:

    python examples/fetch_then_recommend.py                  # enwiki, the sample articles
    python examples/fetch_then_recommend.py enwiki page.wiki # your own wikitext

Configuration, the same variables as production's importer: ``ANALYTICS_BASE_URL`` and
``ANALYTICS_BASE_URL_LEGACY`` replace the URLs of the two published bases (the current one and
the legacy one, both read) by a server laid out like them, a mirror; ``WIKISUGGEST_CACHE_DIR``
chooses the cache folder; ``WIKISUGGEST_OFFLINE=1`` never touches the network (the cached
snapshot must be there).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import wikisuggest
from wikisuggest.datasets import fetch
from wikisuggest.engine import demo_articles
from wikisuggest.errors import DatasetError


def articles(paths: list[str]) -> dict[str, str]:
    """Title -> wikitext: the files given, else the shipped sample articles."""
    if not paths:
        return demo_articles()
    return {Path(p).stem.replace("_", " "): Path(p).read_text("utf-8") for p in paths}


def main() -> None:
    wiki = sys.argv[1] if len(sys.argv) > 1 else "enwiki"
    # fetch() returns the converted dataset in the cache (offline=True: only from the cache);
    # LinkEngine.published(wiki) does the same and opens it in one call.
    try:
        path = fetch(wiki, offline=True)
        print(f"Using the cached datasets of {wiki} (no download)")
    except DatasetError:
        source = os.environ.get("ANALYTICS_BASE_URL", "production's analytics server")
        print(f"Fetching the published datasets of {wiki} from {source} ...")
        path = fetch(wiki)
    print(f"Dataset: {path}")
    engine = wikisuggest.LinkEngine.published(wiki)  # from the cache now: no download
    for title, wikitext in articles(sys.argv[2:]).items():
        result = engine.recommend(wikitext, title)
        print(f"\n{title}: {len(result.links)} links")
        for link in result.links:
            print(f"  {link.score:.3f}  {link.link_text!r} -> [[{link.link_target}]]")


if __name__ == "__main__":
    main()
