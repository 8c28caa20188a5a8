"""Decoding of responses into records."""

from __future__ import annotations

import asyncio
import inspect
import pickle
from typing import Any

import pytest
from support.clients import client_of
from support.contract_server import CHECKSUMS, ContractServer, Scripted, link_set
from support.paths import PARITY

import wikisuggest


@pytest.fixture
def client(contract_server: ContractServer, client_kind: str) -> wikisuggest.Client:
    return client_of(client_kind, base_url=contract_server.url, max_retries=0)


def test_link_set_is_frozen_dataclasses(client: wikisuggest.Client) -> None:
    result = client.link_recommendations("wikipedia", "simple", "Cat")
    assert isinstance(result, wikisuggest.LinkRecommendationSet)
    assert result.page_title == "Cat"
    assert result.links_count == 2 == len(result.links)
    link = result.links[0]
    assert isinstance(link, wikisuggest.LinkRecommendation)
    assert (link.link_text, link.link_target, link.wikitext_offset) == (
        "phrase 0",
        "Target 0",
        3334,
    )
    assert link.score == pytest.approx(0.5133472084999084)
    assert result.meta is not None and result.meta.format_version == 1
    assert result.meta.dataset_checksums == wikisuggest.DatasetChecksums.from_dict(CHECKSUMS)
    with pytest.raises(AttributeError):
        link.score = 1.0  # type: ignore[misc]
    assert result.to_dict() == link_set("Cat")


def test_records_round_trip_and_pickle(client: wikisuggest.Client) -> None:
    result = client.link_recommendations("wikipedia", "en", "Dog")
    again = wikisuggest.LinkRecommendationSet.from_dict(result.to_dict())
    assert again == result
    assert pickle.loads(pickle.dumps(result)) == result


def test_extra_fields_kept_missing_fields_none(
    client: wikisuggest.Client, contract_server: ContractServer
) -> None:
    contract_server.then(
        Scripted(
            200,
            {
                "links": [{"link_text": "a", "link_target": "A", "new_field": [1, 2]}],
                "page_title": "Cat",
                "added_later": {"x": 1},
            },
        )
    )
    result = client.link_recommendations("wikipedia", "en", "Cat")
    assert result.meta is None and result.pageid is None and result.links_count is None
    link = result.links[0]
    assert link.score is None and link.context_before is None
    assert link.extra == {"new_field": [1, 2]}
    assert result.extra == {"added_later": {"x": 1}}
    assert result.to_dict()["added_later"] == {"x": 1}
    assert link.to_dict()["new_field"] == [1, 2]


def test_raw_returns_the_decoded_body(client: wikisuggest.Client) -> None:
    raw = client.link_recommendations("wikipedia", "en", "Cat", raw=True)
    assert raw == link_set("Cat")
    assert isinstance(raw, dict)


@pytest.mark.parametrize("shape", ["array", "envelope"])
def test_translation_accepts_both_shapes(
    client: wikisuggest.Client, contract_server: ContractServer, shape: str
) -> None:
    contract_server.translation_shape = shape
    items = client.translation_recommendations("en", "fr")
    assert [i.title for i in items] == ["Douglas Adams", "Towel Day"]
    first = items[0]
    assert isinstance(first, wikisuggest.TranslationRecommendation)
    assert (first.wikidata_id, first.langlinks_count, first.rank) == ("Q42", 74, 1)
    assert items[1].rank == 2.0
    raw = client.translation_recommendations("en", "fr", raw=True)
    assert isinstance(raw, list if shape == "array" else dict)


def test_translation_item_with_only_title(
    client: wikisuggest.Client, contract_server: ContractServer
) -> None:
    contract_server.then(
        Scripted(200, [{"title": "X", "size": 4, "collection": None, "badge": "new"}])
    )
    (item,) = client.translation_recommendations("en", "de")
    assert item.title == "X" and item.pageviews is None and item.rank is None
    assert (item.size, item.lead_section_size, item.collection) == (4, None, None)
    assert item.extra == {"badge": "new"}


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"", b"[1, 2]", b'{"links": "nope"}', b'{"links": [{"link_text": 1}]}'],
)
def test_malformed_bodies_are_decode_errors(
    client: wikisuggest.Client, contract_server: ContractServer, body: bytes
) -> None:
    contract_server.then(Scripted(200, body))
    with pytest.raises(wikisuggest.DecodeError) as info:
        client.link_recommendations("wikipedia", "en", "Cat")
    assert info.value.status == 200
    assert info.value.snippet == body.decode()[:120]
    assert isinstance(info.value, ValueError)


def test_translation_wrong_shape_is_decode_error(
    client: wikisuggest.Client, contract_server: ContractServer
) -> None:
    contract_server.then(Scripted(200, {"items": []}))
    with pytest.raises(wikisuggest.DecodeError):
        client.translation_recommendations("en", "fr")


def test_scores_read_back_exactly(
    client: wikisuggest.Client, contract_server: ContractServer
) -> None:
    """Scores are float32 probabilities printed as shortest doubles: the client must read
    back the very same double, for every score of every production output we have."""
    import json

    expected_dir = PARITY / "expected" / "exhaustive" / "enwiki"
    checked = 0
    for path in sorted(expected_dir.glob("*.json"))[:20]:
        body = path.read_text(encoding="utf-8")
        contract_server.then(Scripted(200, body.encode("utf-8")))
        result = client.link_recommendations("wikipedia", "en", "X")
        expected = [link["score"] for link in json.loads(body)["links"]]
        assert [link.score for link in result.links] == expected, path.name
        checked += len(expected)
    assert checked > 500


def _many(client: wikisuggest.Client, titles: list[str]) -> list[Any]:
    """A batch of GETs with either client: an asyncio one's batch is awaited."""
    batch: Any = client.link_recommendations_many(titles, domain="en")
    if inspect.isawaitable(batch):

        async def gather() -> Any:
            return await batch

        return list(asyncio.run(gather()))
    return list(batch)


def _typed(value: object) -> object:
    """A record as nested tuples of (type, value), so that 1 and 1.0 or a str and an int
    holding the same number do not compare equal."""
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple((f.name, _typed(getattr(value, f.name))) for f in dataclasses.fields(value)),
        )
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_typed(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _typed(v)) for k, v in value.items())))
    return (type(value).__name__, value)


COMMON_SHAPES = [
    # What every deployment sends.
    link_set("Cat"),
    # Escapes, non-ASCII text, nulls, an integer score, numbers as lenient ids.
    {
        "links": [
            {
                "link_text": 'caf\u00e9 "quoted" \\ \u2603 \U0001f600',
                "link_target": "Caf\u00e9",
                "score": 1,
                "wikitext_offset": None,
                "context_before": None,
                "context_after": "\n\t",
                "link_index": 9223372036854775807,
                "match_index": -3,
            },
            {"link_text": "", "link_target": "B"},
        ],
        "links_count": None,
        "meta": {"application_version": None, "format_version": 2, "later": [1]},
        "page_title": None,
        "pageid": "12",
        "revid": 34.0,
    },
    # Only the required fields.
    {"links": []},
    {"links": [{"link_target": "T", "link_text": "t"}], "meta": None},
]


@pytest.mark.parametrize("body", COMMON_SHAPES)
def test_common_shape_decodes_as_the_general_route(
    client: wikisuggest.Client, contract_server: ContractServer, body: dict[str, object]
) -> None:
    """Bodies of the common shape are decoded straight into records; a field the records do
    not name sends a body the general way. Both must give the same records, type for type,
    single requests and batches alike."""
    import dataclasses
    import json

    general = {**body, "added_later": 1}
    text = json.dumps(body).encode()
    contract_server.then(Scripted(200, text), Scripted(200, json.dumps(general).encode()))
    fast = client.link_recommendations("wikipedia", "en", "Cat")
    slow = client.link_recommendations("wikipedia", "en", "Cat")
    assert slow.extra == {"added_later": 1} and fast.extra == {}
    assert _typed(fast) == _typed(dataclasses.replace(slow, extra=fast.extra))
    contract_server.then(Scripted(200, text), Scripted(200, text))
    batch = _many(client, ["A", "B"])
    assert [_typed(item.unwrap()) for item in batch] == [_typed(fast)] * 2


@pytest.mark.parametrize(
    "body",
    [
        b'{"links": [], "links": []}',
        b'{"links": [{"link_text": "a", "link_target": "A", "score": "high"}]}',
        b'{"links": [{"link_text": "a", "link_target": null}]}',
        b'{"links": [], "pageid": 1.5}',
        b'{"links": []} x',
        b'{"links": [], "page_title": "\xff"}',
    ],
)
def test_bodies_outside_the_common_shape_fail_as_before(
    client: wikisuggest.Client, contract_server: ContractServer, body: bytes
) -> None:
    """Repeated keys, wrong types, trailing data and invalid UTF-8 are the general route's to
    judge: the same decode error, with the serde message, for single requests and batches."""
    contract_server.then(Scripted(200, body))
    with pytest.raises(wikisuggest.DecodeError) as single:
        client.link_recommendations("wikipedia", "en", "Cat")
    contract_server.then(Scripted(200, body))
    (item,) = _many(client, ["Cat"])
    assert isinstance(item.error, wikisuggest.DecodeError)
    assert str(item.error) == str(single.value)
    assert "line 1 column" in str(single.value) or "UTF-8" in str(single.value)
