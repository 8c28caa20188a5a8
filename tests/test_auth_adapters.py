"""TokenManager as requests and httpx authentication, against the reference server's OAuth
server: tokens on every request, one replay with a renewed token after a 401."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import reference_server as ref
import requests

import wikisuggest
from wikisuggest.httpx_auth import HttpxAuth
from wikisuggest.requests_auth import RequestsAuth

USER_AGENT = "wikisuggest-tests/1.0 (https://example.org/wikisuggest-tests; tests@example.org)"
PATH = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/Anarchism"
BODY = json.dumps({"wikitext": ref.ANARCHISM, "revid": 101, "pageid": 12})
HEADERS = {"Content-Type": "application/json", "User-Agent": USER_AGENT}


def _manager(server: wikisuggest.Server) -> wikisuggest.TokenManager:
    return wikisuggest.TokenManager.client_credentials(
        ref.CONFIDENTIAL_ID, ref.CONFIDENTIAL_SECRET, auth_url=server.url, user_agent=USER_AGENT
    )


def _restart(server: wikisuggest.Server, folder: Path) -> wikisuggest.Server:
    """The same address, new signing keys: every token issued before is now rejected."""
    port = urlsplit(server.url).port
    assert port is not None
    server.stop()
    return ref.start(folder, port=port)


def test_requests_sends_tokens_and_replays_once_after_401(tmp_path: Path) -> None:
    server = ref.start(tmp_path)
    try:
        assert (
            requests.post(server.url + PATH, data=BODY, headers=HEADERS, timeout=30).status_code
            == 401
        )
        manager = _manager(server)
        session = requests.Session()
        session.auth = RequestsAuth(manager)
        answer = session.post(server.url + PATH, data=BODY, headers=HEADERS, timeout=30)
        assert answer.status_code == 200 and answer.json()["links"] is not None
        assert answer.history == []
        first = manager.token().access_token

        server = _restart(server, tmp_path)
        answer = session.post(server.url + PATH, data=BODY, headers=HEADERS, timeout=30)
        assert answer.status_code == 200
        assert [r.status_code for r in answer.history] == [401]
        assert manager.token().access_token != first
    finally:
        server.stop()


def test_personal_tokens_are_not_replayed(tmp_path: Path) -> None:
    with ref.start(tmp_path) as server:
        good = requests.Session()
        good.auth = RequestsAuth(ref.PERSONAL_TOKEN)
        assert good.post(server.url + PATH, data=BODY, headers=HEADERS, timeout=30).ok
        bad = requests.Session()
        bad.auth = RequestsAuth("not-a-registered-token")
        answer = bad.post(server.url + PATH, data=BODY, headers=HEADERS, timeout=30)
        assert answer.status_code == 401 and answer.history == []
        with httpx.Client(auth=HttpxAuth(ref.PERSONAL_TOKEN), headers=HEADERS) as client:
            assert client.post(server.url + PATH, content=BODY).status_code == 200


def test_httpx_sync_replays_once_after_401(tmp_path: Path) -> None:
    server = ref.start(tmp_path)
    try:
        manager = _manager(server)
        with httpx.Client(auth=HttpxAuth(manager), headers=HEADERS, timeout=30) as client:
            assert client.post(server.url + PATH, content=BODY).status_code == 200
            first = manager.token().access_token
            server = _restart(server, tmp_path)
            answer = client.post(server.url + PATH, content=BODY)
            assert answer.status_code == 200
            assert manager.token().access_token != first
    finally:
        server.stop()


async def test_httpx_async_replays_once_after_401(tmp_path: Path) -> None:
    server = ref.start(tmp_path)
    try:
        manager = _manager(server)
        async with httpx.AsyncClient(
            auth=HttpxAuth(manager), headers=HEADERS, timeout=30
        ) as client:
            assert (await client.post(server.url + PATH, content=BODY)).status_code == 200
            first = (await manager.token_async()).access_token
            server = _restart(server, tmp_path)
            answer = await client.post(server.url + PATH, content=BODY)
            assert answer.status_code == 200
            assert (await manager.token_async()).access_token != first
    finally:
        server.stop()
