"""The client (sync and async) against the reference server, end to end over loopback."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import reference_server as ref
from support.clients import USER_AGENT
from support.dump_formats import EXPECTED

import wikisuggest


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wikisuggest.Server]:
    with ref.start(tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make(kind: str, server: wikisuggest.Server, **options: Any) -> Any:
    cls = wikisuggest.Client if kind == "sync" else wikisuggest.AsyncClient
    return cls(USER_AGENT, base_url=server.url, max_retries=0, **options)


async def call(client: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    result = getattr(client, method)(*args, **kwargs)
    if isinstance(client, wikisuggest.AsyncClient):
        result = await result
    return result


def assert_offsets(result: wikisuggest.LinkRecommendationSet, wikitext: str) -> None:
    assert result.links_count == len(result.links)
    for i, link in enumerate(result.links):
        start = link.wikitext_offset
        assert start is not None and link.score is not None
        assert wikitext[start : start + len(link.link_text)] == link.link_text
        assert link.link_index == i
        assert 0.0 <= link.score <= 1.0


async def test_get_links_for_the_latest_revision(kind: str, server: wikisuggest.Server) -> None:
    client = make(kind, server)
    result = await call(
        client, "link_recommendations", "wikipedia", "en", "anarchism", threshold=0.1
    )
    assert (result.page_title, result.pageid, result.revid) == ("Anarchism", 12, 101)
    assert result.meta.format_version == 1
    assert len(result.meta.dataset_checksums.anchors) == 64
    texts = [link.link_text for link in result.links]
    assert "political philosophy" in texts
    # Already linked in the page: never suggested again.
    assert all(link.link_target != "Socialism" for link in result.links)
    assert_offsets(result, ref.ANARCHISM)


async def test_get_links_by_revision_and_title_with_slash(
    kind: str, server: wikisuggest.Server
) -> None:
    client = make(kind, server)
    old = await call(client, "link_recommendations", "wikipedia", "en", "Anarchism", revision=100)
    assert old.revid == 100
    band = await call(client, "link_recommendations", "wikipedia", "en", "AC/DC", threshold=0.0)
    assert (band.page_title, band.pageid) == ("AC/DC", 13)
    assert_offsets(band, "'''AC/DC''' is a rock band.")


async def test_post_links_with_a_personal_token(kind: str, server: wikisuggest.Server) -> None:
    client = make(kind, server, auth=ref.PERSONAL_TOKEN)
    everything = await call(
        client,
        "link_recommendations_for_revision",
        "wikipedia",
        "en",
        "Anarchism",
        wikitext=ref.ANARCHISM,
        revid=5,
        pageid=6,
        threshold=0.1,
        max_recommendations=0,
    )
    assert (everything.revid, everything.pageid) == (5, 6)
    no_lead = await call(
        client,
        "link_recommendations_for_revision",
        "wikipedia",
        "en",
        "Anarchism",
        wikitext=ref.ANARCHISM,
        revid=5,
        pageid=6,
        threshold=0.1,
        max_recommendations=0,
        sections_to_exclude=["%LEAD%"],
    )
    lead_end = ref.ANARCHISM.index("== History")
    assert any(link.wikitext_offset < lead_end for link in everything.links)
    assert no_lead.links and all(link.wikitext_offset > lead_end for link in no_lead.links)
    limited = await call(
        client,
        "link_recommendations_for_revision",
        "wikipedia",
        "en",
        "Anarchism",
        wikitext=ref.ANARCHISM,
        revid=5,
        pageid=6,
        threshold=0.1,
        max_recommendations=1,
    )
    assert limited.links_count == 1


async def test_link_errors(kind: str, server: wikisuggest.Server) -> None:
    client = make(kind, server)
    with pytest.raises(wikisuggest.Unauthorized) as unauthorized:
        await call(
            client,
            "link_recommendations_for_revision",
            "wikipedia",
            "en",
            "Cat",
            wikitext="x",
            revid=1,
            pageid=1,
        )
    assert unauthorized.value.reason == "Jwt is missing"
    with pytest.raises(wikisuggest.UnsupportedDomain) as unsupported:
        await call(client, "link_recommendations", "wikipedia", "xx", "Cat")
    assert unsupported.value.status == 404
    assert unsupported.value.valid_project_domain_pairs == ["wikipedia/en"]
    with pytest.raises(wikisuggest.NotFound) as missing:
        await call(client, "link_recommendations", "wikipedia", "en", "No such page")
    assert missing.value.detail == "Page not found: No_such_page"


def recorded(kind: str, name: str) -> list[dict[str, Any]]:
    """The items production's translation service answered for a recorded case on the
    translation test dumps, which the server's shipped catalog is built from."""
    data = json.loads((EXPECTED / f"{kind}.json").read_text("utf-8"))
    (case,) = [c for c in data["cases"] if c["name"] == name]
    return list(case["body"]["recommendations"])


async def test_translation_golden_record(kind: str, server: wikisuggest.Server) -> None:
    """Production's answers on the same dumps: popular mode with the day's views, and
    Cantonese (`yue`, whose interlanguage links say `zh-yue`)."""
    client = make(kind, server)
    items = await call(
        client,
        "translation_recommendations",
        "en",
        "fr",
        count=12,
        include_pageviews=True,
        rank_method="sitelinks",
    )
    want = recorded("popular", "popular-fr-pageviews")
    fields = ("title", "wikidata_id", "rank", "langlinks_count")
    assert [tuple(getattr(i, f) for f in fields) for i in items] == [
        tuple(w[f] for f in fields) for w in want
    ]
    for item, production in zip(items, want, strict=True):
        assert item.pageviews is not None and item.pageviews > 0
        if production["pageviews"]:  # production looks up a few titles' views only
            assert item.pageviews == production["pageviews"]
    cantonese = await call(
        client, "translation_recommendations", "en", "yue", count=5, rank_method="sitelinks"
    )
    want = recorded("popular", "popular-yue-sitelinks")[:5]
    assert [(i.title, i.langlinks_count) for i in cantonese] == [
        (w["title"], w["langlinks_count"]) for w in want
    ]
    counts = [item.langlinks_count for item in cantonese]
    assert counts == sorted(counts, reverse=True)


async def test_translation_modes_and_errors(kind: str, server: wikisuggest.Server) -> None:
    client = make(kind, server)
    popular = await call(client, "translation_recommendations", "en", "fr", count=12)
    assert len(popular) == 12
    assert all(item.pageviews == 0 for item in popular)
    again = await call(client, "translation_recommendations", "en", "fr", count=12)
    assert [i.title for i in again] == [i.title for i in popular]  # seeded shuffle
    people = await call(
        client, "translation_recommendations", "en", "de", topic="biography", count=3
    )
    assert len(people) == 3
    with pytest.raises(wikisuggest.UnprocessableEntity) as invalid:
        await call(client, "translation_recommendations", "en", "qq")
    assert invalid.value.errors[0]["msg"] == "Value error, Invalid target language code"


def test_rate_limit_and_expired_token(tmp_path: Path) -> None:
    with ref.start(tmp_path, anonymous_rate_limit=2, access_token_ttl=1) as server:
        client = wikisuggest.Client(USER_AGENT, base_url=server.url, max_retries=0)
        for _ in range(2):
            client.translation_recommendations("en", "fr", count=1)
        with pytest.raises(wikisuggest.RateLimited) as limited:
            client.translation_recommendations("en", "fr", count=1)
        assert limited.value.retry_after == 30
        token = ref.client_credentials_token(server.url)
        assert token["expires_in"] == 1 and "refresh_token" not in token
        authed = wikisuggest.Client(
            USER_AGENT, base_url=server.url, max_retries=0, auth=token["access_token"]
        )
        assert authed.translation_recommendations("en", "fr", count=1)
        time.sleep(2.1)
        with pytest.raises(wikisuggest.Unauthorized) as expired:
            authed.translation_recommendations("en", "fr", count=1)
        assert expired.value.reason == "Jwt is expired"
        assert 'error="invalid_token"' in (expired.value.www_authenticate or "")
    assert not server.running


def test_server_stops_and_refuses_bad_options(tmp_path: Path) -> None:
    server = ref.start(tmp_path)
    url = server.url
    assert url.startswith("http://127.0.0.1:") and server.running
    server.stop()
    server.stop()
    client = wikisuggest.Client(USER_AGENT, base_url=url, max_retries=0, timeout=2)
    with pytest.raises(wikisuggest.TransportError):
        client.translation_recommendations("en", "fr")
    with pytest.raises(wikisuggest.WikisuggestError, match=r"missing\.toml: No such file"):
        wikisuggest.Server(clients=tmp_path / "missing.toml")
    with pytest.raises(wikisuggest.WikisuggestError, match="IP address"):
        wikisuggest.Server(host="localhost")
