"""The local link engine: production's link recommendations computed in-process, offline, on
one page (:meth:`LinkEngine.recommend`), many (:meth:`LinkEngine.recommend_many`), a whole dump
(:func:`recommend_dump`) or a Spark table (:func:`wikisuggest.engine.spark.recommend_links`).

>>> import wikisuggest
>>> engine = wikisuggest.LinkEngine.default()  # the small enwiki sample shipped with the package
>>> result = engine.recommend("The aardvark is a mammal native to Africa.", "Aardvark")
>>> [(link.link_text, link.link_target) for link in result.links]  # doctest: +SKIP
"""

from __future__ import annotations

from .dump import DumpSummary, recommend_dump, write_dump
from .link_engine import CandidateScore, EngineInfo, LinkEngine
from .options import PassOptions, RecommendOptions
from .pages import Page, PageSpec
from .sample import default_dataset_path, demo_articles

__all__ = [
    "CandidateScore",
    "DumpSummary",
    "EngineInfo",
    "LinkEngine",
    "Page",
    "PageSpec",
    "PassOptions",
    "RecommendOptions",
    "default_dataset_path",
    "demo_articles",
    "recommend_dump",
    "write_dump",
]
