"""The small translation catalog shipped inside the package (:meth:`TranslationEngine.default`):
English Wikipedia articles of the test dumps with their interlanguage links, Wikidata items,
topic and country predictions and a day's views, built by the same code as any catalog.
Illustrative only: a real wiki's catalog is one call away
(:func:`wikisuggest.translation.fetch`)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["default_catalog_path"]


def default_catalog_path() -> Path:
    """The folder of the shipped catalog."""
    return Path(str(resources.files("wikisuggest") / "data" / "translation"))
