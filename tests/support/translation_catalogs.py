"""Catalogs of the fixture wikis, built once per session from their dumps (the formats
Wikimedia publishes), without the network: the ``catalogs`` fixture (import it into a test
module to use it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.dump_formats import DUMPS
from wikisuggest._native import build_translation_catalog, build_translation_collections

RUN = "20260601"
INDEX = "20260607"
DAY = "20260614"


def spec(wiki: str, collections: Path | None) -> dict[str, Any]:
    run = DUMPS / wiki / RUN
    shards = sorted(
        (DUMPS / "other" / "cirrus_search_index" / INDEX / f"index_name={wiki}_content").glob(
            "*.json.bz2"
        )
    )
    return {
        "wiki": wiki,
        "page": str(run / f"{wiki}-{RUN}-page.sql.gz"),
        "page_props": str(run / f"{wiki}-{RUN}-page_props.sql.gz"),
        "langlinks": str(run / f"{wiki}-{RUN}-langlinks.sql.gz"),
        "redirect": str(run / f"{wiki}-{RUN}-redirect.sql.gz"),
        "namespaces": str(run / f"{wiki}-{RUN}-siteinfo-namespaces.json.gz"),
        "cirrus": [str(s) for s in shards],
        "pageviews": str(
            DUMPS / "other" / "pageview_complete" / "2026" / "2026-06" / f"pageviews-{DAY}-user.bz2"
        ),
        "collections": None if collections is None else str(collections),
        "memory": 64 << 20,
        "threads": 2,
        "dump_run": RUN,
        "cirrus_run": INDEX,
        "pageviews_day": "2026-06-14",
        "collections_run": RUN if collections else None,
        "files": [],
    }


@pytest.fixture(scope="session")
def catalogs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """``{"enwiki": folder, "simplewiki": folder}``: every part, collections included."""
    root = tmp_path_factory.mktemp("catalogs")
    collections = root / "collections.parquet"
    meta = DUMPS / "metawiki" / RUN
    build_translation_collections(
        str(meta / f"metawiki-{RUN}-pages-articles.xml.bz2"),
        str(meta / f"metawiki-{RUN}-iwlinks.sql.gz"),
        str(DUMPS / "wikidatawiki" / RUN / f"wikidatawiki-{RUN}-wb_items_per_site.sql.gz"),
        str(collections),
    )
    out = {}
    for wiki in ("enwiki", "simplewiki"):
        folder = root / wiki
        build_translation_catalog(spec(wiki, collections), str(folder))
        out[wiki] = folder
    yield out
