"""Today's translation service: the records for pages and collections, and the reference
server's envelope, collections and pagination, read through them (the server answers from the
catalog shipped in the package: English Wikipedia articles of the translation test dumps)."""

from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import reference_server as ref
from support.contract_server import ContractServer, Scripted
from support.dump_formats import EXPECTED

import wikisuggest
from wikisuggest import (
    CollectionMembership,
    PageCollection,
    PageCollectionGroups,
    PageCollectionMetadata,
    TranslationPage,
    TranslationRecommendation,
)

API = "/service/lw/recommendation/api/v1/translation"
ESSENTIAL = "Essential Articles"
USER_AGENT = "wikisuggest-tests/1.0 (tests@example.org)"


def test_page_from_both_shapes() -> None:
    item = {"title": "Cello", "rank": 0, "size": 3000, "lead_section_size": None, "badge": 1}
    item["collection"] = {
        "name": "Wiki99/Music",
        "description": None,
        "end_date": "2026-01-01",
        "articles_count": 99,
        "articles_by_language_count": {"fr": 40},
        "new": True,
    }
    page = TranslationPage.from_dict(
        {"recommendations": [item], "continue_offset": 12, "continue_seed": 7}
    )
    assert (page.continue_offset, page.continue_seed, page.has_more) == (12, 7, True)
    (rec,) = page
    assert (rec.size, rec.lead_section_size, rec.extra) == (3000, None, {"badge": 1})
    assert rec.collection == PageCollectionMetadata(
        "Wiki99/Music", None, "2026-01-01", 99, {"fr": 40}
    )
    assert rec.collection is not None and rec.collection.extra == {"new": True}
    assert hash(rec) == hash(TranslationRecommendation.from_dict(item))
    assert TranslationPage.from_dict(page.to_dict()) == page
    assert page.to_dict()["recommendations"][0]["collection"]["new"] is True
    array = TranslationPage.from_dict([{"title": "A"}, {"title": "B"}])
    assert [r.title for r in array] == ["A", "B"]
    assert (array.continue_offset, array.has_more) == (None, False)
    end = TranslationPage.from_dict({"recommendations": [], "continue_offset": -1})
    assert not end.has_more and len(end) == 0
    wrongs: tuple[object, ...] = ({"items": []}, "text", 3)
    for wrong in wrongs:
        with pytest.raises(TypeError):
            TranslationPage.from_dict(wrong)  # type: ignore[arg-type]


def test_collection_records() -> None:
    groups = PageCollectionGroups.from_dict(
        {
            "Wiki99": [{"name": "Wiki99/A", "articles_count": 1}, {"name": "Wiki99/B"}],
            "ungrouped": [{"name": "Solo", "description": "One", "end_date": None}],
        }
    )
    assert [c.name for c in groups.groups["Wiki99"]] == ["Wiki99/A", "Wiki99/B"]
    assert groups.ungrouped == (PageCollection("Solo", "One"),)
    assert PageCollectionGroups.from_dict(groups.to_dict()) == groups
    found = CollectionMembership.from_dict({"Q1": True, "Q2": False, "Cat": True})
    assert found.members == ("Q1", "Cat")
    assert "Q1" in found and "Q2" not in found and "Q9" not in found
    with pytest.raises(TypeError):
        CollectionMembership.from_dict({"Q1": "yes"})


@pytest.fixture(scope="module")
def envelope(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wikisuggest.Server]:
    folder: Path = tmp_path_factory.mktemp("envelope")
    with ref.start(folder, translation_shape="envelope", anonymous_rate_limit=10**6) as server:
        yield server


def get(server: wikisuggest.Server, path: str, **params: Any) -> Any:
    query = urllib.parse.urlencode(params)
    with urllib.request.urlopen(f"{server.url}{path}?{query}", timeout=30) as response:
        return json.load(response)


def pages(server: wikisuggest.Server, **params: Any) -> list[TranslationPage]:
    """Every page of a single collection, following the continuation to its end."""
    result = [TranslationPage.from_dict(get(server, API, **params))]
    seen = {r.wikidata_id for r in result[0]}
    while result[-1].has_more:
        last = result[-1]
        params.update(continue_offset=last.continue_offset, continue_seed=last.continue_seed)
        page = TranslationPage.from_dict(get(server, API, **params))
        result.append(page)
        new = {r.wikidata_id for r in page} - seen
        if not new:
            break
        seen |= new
    return result


def test_pagination_end_to_end(envelope: wikisuggest.Server) -> None:
    listed = [PageCollection.from_dict(c) for c in get(envelope, f"{API}/page-collections")]
    essential = next(c for c in listed if c.name == ESSENTIAL)
    base = {"source": "en", "target": "sw", "collections": "true", "seed": ESSENTIAL.upper()}
    walked = pages(envelope, **base, count=4)
    assert len(walked) > 3
    items = [r for page in walked for r in page]
    ids = [r.wikidata_id for r in items]
    # Only the overlap repeats: each page starts with the previous page's last item.
    for before, after in itertools.pairwise(walked):
        if before.items and after.items:
            assert after.items[0] == before.items[-1]
    unique = set(ids)
    assert len(ids) - len(unique) == sum(1 for p in walked[1:] if p.items)
    present = items[0].collection
    assert present is not None and present.articles_by_language_count is not None
    assert essential.articles_count is not None
    assert len(unique) == essential.articles_count - present.articles_by_language_count["sw"]
    assert all(r.collection and r.collection.name == ESSENTIAL and r.rank == 0 for r in items)
    # A given seed gives the same pages; another seed another order.
    seed = walked[0].continue_seed
    again = pages(envelope, **base, count=4, continue_seed=seed)
    assert [p.items for p in again] == [p.items for p in walked]
    other = pages(envelope, **base, count=4, continue_seed=(seed or 0) + 1)
    assert [r.wikidata_id for r in other[0]] != [r.wikidata_id for r in walked[0]]
    assert {r.wikidata_id for p in other for r in p} == unique


def test_filters_and_siblings(envelope: wikisuggest.Server) -> None:
    sized = TranslationPage.from_dict(
        get(envelope, API, source="en", target="fr", min_size=1000, max_size=5000, count=20)
    )
    assert len(sized) == 20
    assert all(r.size is not None and 1000 <= r.size <= 5000 for r in sized)
    assert all(r.lead_section_size is None for r in sized)
    lead = TranslationPage.from_dict(
        get(envelope, API, source="en", target="fr", lead_section="1", max_size=600, count=5)
    )
    assert len(lead) == 5
    assert all(r.lead_section_size is not None and r.lead_section_size <= 600 for r in lead)
    canada = TranslationPage.from_dict(get(envelope, API, source="en", target="fr", country="can"))
    assert len(canada) > 0 and not canada.has_more
    groups = PageCollectionGroups.from_dict(get(envelope, f"{API}/page-collection-groups"))
    assert sorted(groups.groups) == ["Wiki99"]
    essential = pages(envelope, source="en", target="de", collections="1", seed=ESSENTIAL)
    first = next(iter(essential[0]))
    found = CollectionMembership.from_dict(
        get(
            envelope,
            f"{API}/page-collection-membership",
            collection=ESSENTIAL.lower(),
            language="en",
            titles=f"{first.title}|Main Page",
        )
    )
    assert found.found == {first.title: True, "Main Page": False}


def test_client_reads_the_envelope(envelope: wikisuggest.Server) -> None:
    client = wikisuggest.Client(USER_AGENT, base_url=envelope.url, max_retries=0)
    top = client.translation_recommendations(
        "en", "fr", topic="biography", count=5, rank_method="sitelinks"
    )
    data = json.loads((EXPECTED / "topic.json").read_text("utf-8"))
    (case,) = [c for c in data["cases"] if c["name"] == "topic-biography-fr"]
    first = case["body"]["recommendations"][0]
    assert (top[0].title, top[0].wikidata_id, top[0].size, top[0].collection, top[0].extra) == (
        first["title"],
        first["wikidata_id"],
        first["size"],
        None,
        {},
    )
    raw = client.translation_recommendations("en", "fr", count=2, raw=True)
    assert set(raw) == {"recommendations", "continue_offset", "continue_seed"}
    with pytest.raises(urllib.error.HTTPError) as invalid:
        get(envelope, API, source="en", target="fr", continue_seed="x", lead_section="maybe")
    assert invalid.value.code == 422
    detail = json.load(invalid.value)["detail"]
    assert [(d["type"], d["loc"][1]) for d in detail] == [
        ("bool_parsing", "lead_section"),
        ("int_parsing", "continue_seed"),
    ]


def test_unknown_shape_is_refused(tmp_path: Path) -> None:
    with pytest.raises(wikisuggest.WikisuggestError, match="translation_shape"):
        ref.start(tmp_path, translation_shape="xml")


def test_native_records_carry_the_new_fields(contract_server: ContractServer) -> None:
    """Records built by the extension equal those ``from_dict`` builds, new fields included."""
    item = {
        "title": "Cello",
        "pageviews": 0,
        "wikidata_id": "Q8371",
        "rank": 0,
        "langlinks_count": 4,
        "size": 3000,
        "lead_section_size": 250,
        "collection": {
            "name": "Wiki99/Music",
            "description": "Instruments",
            "end_date": None,
            "articles_count": 99,
            "articles_by_language_count": {"fr": 40},
            "since": 2024,
        },
        "badge": "x",
    }
    body = {"recommendations": [item], "continue_offset": 3, "continue_seed": 9}
    contract_server.then(Scripted(200, body))
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=0)
    (native,) = client.translation_recommendations("en", "fr")
    expected = TranslationRecommendation.from_dict(item)
    assert native == expected
    assert native.collection is not None and expected.collection is not None
    assert native.collection.articles_by_language_count == {"fr": 40}
    assert native.collection.extra == {"since": 2024}
    assert native.extra == {"badge": "x"}
    assert native.to_dict() == item
