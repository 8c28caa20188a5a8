"""The link engine's datasets: production's published datasets for any wiki, fetched and
cached (:func:`fetch`; :func:`published_wikis` lists what can be fetched), published files
converted into the engine's native format (:func:`convert`), and datasets built from a
wiki's own dump (:func:`build`). A wiki is named by its id (:func:`wiki_id` reads the ways
users write it), whose language and domain are :func:`wiki_language` and
:func:`wiki_domain`.

>>> from wikisuggest import datasets
>>> [w.wiki for w in datasets.published_wikis()][:3]  # doctest: +SKIP
>>> path = datasets.fetch("frwiki")  # doctest: +SKIP
>>> datasets.convert("published/enwiki", "enwiki", "native")  # doctest: +SKIP
>>> report = datasets.build("enwiki-articles.xml.bz2", "enwiki", "out")  # doctest: +SKIP
"""

from __future__ import annotations

from .._native import wiki_domain, wiki_language
from .build import BacktestPoint, BuildReport, build
from .cache import cache_root
from .convert import convert
from .fetch import PublishedWiki, fetch, published_wikis
from .published import wiki_id

__all__ = [
    "BacktestPoint",
    "BuildReport",
    "PublishedWiki",
    "build",
    "cache_root",
    "convert",
    "fetch",
    "published_wikis",
    "wiki_domain",
    "wiki_id",
    "wiki_language",
]
