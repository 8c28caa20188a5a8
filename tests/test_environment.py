"""Bots configured through environment variables; explicit arguments win."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.clients import USER_AGENT
from support.contract_server import VALID_TOKEN, ContractServer

import wikisuggest


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "WIKISUGGEST_USER_AGENT",
        "WIKISUGGEST_BASE_URL",
        "WIKISUGGEST_AUTH_URL",
        "WIKISUGGEST_TOKEN",
        "WIKISUGGEST_CLIENT_ID",
        "WIKISUGGEST_CLIENT_SECRET",
    ):
        monkeypatch.delenv(name, raising=False)


def test_settings_from_environment(
    monkeypatch: pytest.MonkeyPatch, contract_server: ContractServer
) -> None:
    monkeypatch.setenv("WIKISUGGEST_USER_AGENT", USER_AGENT)
    monkeypatch.setenv("WIKISUGGEST_BASE_URL", contract_server.url)
    monkeypatch.setenv("WIKISUGGEST_AUTH_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("WIKISUGGEST_TOKEN", VALID_TOKEN)
    client = wikisuggest.Client()
    assert client.base_url == contract_server.url and client.auth_url == "http://127.0.0.1:9"
    result = client.link_recommendations_for_revision(
        "wikipedia", "en", "Cat", wikitext="x", revid=1, pageid=2
    )
    assert result.pageid == 2
    assert contract_server.requests[-1].headers["authorization"] == f"Bearer {VALID_TOKEN}"
    assert VALID_TOKEN not in repr(client)


def test_explicit_arguments_win(
    monkeypatch: pytest.MonkeyPatch, contract_server: ContractServer
) -> None:
    monkeypatch.setenv("WIKISUGGEST_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("WIKISUGGEST_TOKEN", "from-environment")
    client = wikisuggest.Client(USER_AGENT, base_url=contract_server.url, auth=VALID_TOKEN)
    client.link_recommendations("wikipedia", "en", "Cat")
    assert contract_server.requests[-1].headers["authorization"] == f"Bearer {VALID_TOKEN}"


def test_client_credentials_from_environment_need_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WIKISUGGEST_CLIENT_ID", "bot")
    with pytest.raises(wikisuggest.ConfigurationError, match="together"):
        wikisuggest.Client(USER_AGENT)
    monkeypatch.setenv("WIKISUGGEST_CLIENT_SECRET", "s3cret-value")
    client = wikisuggest.Client(USER_AGENT)
    assert "s3cret-value" not in repr(client)


def test_a_user_agent_from_the_environment_is_checked_alike_everywhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The clients, the token manager and dataset downloads take ``WIKISUGGEST_USER_AGENT``
    by one rule: a value that cannot be sent (a byte the environment could not decode, read
    as a lone surrogate) is that argument's error in each, before anything is sent."""
    monkeypatch.setenv("WIKISUGGEST_USER_AGENT", "Bot/1.0 (bot@example.org)\udcff")
    calls: list[Callable[[], object]] = [
        lambda: wikisuggest.Client(base_url="http://127.0.0.1:9"),
        lambda: wikisuggest.TokenManager.client_credentials(
            "id", "secret", auth_url="http://127.0.0.1:9"
        ),
        lambda: wikisuggest.datasets.fetch("frwiki", cache_dir=tmp_path, offline=True),
    ]
    for call in calls:
        with pytest.raises(wikisuggest.InvalidParameter) as refused:
            call()
        assert refused.value.parameter == "user_agent"
    assert list(tmp_path.iterdir()) == []
