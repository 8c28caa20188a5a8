"""Per-hour (and per-minute, per-second) request budgets: parsed and checked in the core, and
shared by every call, task and batch of one client."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from support import reference_server as ref

import wikisuggest
from wikisuggest._native import in_flight_tasks

USER_AGENT = "QuotaTests/1.0 (tests@example.org)"


@pytest.fixture(scope="module")
def server() -> Iterator[wikisuggest.Server]:
    with wikisuggest.Server(translation=ref.TRANSLATION, clients=ref.CLIENTS) as running:
        yield running


@pytest.mark.parametrize(
    "bad", ["5000", "5000/d", "0/h", "-1/h", "1.5/h", "many/h", "2000000/h", "", 0, -2.0]
)
def test_bad_budgets_are_invalid_parameters(bad: object) -> None:
    with pytest.raises(wikisuggest.InvalidParameter) as raised:
        wikisuggest.Client(USER_AGENT, base_url="http://127.0.0.1:9", rate_limit=bad)  # type: ignore[arg-type]
    assert raised.value.parameter == "rate_limit"


def test_budget_spent_at_once_by_threads_and_a_batch(server: wikisuggest.Server) -> None:
    # Nothing is spaced out while the budget lasts: six calls of a 5000/h budget.
    client = wikisuggest.Client(
        USER_AGENT, base_url=server.url, auth=ref.PERSONAL_TOKEN, rate_limit="5000/h"
    )
    with ThreadPoolExecutor(3) as pool:
        single = list(
            pool.map(lambda _: client.translation_recommendations("en", "fr", count=1), range(3))
        )
    batch = client.translation_recommendations_many([("en", "fr")] * 3, count=1)
    assert len(single) == 3 and all(len(r) == 1 for r in single)
    assert not batch.errors and len(batch.results) == 3


class StillWaiting(Exception):
    """Raised by the alarm in the middle of a call that waits for its budget."""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_budget_shared_by_threads_and_batches_of_one_client(server: wikisuggest.Server) -> None:
    client = wikisuggest.Client(
        USER_AGENT, base_url=server.url, auth=ref.PERSONAL_TOKEN, rate_limit="4/h"
    )
    with ThreadPoolExecutor(2) as pool:
        single = list(
            pool.map(lambda _: client.translation_recommendations("en", "fr", count=1), range(2))
        )
    batch = client.translation_recommendations_many([("en", "fr")] * 2, count=1)
    assert len(single) == 2 and not batch.errors and len(batch.results) == 2

    # The hour's four requests are spent by two threads and a batch: the fifth call waits
    # (here until an alarm interrupts it), a batch item too; another client does not.
    def alarm(signum: int, frame: object) -> None:
        raise StillWaiting

    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        for call in (
            lambda: client.translation_recommendations("en", "fr", count=1),
            lambda: client.translation_recommendations_many([("en", "fr")], count=1).wait(),
        ):
            signal.setitimer(signal.ITIMER_REAL, 1.0)
            with pytest.raises(StillWaiting):
                call()
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    other = wikisuggest.Client(USER_AGENT, base_url=server.url, rate_limit="4/h")
    assert len(other.translation_recommendations("en", "fr", count=1)) == 1
    # The interrupted calls were dropped, not left waiting for the hour.
    for _ in range(100):
        if in_flight_tasks() == 0:
            break
        time.sleep(0.05)
    assert in_flight_tasks() == 0


def test_budget_shared_by_tasks_and_batches_of_one_client(server: wikisuggest.Server) -> None:
    async def run() -> None:
        client = wikisuggest.AsyncClient(
            USER_AGENT, base_url=server.url, auth=ref.PERSONAL_TOKEN, rate_limit="4/h"
        )
        other = wikisuggest.AsyncClient(USER_AGENT, base_url=server.url, rate_limit="4/h")
        tasks = await asyncio.gather(
            *(client.translation_recommendations("en", "fr", count=1) for _ in range(2))
        )
        batch = await client.translation_recommendations_many([("en", "fr")] * 2, count=1)
        assert len(tasks) == 2 and not batch.errors and len(batch.results) == 2
        # The four requests of the hour are spent: the fifth waits for the hour to pass,
        # whether it is a task or a batch item ...
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.translation_recommendations("en", "fr", count=1), 1.0)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(
                client.translation_recommendations_many([("en", "fr")], count=1), 1.0
            )
        # ... while another client has a budget of its own and the server answers at once.
        assert len(await other.translation_recommendations("en", "fr", count=1)) == 1
        # The waiting requests were dropped when their callers gave up, not left queued.
        for _ in range(100):
            if in_flight_tasks() == 0:
                break
            await asyncio.sleep(0.05)
        assert in_flight_tasks() == 0

    asyncio.run(run())
