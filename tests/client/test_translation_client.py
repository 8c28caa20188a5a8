"""The client's side of today's translation service: every parameter on the wire, pages and
their continuation, the page-collection endpoints, and what is refused before sending. The
server answers from the translation catalog shipped in the package (English Wikipedia
articles of the translation test dumps)."""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest
from support.clients import USER_AGENT, client_of
from support.contract_server import ContractServer, Scripted

import wikisuggest
from wikisuggest import (
    CollectionMembership,
    InvalidParameter,
    PageCollection,
    PageCollectionGroups,
    TranslationPage,
    TranslationRecommendation,
    UnprocessableEntity,
)
from wikisuggest.translation.sample import default_catalog_path

MATHS = "Vital articles (en)/Mathematics"
ESSENTIAL = "Essential Articles"
SCIENCE = "Wiki99/Science"
#: Swahili lacks most of the essential articles: a walk of several pages.
TARGET = "sw"
PAGED: dict[str, Any] = {"collections": True, "seed": ESSENTIAL, "count": 4}


@pytest.fixture(scope="module", params=["envelope", "array"])
def server(request: pytest.FixtureRequest) -> Iterator[wikisuggest.Server]:
    with wikisuggest.Server(
        translation=default_catalog_path(), translation_shape=request.param, seed=1
    ) as running:
        yield running


@pytest.fixture(scope="module")
def envelope() -> Iterator[wikisuggest.Server]:
    with wikisuggest.Server(
        translation=default_catalog_path(), translation_shape="envelope", seed=1
    ) as running:
        yield running


def key(item: TranslationRecommendation) -> str | None:
    return item.wikidata_id or item.title


def test_every_parameter_on_the_wire(contract_server: ContractServer, client_kind: str) -> None:
    client = client_of(client_kind, base_url=contract_server.url, max_retries=0)
    client.translation_recommendations(
        "en",
        "fr",
        count=7,
        seed=[MATHS],
        topic=["physics", "music+history"],
        country=["can", "fra"],
        collections=True,
        featured_collection="Wiki99/Food",
        min_size=100,
        max_size=9000,
        lead_section=True,
        include_pageviews=True,
        continue_offset=24,
        continue_seed=99,
    )
    (sent,) = contract_server.requests
    assert urllib.parse.parse_qs(sent.raw_query) == {
        "source": ["en"],
        "target": ["fr"],
        "count": ["7"],
        "seed": [MATHS],
        "topic": ["physics|music+history"],
        "country": ["can|fra"],
        "collections": ["true"],
        "featured_collection": ["Wiki99/Food"],
        "min_size": ["100"],
        "max_size": ["9000"],
        "lead_section": ["true"],
        "include_pageviews": ["true"],
        "search_algorithm": ["morelike"],
        "rank_method": ["default"],
        "continue_offset": ["24"],
        "continue_seed": ["99"],
    }
    assert "%2B" in sent.raw_query  # "+" (and) is not a space
    contract_server.reset()
    client.translation_recommendations("en", "fr")
    (plain,) = contract_server.requests
    unsent = {"country", "collections", "featured_collection", "min_size", "max_size"}
    unsent |= {"lead_section", "continue_offset", "continue_seed"}
    assert not unsent & set(plain.query)


def test_page_collection_requests_on_the_wire(contract_server: ContractServer) -> None:
    contract_server.then(
        Scripted(200, [{"name": "A"}]),
        Scripted(200, {"ungrouped": []}),
        Scripted(200, {"Q1": True}),
        Scripted(200, {"Cat": False}),
    )
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=0)
    assert client.page_collections() == [PageCollection("A")]
    assert client.page_collection_groups() == PageCollectionGroups({}, ())
    assert "Q1" in client.page_collection_membership("Wiki99/Food", qids=["Q1"])
    client.page_collection_membership("Pets", titles=["Chat noir", "Chien"], language="fr")
    paths = [r.path.rsplit("/", 1)[-1] for r in contract_server.requests]
    assert paths == [
        "page-collections",
        "page-collection-groups",
        "page-collection-membership",
        "page-collection-membership",
    ]
    assert contract_server.requests[2].raw_query == "collection=Wiki99%2FFood&qids=Q1"
    assert urllib.parse.parse_qs(contract_server.requests[3].raw_query) == {
        "collection": ["Pets"],
        "language": ["fr"],
        "titles": ["Chat noir|Chien"],
    }


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"country": ["canada"]}, "country"),
        ({"country": "ca|fr"}, "country"),
        ({"min_size": -1}, "min_size"),
        ({"min_size": 10, "max_size": 5}, "min_size"),
        ({"continue_offset": -1}, "continue_offset"),
        ({"continue_seed": 2**40}, "continue_seed"),
        ({"featured_collection": " "}, "featured_collection"),
        ({"collections": True, "seed": ["A", "B"]}, "seed"),
        ({"lead_section": "yes"}, "lead_section"),
        ({"max_size": 1.5}, "max_size"),
    ],
)
def test_refused_before_sending(
    contract_server: ContractServer, client_kind: str, options: dict[str, Any], parameter: str
) -> None:
    client = client_of(client_kind, base_url=contract_server.url, max_retries=0)
    with pytest.raises(InvalidParameter) as refused:
        client.translation_recommendations("en", "fr", **options)
    assert refused.value.parameter == parameter
    with pytest.raises(InvalidParameter):
        client.translation_page("en", "fr", **options)
    sync = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=0)
    with pytest.raises(InvalidParameter):
        list(sync.iter_translation_recommendations("en", "fr", **options))
    (item,) = sync.translation_recommendations_many([("en", "fr")], **options)
    assert isinstance(item.error, InvalidParameter) and item.error.parameter == parameter
    bads: list[dict[str, Any]] = [
        {"qids": ["42"]},
        {"titles": ["Cat"]},
        {},
        {"qids": ["Q1"], "titles": ["Cat"]},
    ]
    for bad in bads:
        with pytest.raises(InvalidParameter):
            client.page_collection_membership("Pets", **bad)
    assert contract_server.requests == []


def test_pages_end_to_end(envelope: wikisuggest.Server, client_kind: str) -> None:
    client = client_of(client_kind, base_url=envelope.url, max_retries=0)
    (essential,) = [c for c in client.page_collections() if c.name == ESSENTIAL]
    first = client.translation_page("en", TARGET, **PAGED)
    assert isinstance(first, TranslationPage) and first.has_more
    assert first.continue_seed is not None
    walked = list(first.items)
    page = first
    pages = 1
    while page.has_more:
        page = client.translation_page(
            "en",
            TARGET,
            **PAGED,
            continue_offset=page.continue_offset,
            continue_seed=page.continue_seed,
        )
        pages += 1
        fresh = [r for r in page.items if key(r) not in {key(w) for w in walked}]
        walked += fresh
        if not fresh:
            break
    assert pages > 3
    present = walked[0].collection
    assert present is not None and present.articles_by_language_count is not None
    assert essential.articles_count is not None
    expected = essential.articles_count - present.articles_by_language_count[TARGET]
    assert len({key(r) for r in walked}) == len(walked) == expected

    # The iterator walks the same pages: every item once, in the same order, under the seed.
    followed = list(
        wikisuggest.Client(USER_AGENT, base_url=envelope.url).iter_translation_recommendations(
            "en", TARGET, **PAGED, continue_seed=first.continue_seed
        )
    )
    assert followed == walked
    limited = asyncio.run(_collect(envelope.url, limit=10, continue_seed=first.continue_seed))
    assert limited == walked[:10]
    every = asyncio.run(_collect(envelope.url, continue_seed=first.continue_seed))
    assert every == walked
    other = asyncio.run(_collect(envelope.url, continue_seed=first.continue_seed + 1))
    assert other != walked and sorted(map(key, other), key=str) == sorted(map(key, walked), key=str)


async def _collect(url: str, **options: Any) -> list[TranslationRecommendation]:
    async with wikisuggest.AsyncClient(USER_AGENT, base_url=url) as client:
        walk = client.iter_translation_recommendations("en", TARGET, **PAGED, **options)
        return [item async for item in walk]


def test_both_shapes(server: wikisuggest.Server, client_kind: str) -> None:
    client = client_of(client_kind, base_url=server.url, max_retries=0)
    items = client.translation_recommendations("en", "fr", min_size=1000, max_size=5000, count=20)
    assert isinstance(items, list) and len(items) == 20
    page = client.translation_page("en", "fr", min_size=1000, max_size=5000, count=20)
    assert len(page) == 20
    raw = client.translation_recommendations("en", "fr", count=2, raw=True)
    if isinstance(raw, dict):
        assert all(r.size is not None and 1000 <= r.size <= 5000 for r in items)
        assert set(raw) == {"recommendations", "continue_offset", "continue_seed"}
    else:
        # The contract's array: no continuation, so the iterator stops after one page.
        assert not page.has_more and page.continue_offset is None
        walk = _sync(server).iter_translation_recommendations("en", TARGET, **PAGED)
        assert len(list(walk)) == PAGED["count"]


def _sync(server: wikisuggest.Server) -> wikisuggest.Client:
    return wikisuggest.Client(USER_AGENT, base_url=server.url, max_retries=0)


def test_filters_reach_the_server(envelope: wikisuggest.Server) -> None:
    client = _sync(envelope)
    lead = client.translation_recommendations(
        "en", "fr", lead_section=True, min_size=400, max_size=1500, count=5
    )
    assert len(lead) == 5 and all(
        r.lead_section_size is not None and 400 <= r.lead_section_size <= 1500 for r in lead
    )
    canada = client.translation_page("en", "fr", country="can")
    assert len(canada) > 0 and not canada.has_more
    featured = client.translation_recommendations(
        "en", "fr", topic="stem", featured_collection=SCIENCE, count=6
    )
    assert any(r.collection is not None and r.collection.name == SCIENCE for r in featured)
    batch = client.translation_recommendations_many(
        [("en", "fr"), ("en", "sw")], min_size=1000, max_size=5000, count=5
    )
    for item in batch:
        assert item.result is not None and len(item.result) == 5
        assert all(r.size is not None and 1000 <= r.size <= 5000 for r in item.result)


def test_sibling_endpoints(envelope: wikisuggest.Server, client_kind: str) -> None:
    client = client_of(client_kind, base_url=envelope.url, max_retries=0)
    listed = client.page_collections()
    assert ESSENTIAL in {c.name for c in listed}
    assert all(isinstance(c, PageCollection) for c in listed)
    groups = client.page_collection_groups()
    assert sorted(groups.groups) == ["Wiki99"]
    assert [c.name for c in groups.groups["Wiki99"]] == ["Wiki99/Food", SCIENCE]
    assert ESSENTIAL in {c.name for c in groups.ungrouped}
    (first,) = client.translation_recommendations("en", TARGET, **{**PAGED, "count": 1})
    assert first.title is not None and first.wikidata_id is not None
    by_title = client.page_collection_membership(
        ESSENTIAL, titles=[first.title, "Main Page"], language="en"
    )
    assert isinstance(by_title, CollectionMembership)
    assert by_title.found == {first.title: True, "Main Page": False}
    by_qid = client.page_collection_membership(ESSENTIAL, qids=[first.wikidata_id, "Q1"])
    assert by_qid.found == {first.wikidata_id: True, "Q1": False}


def test_service_refusals(envelope: wikisuggest.Server, client_kind: str) -> None:
    client = client_of(client_kind, base_url=envelope.url, max_retries=0)
    with pytest.raises(UnprocessableEntity):
        client.translation_recommendations("en", "zz-unknown")
    with pytest.raises(UnprocessableEntity):
        client.translation_page("en", "zz-unknown", collections=True, seed=ESSENTIAL)


def test_iterator_sends_the_continuation_back(contract_server: ContractServer) -> None:
    a, b, c = ({"title": t, "wikidata_id": f"Q{i}"} for i, t in enumerate("ABC", 1))
    contract_server.then(
        Scripted(200, {"recommendations": [a, b, a], "continue_offset": 2, "continue_seed": 5}),
        Scripted(200, {"recommendations": [b, c], "continue_offset": -1, "continue_seed": 5}),
    )
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=0)
    walk = client.iter_translation_recommendations("en", "fr", collections=True, seed="X")
    assert [r.title for r in walk] == ["A", "B", "C"]
    first, second = (r.query for r in contract_server.requests)
    assert "continue_offset" not in first and "continue_seed" not in first
    assert (second["continue_offset"], second["continue_seed"]) == (["2"], ["5"])
    contract_server.reset()
    contract_server.then(
        Scripted(200, {"recommendations": [a, b], "continue_offset": 1, "continue_seed": 5})
    )
    limited = client.iter_translation_recommendations("en", "fr", limit=1)
    assert [r.title for r in limited] == ["A"]
    assert len(contract_server.requests) == 1
