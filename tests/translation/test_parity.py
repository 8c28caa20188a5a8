"""The local engine answers as production's translation service answered on the same data:
every recorded case of popular, topic, country and collections mode, sent as recorded to the
reference server serving the fixture wikis' catalogs, and the cases a Python call can express
through ``TranslationEngine``, compared as each case says (``exact``, ``set`` or ``sample``)."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.dump_formats import EXPECTED

import wikisuggest
from wikisuggest import TranslationEngine

TRANSLATION = "/service/lw/recommendation/api/v1/translation"
FIELDS = ("title", "wikidata_id", "rank", "langlinks_count", "size", "lead_section_size")
MODES = ("popular", "topic", "country", "collections")


def cases(kind: str) -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads((EXPECTED / f"{kind}.json").read_text("utf-8"))
    return list(data["cases"])


@pytest.fixture(scope="module")
def server(catalogs: dict[str, Path]) -> Iterator[wikisuggest.Server]:
    with wikisuggest.Server(
        translation=dict(catalogs), translation_shape="envelope", seed=5
    ) as running:
        yield running


def fetch(server: wikisuggest.Server, query: str) -> tuple[int, Any]:
    request = urllib.request.Request(f"{server.url}{TRANSLATION}?{query}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def view(item: dict[str, Any], keep_collection: bool = True) -> dict[str, Any]:
    out = {k: item.get(k) for k in FIELDS}
    if keep_collection and item.get("collection") is not None:
        out["collection"] = item["collection"]["name"]
    return out


def by_key(items: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {(i.get("wikidata_id"), i["title"]): i for i in items}


def check(case: dict[str, Any], got: list[dict[str, Any]]) -> None:
    want: list[dict[str, Any]] = case["body"]["recommendations"]
    multi = "collections=true" in case["query"] and case["compare"] != "exact"
    # An article of several collections carries one of them: not compared there.
    keep = not multi
    if case["compare"] == "exact":
        assert [view(i, keep) for i in got] == [view(i, keep) for i in want], case["name"]
    else:
        pool = by_key(case["pool"])
        for item in got:
            key = (item.get("wikidata_id"), item["title"])
            assert key in pool, f"{case['name']}: {item['title']} is not a candidate"
            expected = {**view(pool[key], keep), "rank": item.get("rank")}
            if (
                item.get("lead_section_size") is not None
                or pool[key].get("lead_section_size") is None
            ):
                expected["lead_section_size"] = item.get("lead_section_size")
            assert view(item, keep) == expected, case["name"]
        if case["compare"] == "set":
            assert len(got) == len(want), case["name"]
        else:
            assert len(got) == len(want), case["name"]
    # Views: production looks up few titles (the rest answer 0); the engine gives each title's
    # views of the day, which equal production's wherever production looked them up.
    recorded = {i["title"]: i["pageviews"] for i in want}
    for item in got:
        if recorded.get(item["title"]):
            assert item["pageviews"] == recorded[item["title"]], (case["name"], item["title"])


@pytest.mark.parametrize(
    "case", [c for mode in MODES for c in cases(mode)], ids=lambda c: str(c["name"])
)
def test_the_server_answers_as_production(server: wikisuggest.Server, case: dict[str, Any]) -> None:
    status, body = fetch(server, case["query"])
    assert status == case["status"], case["name"]
    check(case, body["recommendations"])
    if case["compare"] == "exact" and "continue_seed" in case["query"]:
        assert body["continue_offset"] == case["body"]["continue_offset"]
        assert body["continue_seed"] == case["body"]["continue_seed"]


@pytest.mark.parametrize("case", cases("errors"), ids=lambda c: str(c["name"]))
def test_bad_requests_are_refused_as_production_refuses_them(
    server: wikisuggest.Server, case: dict[str, Any]
) -> None:
    status, body = fetch(server, case["query"])
    assert status == case["status"]
    got = [(d["type"], d["loc"], d["msg"]) for d in body["detail"]]
    want = [(d["type"], d["loc"], d["msg"]) for d in case["body"]["detail"]]
    assert got == want


def kwargs(query: str) -> dict[str, Any]:
    """A recorded query as ``TranslationEngine.page`` arguments."""
    params = dict(urllib.parse.parse_qsl(query))
    out: dict[str, Any] = {}
    for name, value in params.items():
        if name in ("source", "target"):
            continue
        if name in ("count", "min_size", "max_size", "continue_offset", "continue_seed"):
            out[name] = int(value)
        elif name in ("include_pageviews", "lead_section", "collections"):
            out[name] = value == "true"
        elif name in ("topic", "country"):
            out[name] = value.split("|")
        elif name == "seed":
            out[name] = [value]
        else:
            out[name] = value
    return out


def refused_by_the_client(case: dict[str, Any]) -> bool:
    """Production answers a negative count (Python slices the list with it); the client
    refuses it before sending, as a count below zero is a caller's mistake."""
    return bool(kwargs(case["query"]).get("count", 0) < 0)


ENGLISH = [c for mode in MODES for c in cases(mode) if "source=en&" in c["query"]]


@pytest.mark.parametrize(
    "case", [c for c in ENGLISH if not refused_by_the_client(c)], ids=lambda c: str(c["name"])
)
def test_the_python_engine_answers_as_production(
    catalogs: dict[str, Path], case: dict[str, Any]
) -> None:
    engine = TranslationEngine.open(catalogs["enwiki"])
    target = dict(urllib.parse.parse_qsl(case["query"]))["target"]
    page = engine.page(target, random_seed=3, **kwargs(case["query"]))
    check(case, [item.to_dict() for item in page.items])


REFUSED = [c for c in ENGLISH if refused_by_the_client(c)]


def test_the_recorded_cases_include_one_the_client_refuses() -> None:
    assert [c["name"] for c in REFUSED] == ["popular-fr-count-negative"]


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: str(c["name"]))
def test_the_python_engine_refuses_what_only_production_accepts(
    catalogs: dict[str, Path], server: wikisuggest.Server, case: dict[str, Any]
) -> None:
    engine = TranslationEngine.open(catalogs["enwiki"])
    target = dict(urllib.parse.parse_qsl(case["query"]))["target"]
    with pytest.raises(wikisuggest.InvalidParameter, match="count"):
        engine.page(target, random_seed=3, **kwargs(case["query"]))
    # The reference server, which answers as production, still serves the query.
    status, body = fetch(server, case["query"])
    assert status == case["status"] == 200
    check(case, body["recommendations"])
