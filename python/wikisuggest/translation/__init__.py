"""Translation recommendations from Wikimedia's public dumps: production's answers for any
wiki pair, locally, and every article a language lacks.

>>> import wikisuggest
>>> parts = ("sql", "pageviews")
>>> engine = wikisuggest.TranslationEngine.published("enwiki", parts=parts)  # doctest: +SKIP
>>> engine.recommend("sw", count=5)  # doctest: +SKIP
>>> engine.missing("sw").to_pandas()  # doctest: +SKIP

A catalog (one folder per source wiki, Parquet files that pandas, polars, DuckDB and Spark
read) is built once from the dumps (:func:`fetch`) and serves every target language.
"""

from __future__ import annotations

from .engine import TranslationEngine
from .fetch import PARTS, fetch

__all__ = ["PARTS", "TranslationEngine", "fetch"]
