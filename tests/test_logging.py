"""Request events reach Python's logging, and never carry credentials."""

from __future__ import annotations

import logging

import pytest
from support.clients import USER_AGENT
from support.contract_server import EXPIRED_TOKEN, ContractServer, Scripted

import wikisuggest


def test_attempts_and_retries_are_logged(
    contract_server: ContractServer, caplog: pytest.LogCaptureFixture
) -> None:
    contract_server.then(Scripted(503, b"", {"Retry-After": "0"}))
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, max_retries=2)
    with caplog.at_level(logging.DEBUG, logger="wikisuggest"):
        client.link_recommendations("wikipedia", "en", "Cat", threshold=0.7)
    records = [r for r in caplog.records if r.name == "wikisuggest.http"]
    messages = [r.getMessage() for r in records]
    assert any("HTTP 503" in m and "retry 1 of 2" in m for m in messages), messages
    assert any(m.endswith("-> 200 (0 ms)") or "-> 200 (" in m for m in messages), messages
    retry = next(r for r in records if "retry 1 of 2" in r.getMessage())
    assert retry.levelno == logging.WARNING
    # One request id across the attempts of one call; no query string in the URL.
    ids = {m.split()[0] for m in messages}
    assert len(ids) == 1 and next(iter(ids)).startswith("r")
    assert all("threshold" not in m for m in messages)


def test_tokens_never_logged(
    contract_server: ContractServer, caplog: pytest.LogCaptureFixture
) -> None:
    client = wikisuggest.Client(
        USER_AGENT, base_url=contract_server.url, auth=EXPIRED_TOKEN, max_retries=0
    )
    with caplog.at_level(logging.DEBUG), pytest.raises(wikisuggest.Unauthorized):
        client.link_recommendations("wikipedia", "en", "Cat")
    assert caplog.records
    assert EXPIRED_TOKEN not in caplog.text
