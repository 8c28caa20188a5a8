"""``TranslationEngine.published``: the newest complete dumps found on a loopback host laid out
like Wikimedia's, only the parts asked for downloaded, verified, resumed after a cut, built once,
and answered again from the cache without the network."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.dumps_mirror import DumpsMirror, Fault, serve_dumps

import wikisuggest
from wikisuggest import DatasetError, TranslationEngine


@pytest.fixture
def mirror(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[DumpsMirror]:
    for mirror in serve_dumps():
        monkeypatch.setenv("DUMPS_BASE_URL", mirror.base_url())
        monkeypatch.setenv("WIKISUGGEST_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.delenv("WIKISUGGEST_OFFLINE", raising=False)
        yield mirror


def data_gets(mirror: DumpsMirror) -> list[str]:
    return [
        r.path
        for r in mirror.requests
        if r.method == "GET" and r.path.endswith((".gz", ".bz2")) and r.status in (200, 206)
    ]


def test_one_call_fetches_the_complete_run_and_answers(mirror: DumpsMirror) -> None:
    engine = TranslationEngine.published("enwiki", parts=("sql", "cirrus", "pageviews"))
    manifest = engine.manifest["provenance"]
    # 20260620 is still running and the index dump of 20260614 has no _SUCCESS.
    assert manifest["dump_run"] == "20260601"
    assert manifest["cirrus_run"] == "20260607"
    assert manifest["pageviews_day"] == "2026-06-14"
    assert set(engine.parts) == {"sql", "cirrus", "pageviews"}
    fetched = data_gets(mirror)
    assert not any("wb_items_per_site" in p or "metawiki" in p for p in fetched)
    assert not any("automated" in p or "20260613" in p for p in fetched)
    assert engine.recommend("sw", topic="biography", rank_method="sitelinks")
    # Again, online: the indexes and status files are read, no data file downloaded.
    mirror.requests.clear()
    again = TranslationEngine.published("enwiki", parts=("sql", "cirrus", "pageviews"), update=True)
    assert again.path == engine.path
    assert data_gets(mirror) == []
    # And offline: nothing is asked at all.
    mirror.offline = True
    mirror.requests.clear()
    assert TranslationEngine.published("enwiki", parts=("sql",), offline=True).path == engine.path
    assert mirror.requests == []


def test_a_cut_download_resumes_and_a_bad_checksum_is_refused(mirror: DumpsMirror) -> None:
    page = DumpsMirror.run_path("enwiki", "20260601", "page")
    mirror.arm(page, Fault(cut_after=4000))
    engine = TranslationEngine.published("simplewiki")
    assert len(engine) > 0
    full = TranslationEngine.published("enwiki")
    assert len(full) > len(engine)
    ranges = [
        r
        for r in mirror.requests
        if r.path.endswith(page.lstrip("/")) and "range" in {k.lower() for k in r.headers}
    ]
    assert ranges, "the cut transfer was resumed with a Range request"
    mirror.publish_wrong_checksum("simplewiki", "20260601", "langlinks")
    with pytest.raises(DatasetError):
        TranslationEngine.published("simplewiki", parts=("sql", "pageviews"), update=True)


def test_a_day_of_views_and_errors(mirror: DumpsMirror) -> None:
    engine = TranslationEngine.published("enwiki", parts=("pageviews",), day="2026-06-13")
    assert engine.manifest["provenance"]["pageviews_day"] == "2026-06-13"
    with pytest.raises(DatasetError):
        TranslationEngine.published("enwiki", parts=("pageviews",), day="2026-06-01")
    with pytest.raises(wikisuggest.InvalidParameter):
        TranslationEngine.published("enwiki", parts=("everything",))
    with pytest.raises(wikisuggest.MissingCatalogPart):
        TranslationEngine.published("enwiki").recommend("sw", topic="biography")
