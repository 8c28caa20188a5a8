"""The layout the extension shares with the Python records: it fills the slots of the frozen
dataclasses of ``wikisuggest.records`` and of ``wikisuggest.BatchItem`` by name, bypassing
``__init__``. A field added to a dataclass and not to the Rust side would be left unset
(reading it raises ``AttributeError``); a name the Rust side sets that is no field fails
where it is set. Every kind of record the extension builds is built here and checked whole.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from support.clients import USER_AGENT
from support.contract_server import ContractServer, Scripted, link_set
from support.paths import REPO

import wikisuggest
from wikisuggest import records
from wikisuggest.engine import Page


def every_slot_set(obj: Any, seen: set[type] | None = None) -> set[type]:
    """Checks that every field of ``obj`` (a dataclass), and of the records it holds, has a
    value; returns the record classes it met."""
    seen = set() if seen is None else seen
    assert dataclasses.is_dataclass(obj) and not isinstance(obj, type)
    seen.add(type(obj))
    for field in dataclasses.fields(obj):
        try:
            value = getattr(obj, field.name)
        except AttributeError:
            pytest.fail(f"{type(obj).__name__}.{field.name} was left unset")
        values = value if isinstance(value, (tuple, list)) else [value]
        for v in values:
            if dataclasses.is_dataclass(v) and not isinstance(v, type):
                every_slot_set(v, seen)
    return seen


def test_link_records_from_the_fast_decoder_and_the_general_one(
    contract_server: ContractServer,
) -> None:
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=0)
    fast = client.link_recommendations("wikipedia", "en", "Cat")
    # An extra field sends the body through the general decoder and its conversion.
    body = link_set("Dog")
    body["links"][0]["new_field"] = 1
    contract_server.then(Scripted(200, body))
    general = client.link_recommendations("wikipedia", "en", "Dog")
    assert general.links[0].extra == {"new_field": 1}
    for result in (fast, general):
        assert every_slot_set(result) == {
            records.LinkRecommendationSet,
            records.LinkRecommendation,
            records.Meta,
            records.DatasetChecksums,
        }


def test_translation_records_with_their_collection(contract_server: ContractServer) -> None:
    item = {
        "title": "Towel Day",
        "pageviews": 3,
        "wikidata_id": "Q1319003",
        "rank": 2.0,
        "langlinks_count": 20,
        "size": 100,
        "lead_section_size": 10,
        "collection": {
            "name": "Hitchhiking",
            "description": "d",
            "end_date": None,
            "articles_count": 2,
            "articles_by_language_count": {"en": 2},
        },
    }
    contract_server.then(Scripted(200, [item]))
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=0)
    (found,) = client.translation_recommendations("en", "fr")
    assert every_slot_set(found) == {
        records.TranslationRecommendation,
        records.PageCollectionMetadata,
    }


def test_engine_records_and_batch_items() -> None:
    engine = wikisuggest.LinkEngine.default()
    text = "The aardvark is a mammal native to Africa. Ants and termites are its food."
    single = engine.recommend(text, "Aardvark", pageid=1, revid=2)
    assert records.LinkRecommendation in every_slot_set(single) or not single.links
    ok, refused = engine.recommend_many([Page(text, "Aardvark"), Page(text, "Bad|title")])
    assert every_slot_set(ok) == {wikisuggest.BatchItem} | every_slot_set(ok.unwrap())
    assert every_slot_set(refused) == {wikisuggest.BatchItem}
    assert isinstance(refused.error, wikisuggest.InvalidParameter)


def test_client_batch_items(contract_server: ContractServer) -> None:
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=0)
    for item in client.link_recommendations_many(["Cat", ("xx", "Dog")], domain="en"):
        assert wikisuggest.BatchItem in every_slot_set(item)


def test_native_exception_handles_name_classes_of_the_tree() -> None:
    """The binding raises the classes of ``wikisuggest.errors`` through typed handles; each
    handle's name is a class of the one exception tree (a misspelt one would surface only when
    that error is raised)."""
    source = (REPO / "src" / "errors.rs").read_text()
    names = re.findall(r"import_exception!\(wikisuggest\.errors, (\w+)\)", source)
    assert len(names) >= 20
    for name in names:
        cls = getattr(wikisuggest.errors, name)
        assert issubclass(cls, wikisuggest.WikisuggestError), name
    assert 'getattr("' not in source  # no look-up by a class-name string
