"""The reference server fetching pages from a real MediaWiki, as production's service does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.local_mediawiki import USER_AGENT, LocalWiki, mediawiki
from support.reference_server import DATASETS

import wikisuggest
from wikisuggest import LinkEngine, Wiki

__all__ = ["mediawiki"]


@pytest.fixture(scope="module")
def served(mediawiki: LocalWiki) -> Iterator[wikisuggest.Server]:
    with wikisuggest.Server(
        datasets=DATASETS, wiki_apis={"enwiki": mediawiki.api_url}, port=0
    ) as server:
        yield server


def _expected(wikitext: str, title: str, pageid: int, revid: int) -> list[dict[str, object]]:
    engine = LinkEngine.open(DATASETS / "enwiki", "enwiki")
    result = engine.recommend(wikitext, title, pageid=pageid, revid=revid)
    return [link.to_dict() for link in result.links]


def test_get_fetches_the_current_revision(served: wikisuggest.Server, mediawiki: LocalWiki) -> None:
    page = Wiki(mediawiki.api_url, USER_AGENT).page("Achilles")
    assert page is not None
    client = wikisuggest.Client(USER_AGENT, base_url=served.url)
    result = client.link_recommendations("wikipedia", "en", "Achilles")
    assert (result.pageid, result.revid) == (page.pageid, page.revid)
    assert result.links
    expected = _expected(page.wikitext, "Achilles", page.pageid, page.revid)
    assert [link.to_dict() for link in result.links] == expected


def test_revision_is_honoured_and_missing_pages_are_404(
    served: wikisuggest.Server, mediawiki: LocalWiki
) -> None:
    wiki = Wiki(mediawiki.api_url, USER_AGENT)
    old = wiki.page("Amphibian")
    assert old is not None
    # A newer revision that drops the article's first paragraph.
    newer = mediawiki.anonymous_edit(
        "Amphibian", old.wikitext.split("\n\n", 1)[-1], baserevid=old.revid
    )
    client = wikisuggest.Client(USER_AGENT, base_url=served.url)
    latest = client.link_recommendations("wikipedia", "en", "Amphibian")
    assert latest.revid == newer
    pinned = client.link_recommendations("wikipedia", "en", "Amphibian", revision=old.revid)
    assert pinned.revid == old.revid and pinned.pageid == old.pageid
    expected = _expected(old.wikitext, "Amphibian", old.pageid, old.revid)
    assert [link.to_dict() for link in pinned.links] == expected
    assert [link.to_dict() for link in latest.links] != expected

    with pytest.raises(wikisuggest.NotFound):
        client.link_recommendations("wikipedia", "en", "No such page here")
    with pytest.raises(wikisuggest.NotFound):
        client.link_recommendations("wikipedia", "en", "Amphibian", revision=10**9)


def test_cli_rejects_a_malformed_wiki_api() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "serve", "--wiki-api", "no-equals-sign"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "WIKI_ID=API_URL" in out.stderr
