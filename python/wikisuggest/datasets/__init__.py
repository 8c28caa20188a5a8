"""The link engine's datasets: production's published files converted into the engine's
native format, and datasets built from a wiki's own dump.

>>> from wikisuggest import datasets
>>> datasets.convert("published/enwiki", "enwiki", "native")  # doctest: +SKIP
>>> report = datasets.build("enwiki-articles.xml.bz2", "enwiki", "out")  # doctest: +SKIP
"""

from __future__ import annotations

from .build import BacktestPoint, BuildReport, build
from .convert import convert

__all__ = ["BacktestPoint", "BuildReport", "build", "convert"]
