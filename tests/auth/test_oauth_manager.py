"""TokenManager end to end: single-flight renewal for threads and asyncio tasks, replay after a
rejected token, refresh-token rotation and persistence, recovery paths."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.clients import oauth_async_client, oauth_client
from support.oauth_server import (
    BOT_SECRET,
    USER_AGENT,
    WEBAPP_SECRET,
    Grant,
    OAuthTestServer,
    visit_authorize,
)

from wikisuggest import (
    AsyncClient,
    Client,
    ConfigurationError,
    FileTokenStore,
    InvalidClient,
    ReauthorizationRequired,
    Token,
    TokenManager,
    Unauthorized,
    WikisuggestError,
)


def post_links(client: Client) -> Any:
    return client.link_recommendations_for_revision(
        "wikipedia", "en", "Cat", wikitext="A cat.", revid=1, pageid=2
    )


async def post_links_async(client: AsyncClient) -> Any:
    return await client.link_recommendations_for_revision(
        "wikipedia", "en", "Cat", wikitext="A cat.", revid=1, pageid=2
    )


def bot_manager(server: OAuthTestServer, **kwargs: Any) -> TokenManager:
    return TokenManager.client_credentials(
        "bot", BOT_SECRET, auth_url=server.url, user_agent=USER_AGENT, **kwargs
    )


def user_token(server: OAuthTestServer) -> Token:
    client = oauth_client(server)
    request = client.authorization_url("webapp")
    code = request.parse_redirect(visit_authorize(request.url))
    return client.authorization_code(
        code, "webapp", WEBAPP_SECRET, code_verifier=request.code_verifier
    )


def expire_soon(server: OAuthTestServer, manager: TokenManager) -> Token:
    """Give `manager` a token due for renewal half a second from now; later tokens live
    long, so exactly one renewal is ever due."""
    server.expires_in = 1
    first = manager.token()
    server.expires_in = 14_400
    time.sleep(0.6)
    return first


# -- single flight -------------------------------------------------------------------------


def test_thousand_threads_at_expiry_cause_one_request(oauth_server: OAuthTestServer) -> None:
    manager = bot_manager(oauth_server)
    first = expire_soon(oauth_server, manager)
    oauth_server.token_delay = 0.3  # keep the renewal in flight while everyone arrives
    callers = 1000
    start = threading.Barrier(callers)
    results: list[str] = []
    errors: list[BaseException] = []

    def call() -> None:
        try:
            start.wait()
            results.append(manager.token().access_token)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == callers
    assert len(set(results)) == 1
    assert results[0] != first.access_token
    assert oauth_server.token_requests == 2


async def test_thousand_tasks_at_expiry_cause_one_request(oauth_server: OAuthTestServer) -> None:
    manager = bot_manager(oauth_server)
    first = await asyncio.to_thread(expire_soon, oauth_server, manager)
    oauth_server.token_delay = 0.3
    tokens = await asyncio.gather(*(manager.token_async() for _ in range(1000)))
    assert len({t.access_token for t in tokens}) == 1
    assert tokens[0].access_token != first.access_token
    assert oauth_server.token_requests == 2


async def test_threads_and_tasks_share_one_renewal(oauth_server: OAuthTestServer) -> None:
    manager = bot_manager(oauth_server)
    await asyncio.to_thread(expire_soon, oauth_server, manager)
    oauth_server.token_delay = 0.3
    go = threading.Event()
    from_threads: list[str] = []

    def call() -> None:
        go.wait()
        from_threads.append(manager.token().access_token)

    threads = [threading.Thread(target=call) for _ in range(500)]
    for t in threads:
        t.start()
    go.set()
    from_tasks = await asyncio.gather(*(manager.token_async() for _ in range(500)))
    for t in threads:
        await asyncio.to_thread(t.join)
    seen = set(from_threads) | {t.access_token for t in from_tasks}
    assert len(from_threads) == 500
    assert len(seen) == 1
    assert oauth_server.token_requests == 2


async def test_concurrent_requests_through_clients_share_one_token(
    oauth_server: OAuthTestServer,
) -> None:
    manager = bot_manager(oauth_server)
    sync_client = oauth_client(oauth_server, manager)
    async_client = oauth_async_client(oauth_server, manager)
    oauth_server.token_delay = 0.2
    sync_calls = [asyncio.to_thread(post_links, sync_client) for _ in range(20)]
    async_calls = [post_links_async(async_client) for _ in range(100)]
    results = await asyncio.gather(*sync_calls, *async_calls)
    assert all(r.page_title == "Cat" for r in results)
    assert oauth_server.token_requests == 1
    assert len(set(oauth_server.bearers_seen)) == 1


# -- reactive renewal ----------------------------------------------------------------------


def test_rejected_token_is_renewed_and_replayed_once(oauth_server: OAuthTestServer) -> None:
    client = oauth_client(oauth_server, bot_manager(oauth_server))
    assert post_links(client).pageid == 2
    oauth_server.expire_access_tokens()  # the client still thinks its token is fresh
    assert post_links(client).revid == 1
    seen = oauth_server.bearers_seen
    assert len(seen) == 3
    assert seen[1] == seen[0] and seen[2] != seen[1]
    assert oauth_server.grant_counts["client_credentials"] == 2


async def test_rejected_token_is_renewed_and_replayed_once_async(
    oauth_server: OAuthTestServer,
) -> None:
    client = oauth_async_client(oauth_server, bot_manager(oauth_server))
    await post_links_async(client)
    oauth_server.expire_access_tokens()
    await post_links_async(client)
    assert oauth_server.resource_requests == 3
    assert oauth_server.token_requests == 2


def test_replay_never_loops(oauth_server: OAuthTestServer) -> None:
    client = oauth_client(oauth_server, bot_manager(oauth_server))
    oauth_server.reject_all_bearers = True
    with pytest.raises(Unauthorized) as info:
        post_links(client)
    assert info.value.status == 401
    assert info.value.reason == "Jwt is expired"
    assert 'error="invalid_token"' in (info.value.www_authenticate or "")
    assert oauth_server.resource_requests == 2
    assert oauth_server.token_requests == 2


async def test_replay_never_loops_async(oauth_server: OAuthTestServer) -> None:
    client = oauth_async_client(oauth_server, bot_manager(oauth_server))
    oauth_server.reject_all_bearers = True
    with pytest.raises(Unauthorized):
        await post_links_async(client)
    assert oauth_server.resource_requests == 2
    assert oauth_server.token_requests == 2


@pytest.mark.parametrize("as_manager", [False, True])
def test_personal_tokens_are_never_renewed(oauth_server: OAuthTestServer, as_manager: bool) -> None:
    oauth_server.access_tokens["personal-token-value"] = Grant("bot", float("inf"))
    auth: Any = "personal-token-value"
    if as_manager:
        auth = TokenManager.personal("personal-token-value")
        assert auth.token().expires_at is None
    client = oauth_client(oauth_server, auth)
    assert post_links(client).page_title == "Cat"
    oauth_server.expire_access_tokens()
    with pytest.raises(Unauthorized):
        post_links(client)
    assert oauth_server.resource_requests == 2
    assert oauth_server.token_requests == 0


def test_missing_token_is_not_treated_as_stale(oauth_server: OAuthTestServer) -> None:
    with pytest.raises(Unauthorized) as info:
        post_links(oauth_client(oauth_server))
    assert info.value.reason == "Jwt is missing"
    assert "auth=" in str(info.value)
    assert oauth_server.resource_requests == 1


def test_bad_credentials_surface_as_oauth_errors(oauth_server: OAuthTestServer) -> None:
    manager = TokenManager.client_credentials("bot", "wrong-secret")
    with pytest.raises(InvalidClient):
        post_links(oauth_client(oauth_server, manager))
    assert oauth_server.resource_requests == 0


# -- refresh tokens: rotation, persistence, recovery ---------------------------------------


def test_rotation_is_persisted_before_the_request_continues(
    oauth_server: OAuthTestServer, tmp_path: Path
) -> None:
    token = user_token(oauth_server)
    store = FileTokenStore(tmp_path / "token.json")
    manager = TokenManager.from_refresh_token(token, "webapp", WEBAPP_SECRET, store=store)
    saved = store.load()
    assert saved is not None and saved["refresh_token"] == token.refresh_token
    client = oauth_client(oauth_server, manager)
    post_links(client)  # uses the token it was given: no token request
    assert oauth_server.token_requests == 1  # the authorization-code exchange
    oauth_server.expire_access_tokens()
    post_links(client)
    saved = store.load()
    assert saved is not None
    assert saved["refresh_token"] != token.refresh_token
    assert saved["refresh_token"] in oauth_server.refresh_tokens
    assert saved["access_token"] == oauth_server.bearers_seen[-1]
    assert oauth_server.token_forms[-1]["refresh_token"] == token.refresh_token
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600


def test_lost_answer_is_retried_with_the_same_refresh_token(
    oauth_server: OAuthTestServer,
) -> None:
    token = user_token(oauth_server)
    assert token.refresh_token is not None
    oauth_server.drop_token_responses = 1
    manager = TokenManager.from_refresh_token(
        token.refresh_token,
        "webapp",
        WEBAPP_SECRET,
        auth_url=oauth_server.url,
        user_agent=USER_AGENT,
    )
    renewed = manager.token()
    assert renewed.access_token in oauth_server.access_tokens
    used = [f["refresh_token"] for f in oauth_server.token_forms[1:]]
    assert used == [token.refresh_token, token.refresh_token]


def test_invalid_grant_rereads_the_store(oauth_server: OAuthTestServer, tmp_path: Path) -> None:
    # Two processes share one authorization through one token file.
    token = user_token(oauth_server)
    assert token.refresh_token is not None
    store = FileTokenStore(tmp_path / "shared.json")
    options: dict[str, Any] = {"auth_url": oauth_server.url, "user_agent": USER_AGENT}
    first = TokenManager.from_refresh_token(
        token.refresh_token, "webapp", WEBAPP_SECRET, store=store, **options
    )
    rotated = first.token()
    # Started after the rotation with the original (explicit) refresh token: the stored token
    # predates this manager, so it is not adopted until the server refuses the original.
    second = TokenManager.from_refresh_token(
        token.refresh_token, "webapp", WEBAPP_SECRET, store=store, **options
    )
    oauth_server.advance(601)  # the original refresh token is now dead
    recovered = second.token()
    assert recovered.access_token in oauth_server.access_tokens
    used = [f["refresh_token"] for f in oauth_server.token_forms[1:]]
    assert used == [token.refresh_token, token.refresh_token, rotated.refresh_token]
    saved = store.load()
    assert saved is not None and saved["refresh_token"] == recovered.refresh_token


def test_a_token_saved_by_another_process_after_start_is_adopted(
    oauth_server: OAuthTestServer, tmp_path: Path
) -> None:
    # Both started with the same explicit refresh token; the first rotates it. The second sees
    # a token saved after it was made and uses it instead of spending the rotated one.
    token = user_token(oauth_server)
    store = FileTokenStore(tmp_path / "shared.json")
    options: dict[str, Any] = {"auth_url": oauth_server.url, "user_agent": USER_AGENT}
    first = TokenManager.from_refresh_token(
        token.refresh_token, "webapp", WEBAPP_SECRET, store=store, **options
    )
    second = TokenManager.from_refresh_token(
        token.refresh_token, "webapp", WEBAPP_SECRET, store=store, **options
    )
    rotated = first.token()
    assert second.token().access_token == rotated.access_token
    assert oauth_server.grant_counts["refresh_token"] == 1


async def test_cancelled_refresh_leaves_the_manager_usable(oauth_server: OAuthTestServer) -> None:
    # The server rotates the refresh token but the caller is cancelled before the answer
    # arrives: the next caller refreshes with the same token, inside the grace period.
    token = await asyncio.to_thread(user_token, oauth_server)
    assert token.refresh_token is not None
    manager = TokenManager.from_refresh_token(
        token.refresh_token,
        "webapp",
        WEBAPP_SECRET,
        auth_url=oauth_server.url,
        user_agent=USER_AGENT,
    )
    oauth_server.token_delay = 0.5
    first = asyncio.ensure_future(manager.token_async())
    while len(oauth_server.token_forms) < 2:  # the request has reached the server
        await asyncio.sleep(0.01)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    oauth_server.token_delay = 0.0
    renewed = await manager.token_async()
    assert renewed.access_token in oauth_server.access_tokens
    used = [f["refresh_token"] for f in oauth_server.token_forms[1:]]
    assert used == [token.refresh_token, token.refresh_token]


async def test_dead_refresh_token_requires_reauthorization(
    oauth_server: OAuthTestServer, tmp_path: Path
) -> None:
    manager = TokenManager.from_refresh_token(
        "rt-revoked-long-ago",
        "webapp",
        WEBAPP_SECRET,
        store=FileTokenStore(tmp_path / "t.json"),
        auth_url=oauth_server.url,
        user_agent=USER_AGENT,
    )
    for _ in range(2):
        with pytest.raises(ReauthorizationRequired) as info:
            await manager.token_async()
        assert "Cannot decrypt the refresh token" in str(info.value)
        assert "rt-revoked-long-ago" not in str(info.value)
    client = oauth_async_client(oauth_server, manager)
    with pytest.raises(ReauthorizationRequired):
        await post_links_async(client)
    assert oauth_server.resource_requests == 0


def test_resumes_from_the_store(oauth_server: OAuthTestServer, tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "token.json")
    token = user_token(oauth_server)
    store.save(token.to_dict())
    manager = TokenManager.from_refresh_token(None, "webapp", WEBAPP_SECRET, store=store)
    post_links(oauth_client(oauth_server, manager))
    assert oauth_server.bearers_seen == [token.access_token]
    assert oauth_server.token_requests == 1


def test_restarted_bot_reuses_its_stored_token(
    oauth_server: OAuthTestServer, tmp_path: Path
) -> None:
    store = FileTokenStore(tmp_path / "bot.json")
    before = bot_manager(oauth_server, store=store).token()
    after = bot_manager(oauth_server, store=store).token()
    assert after.access_token == before.access_token
    assert oauth_server.token_requests == 1


# -- callback stores -----------------------------------------------------------------------


class MemoryStore:
    def __init__(self) -> None:
        self.saved: list[dict[str, Any]] = []
        self.loads = 0

    def load(self) -> dict[str, Any] | None:
        self.loads += 1
        return self.saved[-1] if self.saved else None

    def save(self, token: dict[str, Any]) -> None:
        self.saved.append(dict(token))


@pytest.mark.parametrize("shape", ["object", "pair"])
async def test_callback_store_sees_every_rotation(
    oauth_server: OAuthTestServer, shape: str
) -> None:
    token = await asyncio.to_thread(user_token, oauth_server)
    memory = MemoryStore()
    store: Any = memory if shape == "object" else (memory.load, memory.save)
    manager = TokenManager.from_refresh_token(token, "webapp", WEBAPP_SECRET, store=store)
    client = oauth_async_client(oauth_server, manager)
    for _ in range(3):
        oauth_server.expire_access_tokens()
        await post_links_async(client)
    refresh_tokens = [s["refresh_token"] for s in memory.saved]
    assert refresh_tokens[0] == token.refresh_token
    assert len(refresh_tokens) == 4 and len(set(refresh_tokens)) == 4
    # Each refresh used the token saved just before it.
    used = [f["refresh_token"] for f in oauth_server.token_forms[1:]]
    assert used == refresh_tokens[:-1]
    assert memory.loads >= 3


def test_failing_store_is_reported_but_the_token_is_kept(
    oauth_server: OAuthTestServer,
) -> None:
    def load() -> None:
        return None

    def save(token: dict[str, Any]) -> None:
        raise OSError("disk full")

    manager = bot_manager(oauth_server, store=(load, save))
    with pytest.raises(WikisuggestError) as info:
        manager.token()
    assert "disk full" in str(info.value) and "save()" in str(info.value)
    assert manager.token().access_token in oauth_server.access_tokens
    assert oauth_server.token_requests == 1


def test_unusable_stores_are_reported_without_their_content(
    oauth_server: OAuthTestServer, tmp_path: Path
) -> None:
    def load() -> Any:
        return {"refresh_token": "rt-from-a-broken-store"}  # no access_token

    def save(token: Any) -> None:
        pass

    broken = bot_manager(oauth_server, store=(load, save))
    with pytest.raises(WikisuggestError) as info:
        broken.token()
    assert "load()" in str(info.value)
    assert "rt-from-a-broken-store" not in str(info.value)
    # A path that cannot hold a file.
    (tmp_path / "token.json").mkdir()
    unwritable = bot_manager(oauth_server, store=FileTokenStore(tmp_path / "token.json"))
    with pytest.raises(WikisuggestError, match="token file"):
        unwritable.token()


def test_bad_store_arguments(oauth_server: OAuthTestServer) -> None:
    with pytest.raises(ValueError):
        bot_manager(oauth_server, store=object())


# -- transport -----------------------------------------------------------------------------


def test_standalone_manager_needs_a_user_agent(
    oauth_server: OAuthTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WIKISUGGEST_USER_AGENT", raising=False)
    lonely = TokenManager.client_credentials("bot", BOT_SECRET, auth_url=oauth_server.url)
    with pytest.raises(ConfigurationError) as info:
        lonely.token()
    assert "User-Agent" in str(info.value)
    monkeypatch.setenv("WIKISUGGEST_USER_AGENT", USER_AGENT)
    from_env = TokenManager.client_credentials("bot", BOT_SECRET, auth_url=oauth_server.url)
    assert from_env.token().access_token in oauth_server.access_tokens


def test_attached_manager_uses_the_clients_auth_url(oauth_server: OAuthTestServer) -> None:
    manager = TokenManager.client_credentials("bot", BOT_SECRET)
    oauth_client(oauth_server, manager)
    assert manager.token().access_token in oauth_server.access_tokens


def test_manager_arguments(oauth_server: OAuthTestServer) -> None:
    with pytest.raises(ValueError):
        TokenManager.client_credentials("bot", "")
    with pytest.raises(ValueError):
        TokenManager.client_credentials("bot", BOT_SECRET, leeway=-1)
    with pytest.raises(ValueError):
        TokenManager.from_refresh_token(None, "webapp")
    with pytest.raises(ValueError):
        TokenManager.from_refresh_token(
            oauth_client(oauth_server).client_credentials("bot", BOT_SECRET), "bot"
        )
    with pytest.raises(TypeError):
        TokenManager(object())  # type: ignore[arg-type]
    assert bot_manager(oauth_server, leeway=60).leeway == 60
