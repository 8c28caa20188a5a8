"""One list of arguments per operation: unknown keywords refused, defaults applied once, each
options list written once."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from support.clients import client_for
from support.contract_server import ContractServer
from support.paths import REPO

import wikisuggest
from wikisuggest import InvalidParameter, LinkEngine
from wikisuggest.engine import Page, demo_articles

ROOT = REPO


@pytest.fixture(scope="module")
def engine() -> LinkEngine:
    return LinkEngine.default()


@pytest.fixture(scope="module")
def aardvark() -> str:
    return demo_articles()["Aardvark"]


def test_unknown_keyword_arguments_are_refused(
    contract_server: ContractServer, engine: LinkEngine, aardvark: str
) -> None:
    """The operations that take their options as one typed set refuse a misspelt one before
    sending, as Python refuses an unknown keyword."""
    client = client_for(contract_server)
    misspelt: dict[str, Any] = {"treshold": 0.2}
    with pytest.raises(InvalidParameter) as caught:
        client.link_recommendations("wikipedia", "en", "Cat", **misspelt)
    assert caught.value.parameter == "treshold"
    with pytest.raises(InvalidParameter):
        client.link_recommendations_many(["Cat"], domain="en", **misspelt)
    with pytest.raises(InvalidParameter):
        client.translation_recommendations("en", "fr", cuont=3)  # type: ignore[call-overload]
    with pytest.raises(InvalidParameter):
        client.translation_recommendations_many([("en", "fr")], cuont=3)  # type: ignore[call-overload]
    with pytest.raises(InvalidParameter):
        engine.recommend(aardvark, "Aardvark", **misspelt)
    with pytest.raises(InvalidParameter):
        engine.recommend_many([Page(aardvark, "Aardvark")], **misspelt)
    assert contract_server.requests == []


def test_defaults_are_applied_once_for_every_form(
    contract_server: ContractServer, engine: LinkEngine, aardvark: str
) -> None:
    """Leaving an option out means its one default, whichever form of the operation is used."""
    client = client_for(contract_server)
    single = client.link_recommendations("wikipedia", "en", "Cat")
    batch = client.link_recommendations_many(["Cat"], domain="en")
    assert batch[0].unwrap() == single
    query = [request.query for request in contract_server.requests]
    assert query[0] == query[1]
    assert query[0]["threshold"] == ["0.5"] and query[0]["max_recommendations"] == ["15"]
    translations = client.translation_recommendations("en", "fr")
    paged = client.translation_page("en", "fr")
    assert list(paged.items) == translations
    assert contract_server.requests[2].query == contract_server.requests[3].query
    assert contract_server.requests[2].query["count"] == ["12"]
    explicit = engine.recommend(aardvark, "Aardvark", threshold=0.5, max_recommendations=15)
    assert engine.recommend(aardvark, "Aardvark") == explicit
    assert engine.recommend_many([Page(aardvark, "Aardvark")])[0].unwrap() == explicit


def test_each_options_list_is_written_once() -> None:
    """The link and translation options (and the engine's) are one typed set per operation
    family, not a list of parameters repeated in every signature."""
    from wikisuggest.client._base import LinkOptions, TranslationOptions
    from wikisuggest.engine import PassOptions

    families = {
        LinkOptions: [
            "link_recommendations",
            "link_recommendations_for_revision",
            "link_recommendations_many",
            "link_recommendations_for_revision_many",
        ],
        TranslationOptions: [
            "translation_recommendations",
            "translation_page",
            "iter_translation_recommendations",
            "translation_recommendations_many",
        ],
    }
    for options, methods in families.items():
        for cls in (wikisuggest.Client, wikisuggest.AsyncClient):
            for name in methods:
                parameters = inspect.signature(getattr(cls, name)).parameters
                assert parameters["options"].kind is inspect.Parameter.VAR_KEYWORD, name
                assert not set(parameters) & set(options.__annotations__), name
    for name in ("recommend", "recommend_async", "recommend_iter", "recommend_many"):
        parameters = inspect.signature(getattr(LinkEngine, name)).parameters
        assert not set(parameters) & set(PassOptions.__annotations__), name
