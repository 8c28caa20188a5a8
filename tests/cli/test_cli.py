"""The command line, run as a user would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.clients import USER_AGENT
from support.contract_server import VALID_TOKEN, ContractServer


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "WIKISUGGEST_USER_AGENT": USER_AGENT, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "wikisuggest", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=False,
    )


def test_links_json(contract_server: ContractServer) -> None:
    result = run(
        "links", "en", "Cat", "Dog", "--threshold", "0.6", "--base-url", contract_server.url
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [entry["result"]["page_title"] for entry in data] == ["Cat", "Dog"]
    assert data[0]["result"]["links"][0]["link_target"] == "Target 0"
    assert all(r.query["threshold"] == ["0.6"] for r in contract_server.requests)


def test_links_table_and_failure_status(contract_server: ContractServer) -> None:
    result = run(
        "links", "en", "Cat", "Missing page", "--format", "table", "--base-url", contract_server.url
    )
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["page", "link_text", "link_target", "score", "wikitext_offset"]
    assert lines[1].startswith("Cat") and "Target 0" in lines[1]
    assert "NotFound" in result.stderr


def test_translate(contract_server: ContractServer) -> None:
    result = run(
        "translate",
        "en",
        "fr",
        "--seed",
        "Douglas Adams",
        "--count",
        "1",
        "--base-url",
        contract_server.url,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data[0]["result"][0]["wikidata_id"] == "Q42"
    assert contract_server.requests[-1].query["seed"] == ["Douglas Adams"]


def test_missing_user_agent_is_a_clear_error(contract_server: ContractServer) -> None:
    result = run(
        "links", "en", "Cat", "--base-url", contract_server.url, env={"WIKISUGGEST_USER_AGENT": ""}
    )
    assert result.returncode == 2
    assert "ConfigurationError" in result.stderr and "User-Agent" in result.stderr
    assert contract_server.requests == []


def test_links_take_the_base_url_and_token_from_the_environment(
    contract_server: ContractServer,
) -> None:
    """The command reads what the client reads, by the client's rule."""
    result = run(
        "links",
        "en",
        "Cat",
        env={"WIKISUGGEST_BASE_URL": contract_server.url, "WIKISUGGEST_TOKEN": VALID_TOKEN},
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["result"]["page_title"] == "Cat"
    assert contract_server.requests[-1].headers["authorization"] == f"Bearer {VALID_TOKEN}"
