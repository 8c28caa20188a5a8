"""Batches: order, per-item errors, limits, cancellation, progress and DataFrames."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from typing import Any

import pytest
from support.clients import USER_AGENT, client_for
from support.contract_server import VALID_TOKEN, ContractServer, Scripted

import wikisuggest


def test_results_in_input_order(contract_server: ContractServer) -> None:
    titles = [f"Page {i}" for i in range(50)]
    results = client_for(contract_server).link_recommendations_many(titles, domain="en")
    assert isinstance(results, wikisuggest.Batch)
    assert isinstance(results.wait(), wikisuggest.BatchResults)
    assert results.wait() is results.wait()
    assert [item.index for item in results] == list(range(50))
    assert [item.unwrap().page_title for item in results] == titles
    assert all(item.ok for item in results)
    assert len(results.results) == 50 and results.errors == []


def test_page_spec_forms(contract_server: ContractServer) -> None:
    pages: list[Any] = [
        "Cat",
        ("simple", "Dog"),
        {"title": "Bird", "domain": "de", "threshold": 0.7},
    ]
    results = client_for(contract_server).link_recommendations_many(pages, domain="en")
    assert [r.page_title for r in results.results] == ["Cat", "Dog", "Bird"]
    paths = sorted(
        r.path.rsplit("/", 2)[-2] + "/" + r.path.rsplit("/", 1)[-1]
        for r in contract_server.requests
    )
    assert paths == ["de/Bird", "en/Cat", "simple/Dog"]
    bird = next(r for r in contract_server.requests if r.path.endswith("/Bird"))
    assert bird.query["threshold"] == ["0.7"]


def test_mixed_failures_keep_every_success(contract_server: ContractServer) -> None:
    client = client_for(contract_server)
    pages: list[Any] = [
        ("en", "Fine 1"),
        ("xx", "Unsupported"),
        ("en", "Missing page"),
        ("en", ""),  # invalid: never sent
        {"title": "Bad", "domain": "en", "threshold": 7},  # invalid: never sent
        ("en", "Fine 2"),
        12,  # not a page at all
    ]
    results = client.link_recommendations_many(pages)
    kinds = [type(item.error).__name__ if item.error else "ok" for item in results]
    assert kinds == [
        "ok",
        "UnsupportedDomain",
        "NotFound",
        "InvalidParameter",
        "InvalidParameter",
        "ok",
        "InvalidParameter",
    ]
    assert [r.page_title for r in results.results] == ["Fine 1", "Fine 2"]
    assert len(contract_server.requests) == 4
    with pytest.raises(wikisuggest.NotFound):
        results[2].unwrap()


def test_transient_errors_per_item(contract_server: ContractServer) -> None:
    client = client_for(contract_server, timeout=0.5, max_concurrency=1)
    contract_server.then(
        Scripted(429, b"slow down", {"Retry-After": "100"}),
        Scripted(500, {"message": "boom"}),
        Scripted(200, {"links": []}, delay=2.0),
    )
    results = client.link_recommendations_many(["A", "B", "C", "D"], domain="en")
    kinds = [type(item.error).__name__ if item.error else "ok" for item in results]
    assert kinds == ["RateLimited", "ServerError", "Timeout", "ok"]
    assert results[3].unwrap().page_title == "D"


def test_concurrency_bound_is_never_exceeded(contract_server: ContractServer) -> None:
    contract_server.then(*[Scripted(200, {"links": []}, delay=0.1)] * 12)
    client = client_for(contract_server, max_concurrency=3)
    started = time.monotonic()
    results = client.link_recommendations_many([f"P{i}" for i in range(12)], domain="en")
    assert all(item.ok for item in results)
    assert contract_server.max_in_flight == 3
    assert time.monotonic() - started >= 0.4  # 12 requests, 3 at a time, 0.1 s each


def test_wikimedia_default_is_three() -> None:
    assert wikisuggest.Client(USER_AGENT).max_concurrency == 3
    assert wikisuggest.Client(USER_AGENT, base_url="http://127.0.0.1:1").max_concurrency == 32


def test_rate_limit_is_respected(contract_server: ContractServer) -> None:
    client = client_for(contract_server, rate_limit=20)
    started = time.monotonic()
    client.link_recommendations_many([f"P{i}" for i in range(11)], domain="en").wait()
    assert time.monotonic() - started >= 0.5  # 11 starts at 20/s span 0.5 s


def test_as_completed_yields_fast_items_first(contract_server: ContractServer) -> None:
    # The first page is answered only once both others have been handed over (or after 10 s,
    # which an iterator in input order would wait out, then yield index 0 first).
    client = client_for(contract_server)
    batch = client.link_recommendations_many(["Held", "Fast 1", "Fast 2"], domain="en")
    order: list[int] = []
    for item in batch.as_completed():
        order.append(item.index)
        if len(order) == 2:
            contract_server.gate.set()
    assert sorted(order[:2]) == [1, 2]
    assert order[-1] == 0


def test_ctrl_c_keeps_finished_results(contract_server: ContractServer) -> None:
    client = client_for(contract_server, max_concurrency=2)
    # Two pages finish at once; the next two hang, holding both slots, when Ctrl-C arrives.
    contract_server.then(
        Scripted(200, {"links": [], "page_title": "quick"}),
        Scripted(200, {"links": [], "page_title": "quick"}),
        Scripted(200, {"links": [], "page_title": "slow"}, delay=5.0),
        Scripted(200, {"links": [], "page_title": "slow"}, delay=5.0),
    )
    timer = threading.Timer(0.6, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    with pytest.raises(wikisuggest.BatchInterrupted) as info:
        client.link_recommendations_many([f"P{i}" for i in range(6)], domain="en").wait()
    timer.join()
    assert time.monotonic() - started < 2.0
    assert isinstance(info.value, KeyboardInterrupt)
    results = info.value.results
    assert len(results) == 6
    assert sum(item.ok for item in results) == 2
    assert all(isinstance(item.error, wikisuggest.Cancelled) for item in results if not item.ok)


def test_revisions_and_translations(contract_server: ContractServer) -> None:
    client = client_for(contract_server, auth=VALID_TOKEN)
    pages = [
        {"page_title": f"T{i}", "wikitext": "x", "revid": i, "pageid": 100 + i} for i in range(5)
    ]
    results = client.link_recommendations_for_revision_many(pages, domain="en")
    assert [(r.pageid, r.revid) for r in results.results] == [(100 + i, i) for i in range(5)]
    translations = client.translation_recommendations_many(
        [("en", "fr"), "Douglas Adams", {"source": "en", "target": "en"}],
        source="en",
        target="de",
        count=1,
    )
    assert [len(t.unwrap()) if t.ok else type(t.error).__name__ for t in translations] == [
        1,
        1,
        "InvalidParameter",
    ]
    seeds = [r.query.get("seed") for r in contract_server.requests if "translation" in r.path]
    assert sorted(seeds, key=str) == [None, ["Douglas Adams"]]


async def test_async_batch_await_and_iterate(contract_server: ContractServer) -> None:
    client = wikisuggest.AsyncClient(USER_AGENT, base_url=contract_server.url, max_retries=0)
    results = await client.link_recommendations_many(["A", "B", ("xx", "C")], domain="en")
    assert [type(i.error).__name__ if i.error else i.unwrap().page_title for i in results] == [
        "A",
        "B",
        "UnsupportedDomain",
    ]
    seen = [
        item.index async for item in client.translation_recommendations_many([("en", "fr")] * 4)
    ]
    assert sorted(seen) == [0, 1, 2, 3]


async def test_async_batch_cancellation(contract_server: ContractServer) -> None:
    contract_server.then(*[Scripted(200, {"links": []}, delay=3.0)] * 4)
    client = wikisuggest.AsyncClient(USER_AGENT, base_url=contract_server.url, max_retries=0)
    started = time.monotonic()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(
            client.link_recommendations_many(["A", "B", "C", "D"], domain="en"), 0.3
        )
    assert time.monotonic() - started < 1.5


def test_dataframe(contract_server: ContractServer) -> None:
    pd = pytest.importorskip("pandas")
    results = client_for(contract_server).link_recommendations_many(
        ["Cat", ("xx", "Dog")], domain="en"
    )
    frame = results.to_dataframe()
    assert isinstance(frame, pd.DataFrame)
    links = frame[frame["error"].isna()] if "error" in frame else frame
    assert list(links["link_text"]) == ["phrase 0", "phrase 1"]
    assert set(links["page_title"]) == {"Cat"}
    failed = frame[frame["error"].notna()]
    assert failed["error"].iloc[0].startswith("UnsupportedDomain")
    single = (
        client_for(contract_server).link_recommendations("wikipedia", "en", "Cat").to_dataframe()
    )
    assert list(single["link_target"]) == ["Target 0", "Target 1"]


def test_progress_bar(contract_server: ContractServer, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    client_for(contract_server).link_recommendations_many(
        ["A", "B", "C"], domain="en", progress=True
    ).wait()
    err = capsys.readouterr().err
    assert "3/3" in err
