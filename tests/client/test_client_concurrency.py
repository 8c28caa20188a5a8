"""Promises about the interpreter: GIL released, Ctrl-C works, asyncio cancels, threads share."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from support.clients import USER_AGENT
from support.contract_server import ContractServer, Scripted

import wikisuggest
from wikisuggest._native import in_flight_tasks


def wait_until_idle(limit: float = 2.0) -> None:
    deadline = time.monotonic() + limit
    while in_flight_tasks() and time.monotonic() < deadline:
        time.sleep(0.01)


def test_blocking_call_releases_the_gil(contract_server: ContractServer) -> None:
    contract_server.then(Scripted(200, {"links": []}, delay=0.6))
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url)
    ticks = 0
    stop = threading.Event()

    def tick() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.01)

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        client.link_recommendations("wikipedia", "en", "Cat")
    finally:
        stop.set()
        ticker.join()
    assert ticks >= 20


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("phase", ["request", "backoff"])
def test_ctrl_c_interrupts_a_blocking_call(contract_server: ContractServer, phase: str) -> None:
    if phase == "request":
        contract_server.then(Scripted(200, {"links": []}, delay=5.0))
    else:
        contract_server.then(Scripted(503, b"", {"Retry-After": "30"}))
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=2)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        client.link_recommendations("wikipedia", "en", "Cat")
    elapsed = time.monotonic() - started
    timer.join()
    assert elapsed < 1.5
    wait_until_idle()
    assert in_flight_tasks() == 0


async def test_async_methods_match_sync(contract_server: ContractServer) -> None:
    sync = wikisuggest.Client(USER_AGENT, base_url=contract_server.url)
    client = wikisuggest.AsyncClient(
        USER_AGENT, base_url=contract_server.url, auth="valid-token-for-tests"
    )
    assert await client.link_recommendations("wikipedia", "en", "Cat") == sync.link_recommendations(
        "wikipedia", "en", "Cat"
    )
    posted = await client.link_recommendations_for_revision(
        "wikipedia", "en", "Cat", wikitext="x", revid=3, pageid=4
    )
    assert (posted.revid, posted.pageid) == (3, 4)
    items = await client.translation_recommendations("en", "fr", count=1)
    assert [i.title for i in items] == ["Douglas Adams"]
    assert await client.translation_recommendations(
        "en", "fr", raw=True
    ) == sync.translation_recommendations("en", "fr", raw=True)


async def test_async_errors_are_typed(contract_server: ContractServer) -> None:
    client = wikisuggest.AsyncClient(USER_AGENT, base_url=contract_server.url, max_retries=0)
    with pytest.raises(wikisuggest.UnsupportedDomain):
        await client.link_recommendations("wikipedia", "xx", "Cat")
    with pytest.raises(wikisuggest.InvalidParameter):
        await client.link_recommendations("wikipedia", "en", "Cat", threshold=2)


async def test_async_cancellation_drops_the_request(contract_server: ContractServer) -> None:
    contract_server.then(Scripted(200, {"links": []}, delay=3.0))
    client = wikisuggest.AsyncClient(USER_AGENT, base_url=contract_server.url)
    started = time.monotonic()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(client.link_recommendations("wikipedia", "en", "Cat"), 0.2)
    assert time.monotonic() - started < 1.0
    for _ in range(100):
        if in_flight_tasks() == 0:
            break
        await asyncio.sleep(0.01)
    assert in_flight_tasks() == 0


async def test_async_calls_run_concurrently(contract_server: ContractServer) -> None:
    contract_server.then(*[Scripted(200, {"links": []}, delay=0.5)] * 4)
    client = wikisuggest.AsyncClient(USER_AGENT, base_url=contract_server.url)
    started = time.monotonic()
    results = await asyncio.gather(
        *(client.link_recommendations("wikipedia", "en", f"P{i}") for i in range(4))
    )
    assert len(results) == 4
    assert time.monotonic() - started < 1.5
    assert len(contract_server.requests) == 4


def test_async_results_reach_the_loop_through_one_thread(contract_server: ContractServer) -> None:
    """Concurrent awaitables hand their results to the loop through one long-lived thread
    attached to the interpreter: no thread is started per result (each would make a thread
    state and contend for the interpreter), and every result arrives."""
    import json
    import subprocess

    code = f"""
import asyncio, json, os, time, wikisuggest
from wikisuggest._native import in_flight_tasks

async def main():
    client = wikisuggest.AsyncClient({USER_AGENT!r}, base_url={contract_server.url!r})
    titles = [f"Page {{i}}" for i in range(300)]
    results = await asyncio.gather(
        *(client.link_recommendations("wikipedia", "en", t) for t in titles)
    )
    return [r.page_title for r in results] == titles

ok = asyncio.run(main())
# The count drops just after a result is scheduled on the loop, which may run it first.
deadline = time.monotonic() + 2
while in_flight_tasks() and time.monotonic() < deadline:
    time.sleep(0.01)
names = []
for task in os.listdir("/proc/self/task"):
    with open(f"/proc/self/task/{{task}}/comm") as f:
        names.append(f.read().strip())
print(json.dumps([ok, in_flight_tasks(), names]))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    ok, in_flight, names = json.loads(out.strip().splitlines()[-1])
    assert ok
    assert in_flight == 0
    # Thread names are cut to 15 bytes: "wikisuggest-handover" reads "wikisuggest-han".
    assert names.count("wikisuggest-han") == 1
    # The two I/O threads and no other of the runtime's (a per-result thread would be one).
    assert names.count("wikisuggest-io") == 2
    assert len(contract_server.requests) == 300


def test_one_client_shared_by_threads(contract_server: ContractServer) -> None:
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url)
    titles = [f"Page {i}" for i in range(64)]
    with ThreadPoolExecutor(8) as pool:
        results = list(
            pool.map(lambda t: client.link_recommendations("wikipedia", "en", t), titles)
        )
    assert [r.page_title for r in results] == titles
    assert len(contract_server.requests) == 64


def test_import_starts_no_threads() -> None:
    import subprocess

    code = (
        "import threading, wikisuggest; "
        "wikisuggest.Client('T/1 (t@example.org)'); "
        "print(threading.active_count(), len(os.listdir('/proc/self/task')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import os; " + code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["1", "1"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_gets_an_error_not_a_hang(contract_server: ContractServer) -> None:
    import subprocess

    code = f"""
import os, sys, wikisuggest
c = wikisuggest.Client({USER_AGENT!r}, base_url={contract_server.url!r})
c.link_recommendations("wikipedia", "en", "Cat")
pid = os.fork()
if pid == 0:
    try:
        c.link_recommendations("wikipedia", "en", "Cat")
        os._exit(3)
    except wikisuggest.WikisuggestError as e:
        os._exit(0 if "forked" in str(e) else 4)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
"""
    result = subprocess.run([sys.executable, "-c", code], timeout=30, check=False)
    assert result.returncode == 0
