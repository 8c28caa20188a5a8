"""The small enwiki sample shipped inside the package: its dataset and the real articles of
the demo. Illustrative only: production's datasets for any wiki are one call away
(:func:`wikisuggest.datasets.fetch`)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["default_dataset_path", "demo_articles"]


def default_dataset_path() -> Path:
    """The enwiki sample dataset shipped inside the package."""
    return Path(str(resources.files("wikisuggest") / "data" / "enwiki.linkdata"))


def demo_articles() -> dict[str, str]:
    """The real enwiki articles shipped for the demo: title → wikitext."""
    folder = resources.files("wikisuggest") / "data" / "articles"
    return {
        entry.name.removesuffix(".wikitext").replace("_", " "): entry.read_text("utf-8")
        for entry in folder.iterdir()
        if entry.name.endswith(".wikitext")
    }
