"""Secrets never reach reprs, messages, tracebacks or logs; the token file is private; the
loopback helper completes the authorization-code flow."""

from __future__ import annotations

import logging
import os
import re
import stat
import threading
import traceback
import urllib.error
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.clients import oauth_client
from support.oauth_server import (
    BOT_SECRET,
    USER_AGENT,
    WEBAPP_SECRET,
    OAuthTestServer,
    authorize_query,
    open_url,
    visit_authorize,
)

import wikisuggest
from wikisuggest import (
    FileTokenStore,
    LoopbackServer,
    Token,
    TokenManager,
    UnauthorizedClient,
    WikisuggestError,
    authorize_with_loopback,
)

# Built at run time so that the source lines a traceback quotes never contain the values.
PERSONAL = "-".join(["personal", "token", "value"])
WRONG_SECRET = "-".join(["wrong", "secret", "value"])
DEAD_REFRESH = "-".join(["rt", "dead", "value"])


def browser_for(server: OAuthTestServer) -> Callable[[str], None]:
    """A browser whose user approves (or cancels, per the server's setting) at once."""

    def open_browser(url: str) -> None:
        with open_url(visit_authorize(url)) as page:
            assert b"You can close this window" in page.read()

    return open_browser


def failures(calls: list[Callable[[], Any]]) -> list[BaseException]:
    caught: list[BaseException] = []
    for call in calls:
        with pytest.raises(WikisuggestError) as info:
            call()
        caught.append(info.value)
    return caught


def test_no_secret_in_reprs_messages_tracebacks_or_logs(
    oauth_server: OAuthTestServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    client = oauth_client(oauth_server)
    token = authorize_with_loopback(
        client, "webapp", WEBAPP_SECRET, open_browser=browser_for(oauth_server)
    )
    assert token.refresh_token is not None
    request = client.authorization_url("webapp")
    store = FileTokenStore(tmp_path / "token.json")
    user = TokenManager.from_refresh_token(token, "webapp", WEBAPP_SECRET, store=store)
    bot = TokenManager.client_credentials("bot", BOT_SECRET)
    personal = TokenManager.personal(PERSONAL)
    bot_client = oauth_client(oauth_server, bot)
    bot_token = bot.token()
    secrets = [
        BOT_SECRET,
        WEBAPP_SECRET,
        token.access_token,
        token.refresh_token,
        bot_token.access_token,
        request.code_verifier,
        PERSONAL,
        WRONG_SECRET,
        DEAD_REFRESH,
    ]

    oauth_server.reject_all_bearers = True
    errors = failures(
        [
            lambda: client.client_credentials("bot", WRONG_SECRET),
            lambda: client.refresh_token(DEAD_REFRESH, "webapp", WEBAPP_SECRET),
            lambda: client.refresh_token(token.refresh_token or "", "webapp", WRONG_SECRET),
            lambda: TokenManager.from_refresh_token(
                DEAD_REFRESH,
                "webapp",
                WEBAPP_SECRET,
                auth_url=oauth_server.url,
                user_agent=USER_AGENT,
            ).token(),
            lambda: client.authorization_code(
                "code-x", "webapp", WEBAPP_SECRET, code_verifier=request.code_verifier
            ),
            lambda: bot_client.link_recommendations_for_revision(
                "wikipedia", "en", "Cat", wikitext="x", revid=1, pageid=2
            ),
            lambda: oauth_client(oauth_server, PERSONAL).link_recommendations_for_revision(
                "wikipedia", "en", "Cat", wikitext="x", revid=1, pageid=2
            ),
            lambda: request.parse_redirect("http://127.0.0.1/callback?code=c&state=wrong"),
        ]
    )
    shown = [
        repr(token),
        str(token),
        repr(request),
        str(request),
        repr(user),
        str(user),
        repr(bot),
        repr(personal),
        repr(client),
        repr(bot_client),
        repr(store),
        repr(bot_token),
        str(bot_token),
    ]
    for error in errors:
        shown += [str(error), repr(error), "".join(traceback.format_exception(error))]
        shown += [repr(v) for k, v in vars(error).items() if k != "body"]
    logged = [record.getMessage() for record in caplog.records]
    # Renewals and replays are logged, so the check below looks at real log lines.
    assert any("requesting a new access token (refresh_token, client webapp)" in m for m in logged)
    assert any("rejected the access token" in m for m in logged)
    shown += logged
    out, err = capfd.readouterr()
    shown += [out, err]
    for text in shown:
        for secret in secrets:
            assert secret not in text, f"{secret!r} leaked into {text!r}"
    # The secrets are there for whoever asks for them explicitly.
    assert token.to_dict()["access_token"] == token.access_token


def test_token_repr_and_str_hide_both_tokens() -> None:
    token = Token.from_dict(
        {
            "access_token": "AT-VALUE",
            "refresh_token": "RT-VALUE",
            "expires_in": 60,
            "obtained_at": 1_700_000_000,
        }
    )
    for text in (repr(token), str(token), f"{token}", f"{token!r}"):
        assert "AT-VALUE" not in text and "RT-VALUE" not in text
    assert "***" in str(token)
    assert "expires_in=60" in repr(token)


def test_token_file_is_private_and_replaced_atomically(tmp_path: Path) -> None:
    path = tmp_path / "token.json"
    path.write_text("{}")
    os.chmod(path, 0o644)
    store = FileTokenStore(path)
    token = Token.from_dict({"access_token": "a", "refresh_token": "r", "expires_in": 60})
    old_umask = os.umask(0)
    try:
        store.save(token.to_dict())
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["token.json"]
    loaded = store.load()
    assert loaded is not None and Token.from_dict(loaded) == token
    assert FileTokenStore(tmp_path / "missing.json").load() is None


# -- loopback helper -----------------------------------------------------------------------


@pytest.mark.parametrize("client_id,secret", [("public", None), ("webapp", WEBAPP_SECRET)])
def test_authorize_with_loopback(
    oauth_server: OAuthTestServer, client_id: str, secret: str | None
) -> None:
    client = oauth_client(oauth_server)
    opened: list[str] = []
    browser = browser_for(oauth_server)

    def open_browser(url: str) -> None:
        opened.append(url)
        browser(url)

    token = authorize_with_loopback(
        client, client_id, secret, scope="basic", open_browser=open_browser, timeout=10
    )
    assert token.refresh_token in oauth_server.refresh_tokens
    query = authorize_query(opened[0])
    assert query["redirect_uri"].startswith("http://127.0.0.1:")
    assert query["redirect_uri"].endswith("/callback")
    assert query["scope"] == "basic"
    form = oauth_server.token_forms[-1]
    assert form["redirect_uri"] == query["redirect_uri"]
    assert len(form["code_verifier"]) >= 43
    # Keep it alive with a manager.
    manager = TokenManager.from_refresh_token(token, client_id, secret)
    assert (
        oauth_client(oauth_server, manager)
        .link_recommendations_for_revision(
            "wikipedia", "en", "Cat", wikitext="x", revid=1, pageid=2
        )
        .page_title
        == "Cat"
    )


def test_loopback_without_a_browser_prints_the_address(oauth_server: OAuthTestServer) -> None:
    """On a headless machine the helper says what to open, and a person who opens it (here a
    thread reading the printed address) completes the flow."""
    browser = browser_for(oauth_server)

    class Terminal:
        def __init__(self) -> None:
            self.text = ""
            self.opened = False

        def write(self, text: str) -> int:
            self.text += text
            found = re.search(r"http://\S+/authorize\S*", self.text)
            if found and not self.opened:
                self.opened = True
                threading.Thread(target=browser, args=(found.group(),), daemon=True).start()
            return len(text)

        def flush(self) -> None:
            pass

    terminal = Terminal()
    token = authorize_with_loopback(
        oauth_client(oauth_server),
        "public",
        open_browser=lambda url: False,  # what webbrowser.open says when none is found
        output=terminal,  # type: ignore[arg-type]
        timeout=10,
    )
    assert token.refresh_token in oauth_server.refresh_tokens
    assert "No browser opened" in terminal.text and "ssh -L" in terminal.text
    assert "http://127.0.0.1:" in terminal.text  # the redirect it waits for


def test_loopback_cancel(oauth_server: OAuthTestServer) -> None:
    oauth_server.authorize_decision = "cancel"
    with pytest.raises(UnauthorizedClient):
        authorize_with_loopback(
            oauth_client(oauth_server),
            "public",
            open_browser=browser_for(oauth_server),
            timeout=10,
        )
    assert oauth_server.token_requests == 0


def test_loopback_timeout_and_other_paths() -> None:
    with LoopbackServer() as server:
        assert server.redirect_uri.startswith("http://127.0.0.1:")
        with pytest.raises(urllib.error.HTTPError) as info:
            open_url(server.redirect_uri.replace("/callback", "/favicon.ico"))
        assert info.value.code == 404
        info.value.close()
        with pytest.raises(WikisuggestError, match="no authorization redirect"):
            server.wait(timeout=0.2)


def test_public_names_are_exported() -> None:
    for name in (
        "Token",
        "TokenManager",
        "TokenStore",
        "FileTokenStore",
        "AuthorizationRequest",
        "LoopbackServer",
        "authorization_url",
        "parse_redirect",
        "authorize_with_loopback",
    ):
        assert name in wikisuggest.__all__
        assert hasattr(wikisuggest, name)
