"""OAuth 2.0 on other stacks: ``RequestsAuth`` and ``HttpxAuth`` (and mwapi through a requests
session) with the real libraries, against the reference server's OAuth server and gateway."""

from __future__ import annotations

import asyncio
import threading
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import mwapi
import pytest
import requests
from support import reference_server as ref

import wikisuggest
from wikisuggest.auth import HttpxAuth, RequestsAuth

TRANSLATION = "/service/lw/recommendation/api/v1/translation"
QUERY = {"source": "en", "target": "fr", "count": "1"}
USER_AGENT = "AdapterTests/1.0 (tests@example.org)"
# What a bot restarted against a server that no longer knows its token finds in its store.
STALE = "token-from-an-earlier-run-0001"


@pytest.fixture(scope="module")
def server() -> Iterator[wikisuggest.Server]:
    with wikisuggest.Server(translation=ref.TRANSLATION, clients=ref.CLIENTS) as running:
        yield running


class CountingStore:
    """A token store that counts the tokens the manager obtained (each renewal saves one)."""

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        self.token = initial
        self.saves = 0
        self._lock = threading.Lock()

    def load(self) -> dict[str, Any] | None:
        return self.token

    def save(self, token: Any) -> None:
        with self._lock:
            self.token = dict(token)
            self.saves += 1


def stale_store() -> CountingStore:
    now = time.time()
    return CountingStore(
        {
            "token_type": "Bearer",
            "access_token": STALE,
            "expires_in": 14400,
            "obtained_at": now,
            "expires_at": now + 14400,
        }
    )


def manager(server: wikisuggest.Server, store: CountingStore) -> wikisuggest.TokenManager:
    return wikisuggest.TokenManager.client_credentials(
        ref.CONFIDENTIAL_ID,
        ref.CONFIDENTIAL_SECRET,
        auth_url=server.url,
        user_agent=USER_AGENT,
        store=store,
    )


def test_requests_threads_share_one_token(server: wikisuggest.Server) -> None:
    store = CountingStore()
    session = requests.Session()
    session.auth = RequestsAuth(manager(server, store))

    def fetch(_: int) -> requests.Response:
        return session.get(server.url + TRANSLATION, params=QUERY, timeout=30)

    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(fetch, range(24)))
    assert [r.status_code for r in replies] == [200] * 24
    assert all(not r.history for r in replies)
    assert store.saves == 1
    # Every request carried the one token the manager obtained.
    assert store.token is not None
    sent = {r.request.headers["Authorization"] for r in replies}
    assert sent == {f"Bearer {store.token['access_token']}"}


def test_requests_rejected_token_renewed_once_and_replayed_once(
    server: wikisuggest.Server,
) -> None:
    store = stale_store()
    auth = RequestsAuth(manager(server, store))
    session = requests.Session()
    session.auth = auth

    def fetch(_: int) -> requests.Response:
        return session.get(server.url + TRANSLATION, params=QUERY, timeout=30)

    with ThreadPoolExecutor(6) as pool:
        replies = list(pool.map(fetch, range(6)))
    assert [r.status_code for r in replies] == [200] * 6
    # Requests sent with the stale token were refused once, then replayed once with the new
    # one; requests that started after the renewal went out with the new token at once.
    assert any(reply.history for reply in replies)
    for reply in replies:
        assert [h.status_code for h in reply.history] in ([], [401])
        if reply.history:
            assert reply.history[0].request.headers["Authorization"] == f"Bearer {STALE}"
        assert reply.request.headers["Authorization"] != f"Bearer {STALE}"
    assert store.saves == 1
    # A POST body is sent again on the replay.
    store.token = dict(store.token or {}, access_token=STALE)
    fresh = RequestsAuth(manager(server, store))
    body = {"wikitext": ref.ANARCHISM, "revid": 1, "pageid": 2}
    posted = requests.post(
        server.url + "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/Anarchism",
        json=body,
        auth=fresh,
        timeout=30,
    )
    # The server has no datasets: past the gateway, the link route answers 404, not 401.
    assert posted.status_code == 404, posted.text
    assert [h.status_code for h in posted.history] == [401]
    assert posted.request.body == posted.history[0].request.body


def test_requests_personal_token_string(server: wikisuggest.Server) -> None:
    reply = requests.get(
        server.url + TRANSLATION,
        params=QUERY,
        auth=RequestsAuth(ref.PERSONAL_TOKEN),
        timeout=30,
    )
    assert reply.status_code == 200
    assert reply.request.headers["Authorization"] == f"Bearer {ref.PERSONAL_TOKEN}"
    # A personal token cannot be renewed: its 401 comes back as is, without a replay.
    wrong = RequestsAuth("not-a-registered-personal-token")
    refused = requests.get(server.url + TRANSLATION, params=QUERY, auth=wrong, timeout=30)
    assert refused.status_code == 401 and not refused.history
    assert "not-a-registered" not in repr(wrong)


def test_no_secret_in_repr_or_errors(server: wikisuggest.Server) -> None:
    store = CountingStore()
    good = manager(server, store)
    for auth in (RequestsAuth(good), HttpxAuth(good), RequestsAuth(ref.PERSONAL_TOKEN)):
        text = repr(auth) + str(auth)
        assert ref.CONFIDENTIAL_SECRET not in text and ref.PERSONAL_TOKEN not in text
    requests.get(server.url + TRANSLATION, params=QUERY, auth=RequestsAuth(good), timeout=30)
    assert store.token is not None
    assert store.token["access_token"] not in repr(RequestsAuth(good))

    secret = "wrong-secret-that-must-not-leak-0001"
    bad = wikisuggest.TokenManager.client_credentials(
        ref.CONFIDENTIAL_ID, secret, auth_url=server.url, user_agent=USER_AGENT
    )
    with pytest.raises(wikisuggest.WikisuggestError) as raised:
        requests.get(server.url + TRANSLATION, params=QUERY, auth=RequestsAuth(bad), timeout=30)
    assert secret not in str(raised.value) and secret not in repr(raised.value)
    with pytest.raises(wikisuggest.WikisuggestError) as raised:
        httpx.get(server.url + TRANSLATION, params=QUERY, auth=HttpxAuth(bad))
    assert secret not in str(raised.value) and secret not in repr(raised.value)
    with pytest.raises(wikisuggest.InvalidParameter):
        RequestsAuth("")


def test_httpx_sync_rejected_token_renewed_once(server: wikisuggest.Server) -> None:
    store = stale_store()
    with httpx.Client(auth=HttpxAuth(manager(server, store))) as client:
        first = client.get(server.url + TRANSLATION, params=QUERY)
        second = client.get(server.url + TRANSLATION, params=QUERY)
    assert first.status_code == 200 and [h.status_code for h in first.history] == [401]
    assert second.status_code == 200 and not second.history
    assert store.saves == 1
    personal = httpx.get(server.url + TRANSLATION, params=QUERY, auth=HttpxAuth(ref.PERSONAL_TOKEN))
    assert personal.status_code == 200


def test_httpx_async_tasks_share_one_token_and_one_renewal(server: wikisuggest.Server) -> None:
    async def run(store: CountingStore) -> list[httpx.Response]:
        async with httpx.AsyncClient(auth=HttpxAuth(manager(server, store))) as client:
            return await asyncio.gather(
                *(client.get(server.url + TRANSLATION, params=QUERY) for _ in range(16))
            )

    fresh = CountingStore()
    replies = asyncio.run(run(fresh))
    assert [r.status_code for r in replies] == [200] * 16
    assert all(not r.history for r in replies) and fresh.saves == 1

    stale = stale_store()
    replies = asyncio.run(run(stale))
    assert [r.status_code for r in replies] == [200] * 16
    assert any(r.history for r in replies)
    assert all([h.status_code for h in r.history] in ([], [401]) for r in replies)
    assert all(r.request.headers["Authorization"] != f"Bearer {STALE}" for r in replies)
    assert stale.saves == 1


def test_mwapi_session_through_requests_auth(server: wikisuggest.Server) -> None:
    store = stale_store()
    session = requests.Session()
    session.auth = RequestsAuth(manager(server, store))
    # mwapi sends every call through the requests session it is given. The reference server
    # has no api.php: the translation route stands in for it (it is behind the gateway).
    wiki = mwapi.Session(server.url, user_agent=USER_AGENT, api_path=TRANSLATION, session=session)
    first = wiki.get(**QUERY)
    second = wiki.get(**QUERY)
    assert len(first) == len(second) == 1 and first[0]["title"]
    assert store.saves == 1


def test_hosts_keep_the_token_to_the_hosts_named(server: wikisuggest.Server) -> None:
    # The same server under another name stands in for another site the bot fetches from.
    elsewhere = f"http://localhost:{urllib.parse.urlsplit(server.url).port}"
    store = CountingStore()
    session = requests.Session()
    session.auth = RequestsAuth(manager(server, store), hosts=["127.0.0.1"])
    inside = session.get(server.url + TRANSLATION, params=QUERY, timeout=30)
    outside = session.get(elsewhere + TRANSLATION, params=QUERY, timeout=30)
    assert inside.request.headers["Authorization"].startswith("Bearer ")
    assert "Authorization" not in outside.request.headers
    assert inside.status_code == outside.status_code == 200 and store.saves == 1

    scoped = HttpxAuth(manager(server, store), hosts=["127.0.0.1"])
    with httpx.Client(auth=scoped) as client:
        assert "Authorization" in client.get(server.url + TRANSLATION, params=QUERY).request.headers
        away = client.get(elsewhere + TRANSLATION, params=QUERY)
        assert "Authorization" not in away.request.headers

    async def fetch(url: str) -> httpx.Response:
        async with httpx.AsyncClient(auth=scoped) as client:
            return await client.get(url + TRANSLATION, params=QUERY)

    assert "Authorization" in asyncio.run(fetch(server.url)).request.headers
    assert "Authorization" not in asyncio.run(fetch(elsewhere)).request.headers

    for bad in ("127.0.0.1", [], ["127.0.0.1:8080"], ["https://en.wikipedia.org"], [""], [None]):
        with pytest.raises(wikisuggest.InvalidParameter):
            RequestsAuth(ref.PERSONAL_TOKEN, hosts=bad)  # type: ignore[arg-type]
        with pytest.raises(wikisuggest.InvalidParameter):
            HttpxAuth(ref.PERSONAL_TOKEN, hosts=bad)  # type: ignore[arg-type]
