"""The engine's surface: it refuses what the client refuses, one bad page fails alone, results
behave like data, engines close."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from typing import Any

import pytest
from support.clients import client_for
from support.contract_server import ContractServer
from support.paths import REPO

import wikisuggest
from wikisuggest import InvalidParameter, LinkEngine
from wikisuggest.engine import Page, PageSpec, default_dataset_path, demo_articles

ROOT = REPO


LONE_SURROGATE = "Bad \udc80 title"


@pytest.fixture(scope="module")
def engine() -> LinkEngine:
    return LinkEngine.default()


@pytest.fixture(scope="module")
def aardvark() -> str:
    return demo_articles()["Aardvark"]


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"threshold": math.nan}, "threshold"),
        ({"threshold": 2.0}, "threshold"),
        ({"threshold": -0.1}, "threshold"),
        ({"max_recommendations": -1}, "max_recommendations"),
        ({"sections_to_exclude": [""]}, "sections_to_exclude"),
    ],
)
def test_engine_refuses_what_the_client_refuses(
    contract_server: ContractServer,
    engine: LinkEngine,
    aardvark: str,
    options: dict[str, Any],
    parameter: str,
) -> None:
    with pytest.raises(InvalidParameter) as by_client:
        client_for(contract_server).link_recommendations("wikipedia", "en", "Aardvark", **options)
    with pytest.raises(InvalidParameter) as by_engine:
        engine.recommend(aardvark, "Aardvark", **options)
    with pytest.raises(InvalidParameter) as by_batch:
        engine.recommend_many([Page(aardvark, "Aardvark")], **options)
    assert by_client.value.parameter == by_engine.value.parameter == parameter
    assert by_batch.value.parameter == parameter
    assert contract_server.requests == []


async def test_engine_async_refuses_nan(engine: LinkEngine, aardvark: str) -> None:
    with pytest.raises(InvalidParameter):
        await engine.recommend_async(aardvark, "Aardvark", threshold=math.nan)
    result = await engine.recommend_async(aardvark, "Aardvark", threshold=0.2)
    assert result == engine.recommend(aardvark, "Aardvark", threshold=0.2)
    with pytest.raises(InvalidParameter):
        await engine.recommend_async(aardvark, "Aardvark", treshold=0.2)  # type: ignore[call-arg]


def test_a_lone_surrogate_fails_only_its_page(engine: LinkEngine, aardvark: str) -> None:
    pages: list[PageSpec] = [
        Page(aardvark, "Aardvark"),
        Page(aardvark + "\ud800", "Aardvark"),
        {"wikitext": aardvark, "page_title": LONE_SURROGATE},
        Page(aardvark, "Aardvark"),
    ]
    results = engine.recommend_many(pages, workers=1)
    assert [item.ok for item in results] == [True, False, False, True]
    assert isinstance(results[1].error, InvalidParameter)
    assert results[1].error.parameter == "wikitext"
    assert isinstance(results[2].error, InvalidParameter)
    assert results[0].unwrap() == results[3].unwrap() and len(results[0].unwrap()) > 0
    assert [item.ok for item in engine.recommend_iter(pages)] == [True, False, False, True]
    with pytest.raises(InvalidParameter):
        engine.recommend(aardvark + "\udc80", "Aardvark")


def test_swapped_title_and_wikitext_are_refused(engine: LinkEngine, aardvark: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        engine.recommend("Aardvark", aardvark)  # (title, wikitext): the wrong way round
    assert caught.value.parameter == "page_title"
    swapped = engine.recommend_many([("Aardvark", aardvark)])
    assert isinstance(swapped[0].error, InvalidParameter)
    by_keyword = engine.recommend_many([Page(page_title="Aardvark", wikitext=aardvark)])
    positional = engine.recommend_many([(aardvark, "Aardvark")])
    assert (
        by_keyword[0].unwrap() == positional[0].unwrap() == engine.recommend(aardvark, "Aardvark")
    )


def test_results_are_json_data_and_truthy(engine: LinkEngine, aardvark: str) -> None:
    result = engine.recommend(aardvark, "Aardvark")
    as_json = json.loads(json.dumps(dataclasses.asdict(result)))
    assert [link["link_target"] for link in as_json["links"]] == [
        link.link_target for link in result.links
    ]
    assert json.loads(json.dumps(result.to_dict()))["page_title"] == "Aardvark"
    empty = engine.recommend("Nothing to link here.", "Aardvark")
    assert len(empty) == 0 and empty.links == ()
    assert bool(empty)  # an answer with no links is still an answer
    with pytest.raises(TypeError):
        empty.extra["x"] = 1  # type: ignore[index]
    assert empty.extra == {}


def test_batch_reprs_are_short(engine: LinkEngine, aardvark: str) -> None:
    pages = [Page(aardvark, "Aardvark")] * 20 + [Page(aardvark, "Not|a title")]
    results = engine.recommend_many(pages, workers=2)
    assert len(aardvark) > 10_000
    assert repr(results) == "BatchResults(21 items: 20 ok, 1 failed)"
    assert len(repr(results[0])) < 200 and "Aardvark" in repr(results[0])
    assert "InvalidParameter" in repr(results[-1]) and len(repr(results[-1])) < 250


def test_engine_closes(aardvark: str) -> None:
    with LinkEngine.open(default_dataset_path(), "enwiki") as opened:
        assert opened.recommend(aardvark, "Aardvark").links
    assert opened.closed and "closed" in repr(opened) and opened.wiki_id == "enwiki"
    with pytest.raises(wikisuggest.ClientClosed, match="LinkEngine was closed"):
        opened.recommend(aardvark, "Aardvark")
    with pytest.raises(wikisuggest.ClientClosed):
        opened.recommend_many([Page(aardvark, "Aardvark")])
    with pytest.raises(wikisuggest.ClientClosed):
        opened.info()
    with pytest.raises(wikisuggest.ClientClosed):
        opened.score("Aardvark", "mammal")
    opened.close()  # again: nothing happens
    assert opened.closed


async def test_engine_closed_refuses_async(aardvark: str) -> None:
    engine = LinkEngine.open(default_dataset_path(), "enwiki")
    engine.close()
    with pytest.raises(wikisuggest.ClientClosed):
        await engine.recommend_async(aardvark, "Aardvark")


def test_closing_the_default_engine_reopens_it() -> None:
    # In a child process: other modules' fixtures hold this process's shared engine.
    program = (
        "from wikisuggest import LinkEngine\n"
        "shared = LinkEngine.default()\n"
        "shared.close()\n"
        "reopened = LinkEngine.default()\n"
        "assert reopened is not shared and not reopened.closed and shared.closed\n"
        "assert reopened is LinkEngine.default()\n"
        "print(reopened.info().anchors)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "20842"
