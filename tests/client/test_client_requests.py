"""What the client puts on the wire: paths, query strings, bodies, headers."""

from __future__ import annotations

import json

import pytest
from support.clients import USER_AGENT, client_of
from support.contract_server import VALID_TOKEN, ContractServer

import wikisuggest


@pytest.fixture
def client(contract_server: ContractServer, client_kind: str) -> wikisuggest.Client:
    return client_of(client_kind, base_url=contract_server.url, max_retries=0)


def test_title_is_one_encoded_segment(
    client: wikisuggest.Client, contract_server: ContractServer
) -> None:
    result = client.link_recommendations("wikipedia", "en", "AC/DC? #1 100% A+B & Škoda")
    req = contract_server.requests[-1]
    assert req.path == (
        "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/"
        "AC%2FDC%3F_%231_100%25_A%2BB_%26_%C5%A0koda"
    )
    assert result.page_title == "AC/DC? #1 100% A+B & Škoda"


def test_default_query_parameters(
    client: wikisuggest.Client, contract_server: ContractServer
) -> None:
    client.link_recommendations("wikipedia", "simple", "Cat")
    req = contract_server.requests[-1]
    assert req.method == "GET"
    assert req.query == {"threshold": ["0.5"], "max_recommendations": ["15"]}


def test_all_get_parameters(client: wikisuggest.Client, contract_server: ContractServer) -> None:
    client.link_recommendations(
        "wikipedia",
        "en",
        "Cat",
        language_code="en",
        revision=12345,
        threshold=0.25,
        sections_to_exclude=["%LEAD%", "See also"],
        max_recommendations=0,
    )
    req = contract_server.requests[-1]
    assert req.raw_query == (
        "language_code=en&threshold=0.25&max_recommendations=0"
        "&sections_to_exclude=%25LEAD%25&sections_to_exclude=See%20also&revision=12345"
    )
    assert req.query["sections_to_exclude"] == ["%LEAD%", "See also"]


def test_single_section_string_is_one_section(
    client: wikisuggest.Client, contract_server: ContractServer
) -> None:
    client.link_recommendations("wikipedia", "en", "Cat", sections_to_exclude="References")
    assert contract_server.requests[-1].query["sections_to_exclude"] == ["References"]


def test_post_sends_json_body_and_bearer(contract_server: ContractServer, client_kind: str) -> None:
    client = client_of(client_kind, base_url=contract_server.url, auth=VALID_TOKEN)
    result = client.link_recommendations_for_revision(
        "wikipedia",
        "en",
        "Cat",
        wikitext="The '''cat''' is a [[mammal]].",
        revid=99,
        pageid=7,
        sections_to_exclude=["References"],
        threshold=0.6,
    )
    req = contract_server.requests[-1]
    assert req.method == "POST"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["authorization"] == f"Bearer {VALID_TOKEN}"
    assert json.loads(req.body) == {
        "wikitext": "The '''cat''' is a [[mammal]].",
        "revid": 99,
        "pageid": 7,
        "sections_to_exclude": ["References"],
    }
    # Sections travel in the body (which wins on the server), not the query.
    assert req.query == {"threshold": ["0.6"], "max_recommendations": ["15"]}
    assert (result.pageid, result.revid) == (7, 99)


def test_translation_parameters(
    client: wikisuggest.Client, contract_server: ContractServer
) -> None:
    client.translation_recommendations(
        "en",
        "fr",
        count=5,
        seed=["Douglas Adams", "Towel Day"],
        topic="Women+Space",
        include_pageviews=True,
        search_algorithm="mostpopular",
        rank_method="sitelinks",
    )
    req = contract_server.requests[-1]
    assert req.path == "/service/lw/recommendation/api/v1/translation"
    assert req.raw_query == (
        "source=en&target=fr&count=5&seed=Douglas%20Adams%7CTowel%20Day&topic=Women%2BSpace"
        "&include_pageviews=true&search_algorithm=mostpopular&rank_method=sitelinks"
    )
    assert req.query["topic"] == ["Women+Space"]
    assert req.query["seed"] == ["Douglas Adams|Towel Day"]


def test_user_agent_is_the_operators_then_ours(
    client: wikisuggest.Client, contract_server: ContractServer
) -> None:
    client.link_recommendations("wikipedia", "en", "Cat")
    ua = contract_server.requests[-1].headers["user-agent"]
    assert ua == f"{USER_AGENT} wikisuggest/{wikisuggest.__version__}"
    assert client.user_agent == ua


@pytest.mark.parametrize(
    "user_agent",
    [
        "",
        "python-requests/2.31",
        "MyBot/1.0",
        "MyBot/1.0 (nothing to reach)",
        "MyBot (me@example.org)",
    ],
)
def test_client_refuses_user_agent_without_operator_contact(user_agent: str) -> None:
    with pytest.raises(wikisuggest.ConfigurationError, match="User-Agent"):
        wikisuggest.Client(user_agent)


def test_user_agent_from_environment(
    monkeypatch: pytest.MonkeyPatch, contract_server: ContractServer, client_kind: str
) -> None:
    monkeypatch.setenv("WIKISUGGEST_USER_AGENT", "EnvBot/2.0 (envbot@example.org)")
    client = client_of(client_kind, None, base_url=contract_server.url)
    client.link_recommendations("wikipedia", "en", "Cat")
    assert (
        contract_server.requests[-1]
        .headers["user-agent"]
        .startswith("EnvBot/2.0 (envbot@example.org) ")
    )
    explicit = wikisuggest.Client(USER_AGENT, base_url=contract_server.url)
    assert explicit.user_agent.startswith(USER_AGENT)


@pytest.mark.parametrize(
    ("call", "parameter"),
    [
        (lambda c: c.link_recommendations("wiktionary", "en", "Cat"), "project"),
        (lambda c: c.link_recommendations("wikipedia", "", "Cat"), "domain"),
        (lambda c: c.link_recommendations("wikipedia", "en", " "), "page_title"),
        (lambda c: c.link_recommendations("wikipedia", "en", "Cat", threshold=1.01), "threshold"),
        (lambda c: c.link_recommendations("wikipedia", "en", "Cat", threshold=-0.1), "threshold"),
        (lambda c: c.link_recommendations("wikipedia", "en", "Cat", threshold="0.5"), "threshold"),
        (
            lambda c: c.link_recommendations("wikipedia", "en", "Cat", max_recommendations=-1),
            "max_recommendations",
        ),
        (
            lambda c: c.link_recommendations("wikipedia", "en", "Cat", max_recommendations=2.5),
            "max_recommendations",
        ),
        (
            lambda c: c.link_recommendations("wikipedia", "en", "Cat", max_recommendations=True),
            "max_recommendations",
        ),
        (
            lambda c: c.link_recommendations("wikipedia", "en", "Cat", language_code=""),
            "language_code",
        ),
        (lambda c: c.link_recommendations("wikipedia", "en", "Cat", revision=0), "revision"),
        (
            lambda c: c.link_recommendations("wikipedia", "en", "Cat", sections_to_exclude=[1]),
            "sections_to_exclude",
        ),
        (lambda c: c.translation_recommendations("en", "en"), "target"),
        (lambda c: c.translation_recommendations("", "fr"), "source"),
        (lambda c: c.translation_recommendations("en", "fr", count=-1), "count"),
        (
            lambda c: c.translation_recommendations("en", "fr", search_algorithm="x"),
            "search_algorithm",
        ),
        (lambda c: c.translation_recommendations("en", "fr", rank_method="x"), "rank_method"),
        (
            lambda c: c.translation_recommendations("en", "fr", include_pageviews="yes"),
            "include_pageviews",
        ),
        (lambda c: c.translation_recommendations("en", "fr", seed=["a|b"]), "seed"),
    ],
)
def test_bad_parameters_are_value_errors_and_nothing_is_sent(
    client: wikisuggest.Client, contract_server: ContractServer, call: object, parameter: str
) -> None:
    with pytest.raises(wikisuggest.InvalidParameter) as info:
        call(client)  # type: ignore[operator]
    assert isinstance(info.value, ValueError)
    assert info.value.parameter == parameter
    assert parameter in str(info.value)
    assert contract_server.requests == []


def test_post_revid_must_be_integer(client: wikisuggest.Client) -> None:
    with pytest.raises(wikisuggest.InvalidParameter, match="revid"):
        client.link_recommendations_for_revision(
            "wikipedia",
            "en",
            "Cat",
            wikitext="x",
            revid="1",  # type: ignore[call-overload]
            pageid=1,
        )


@pytest.mark.parametrize(
    "base_url", ["ftp://example.org", "http://u:secretpw@127.0.0.1/", "not a url"]
)
def test_bad_base_url(base_url: str) -> None:
    with pytest.raises(wikisuggest.ConfigurationError) as info:
        wikisuggest.Client(USER_AGENT, base_url=base_url)
    assert "secretpw" not in str(info.value)
