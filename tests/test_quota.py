"""Per-hour and per-minute request budgets (``rate_limit="5000/h"``), shared by every thread
and batch of a client."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import USER_AGENT
from contract_server import ContractServer

import wikisuggest
from wikisuggest import _args


def test_budgets_are_rates() -> None:
    assert _args.rate("rate_limit", "5000/h") == pytest.approx(5000 / 3600)
    assert _args.rate("rate_limit", "200/min") == pytest.approx(200 / 60)
    assert _args.rate("rate_limit", "20/s") == 20
    assert _args.rate("rate_limit", 2.5) == 2.5
    for bad in ["5000", "5000/day", "-5/h", "x/h", "0/min", "inf/h", 0, True]:
        with pytest.raises(wikisuggest.InvalidParameter):
            wikisuggest.Client(USER_AGENT, rate_limit=bad)  # type: ignore[arg-type]


def test_an_hourly_budget_paces_every_thread_of_a_client(
    contract_server: ContractServer,
) -> None:
    # 72,000 an hour is 20 a second: 12 starts from two threads span at least 0.55 s.
    client = wikisuggest.Client(
        USER_AGENT, base_url=contract_server.url, rate_limit="72000/h", max_retries=0
    )
    started = time.monotonic()
    threads = [
        threading.Thread(
            target=client.link_recommendations_many,
            args=([f"T{t} P{i}" for i in range(6)],),
            kwargs={"domain": "en"},
        )
        for t in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert time.monotonic() - started >= 0.55
