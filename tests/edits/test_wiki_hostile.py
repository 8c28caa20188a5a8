"""``Wiki`` against a wiki that misbehaves on purpose: it echoes the request's credentials (bot
password, login and CSRF tokens, session cookie, bearer token) into its errors, streams bodies
without end, sends a 1 GB error, answers in formatversion 1 or with a redirect. Every case ends
in a typed exception, with bounded memory and no credential in any text the client produces;
credentials never go over plain http:// to another host.

The wiki here is a small raw-socket server (below), started on 127.0.0.1 by each test.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import wikisuggest
from wikisuggest import (
    AsyncWiki,
    ConfigurationError,
    DecodeError,
    MediaWikiError,
    ResponseTooLarge,
    Wiki,
    WikisuggestError,
)

USER_AGENT = "wikisuggest-tests/1.0 (https://example.org/tests; tests@example.org)"
PASSWORD = "bot-password-0123456789abcdef0123"
LOGIN_TOKEN = "login-token-5555+\\"
CSRF = "csrf-token-7777aaaabbbb+\\"
SESSION = "session-cookie-9999cccc"
BEARER = "bearer-token-1111dddd"
SECRETS = [
    PASSWORD,
    urllib.parse.quote(PASSWORD),
    LOGIN_TOKEN,
    urllib.parse.quote_plus(LOGIN_TOKEN),
    CSRF,
    urllib.parse.quote_plus(CSRF),
    SESSION,
    BEARER,
]
GIB = 1024**3

Handler = Callable[[dict[str, str], socket.socket], None]


def _send(sock: socket.socket, status: int, body: Any, headers: str = "") -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    sock.sendall(
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
        f"Connection: close\r\n{headers}\r\n".encode()
        + data
    )


class HostileWiki:
    """Answers the login and token steps as MediaWiki does, then hands every other request
    (its parameters, and the raw request as ``_raw``) to ``handler``."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/api.php"
        self.requests: list[dict[str, str]] = []
        #: Refuse logins with a reason quoting the request (password and login token).
        self.echo_login = False
        #: Cookies a successful login sets besides the session (MediaWiki's public ones).
        self.login_cookies: list[str] = []
        #: The answer to ``meta=siteinfo``.
        self.siteinfo: Any = {
            "query": {"general": {"lang": "en", "case": "first-letter"}, "namespaces": {}}
        }
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(sock,), daemon=True).start()

    def _answer(self, sock: socket.socket) -> None:
        with sock:
            raw = b""
            while b"\r\n\r\n" not in raw:
                chunk = sock.recv(65536)
                if not chunk:
                    return
                raw += chunk
            head, _, body = raw.partition(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            while len(body) < length:
                body += sock.recv(65536)
            target = head.split(b" ")[1].decode()
            params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(target).query))
            params.update(urllib.parse.parse_qsl(body.decode()))
            params["_raw"] = raw.decode("latin-1")
            self.requests.append(params)
            # The client hanging up is what an endless body waits for.
            with contextlib.suppress(OSError):
                self._route(params, sock)

    def _route(self, params: dict[str, str], sock: socket.socket) -> None:
        if params.get("meta") == "tokens" and params.get("type") == "login":
            _send(
                sock,
                200,
                {"query": {"tokens": {"logintoken": LOGIN_TOKEN}}},
                f"Set-Cookie: wiki_session={SESSION}; path=/; HttpOnly\r\n",
            )
        elif params.get("action") == "login" and self.echo_login:
            reason = f"you sent {params['_raw']} {json.dumps(params)}"
            _send(sock, 200, {"login": {"result": "Failed", "reason": reason}})
        elif params.get("action") == "login":
            cookies = "".join(f"Set-Cookie: {c}; path=/\r\n" for c in self.login_cookies)
            _send(sock, 200, {"login": {"result": "Success", "lgusername": "Bot"}}, cookies)
        elif params.get("meta") == "tokens":
            _send(sock, 200, {"query": {"tokens": {"csrftoken": CSRF}}})
        elif params.get("meta") == "siteinfo":
            _send(sock, 200, self.siteinfo)
        else:
            self.handler(params, sock)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def hostile() -> Iterator[Callable[[Handler], HostileWiki]]:
    made: list[HostileWiki] = []

    def make(handler: Handler) -> HostileWiki:
        made.append(HostileWiki(handler))
        return made[-1]

    yield make
    for wiki in made:
        wiki.close()


def _echo_500(params: dict[str, str], sock: socket.socket) -> None:
    text = params["_raw"]
    _send(sock, 500, f"<html>Internal error while serving {text}</html>".encode("latin-1"))


def _echo_api_error(params: dict[str, str], sock: socket.socket) -> None:
    text = params["_raw"]
    _send(
        sock,
        200,
        {"error": {"code": "internal_api_error", "info": f"you sent {text} {json.dumps(params)}"}},
    )


def _echo_decode(params: dict[str, str], sock: socket.socket) -> None:
    _send(sock, 200, f"<html>Not JSON: {params['_raw']}".encode("latin-1"))


def _applied() -> wikisuggest.AppliedLinks:
    rec = wikisuggest.LinkRecommendation("cats", "Cat", wikitext_offset=6)
    result = wikisuggest.LinkRecommendationSet(links=(rec,), page_title="Pets", revid=5)
    applied = wikisuggest.apply_links("Some cats here.", result)
    assert applied.changed
    return applied


def _texts(error: BaseException) -> str:
    parts = [str(error), repr(error), repr(getattr(error, "__dict__", {}))]
    parts += [str(getattr(error, name, "")) for name in ("info", "snippet", "code", "url")]
    return "\n".join(parts)


@pytest.mark.parametrize("handler", [_echo_500, _echo_api_error, _echo_decode])
def test_echoed_credentials_never_reach_an_error(
    hostile: Callable[[Handler], HostileWiki], handler: Handler
) -> None:
    server = hostile(handler)
    wiki = Wiki(server.url, USER_AGENT, max_retries=0)
    wiki.login("Bot@app", PASSWORD)
    with pytest.raises(WikisuggestError) as caught:
        wiki.save(_applied())
    edit = next(r for r in server.requests if r.get("action") == "edit")
    # The edit really carried every credential, so the echo held them all.
    assert edit["token"] == CSRF and SESSION in edit["_raw"]
    assert isinstance(caught.value, (MediaWikiError, DecodeError))
    text = _texts(caught.value)
    assert "you sent" in text or "Not JSON" in text or "Internal error" in text
    for secret in SECRETS:
        assert secret not in text, secret
    # A refused login quoting its request: the password and the login token.
    server.echo_login = True
    with pytest.raises(MediaWikiError) as login:
        Wiki(server.url, USER_AGENT).login("Bot@app", PASSWORD)
    assert login.value.code == "login-failed" and "you sent" in str(login.value)
    for secret in SECRETS:
        assert secret not in _texts(login.value), secret


def test_a_bearer_token_echoed_back_is_cut_out(hostile: Callable[[Handler], HostileWiki]) -> None:
    server = hostile(_echo_api_error)
    with pytest.raises(MediaWikiError) as caught:
        Wiki(server.url, USER_AGENT, auth=BEARER).page("Pets")
    assert f"Bearer {BEARER}" in server.requests[-1]["_raw"]
    assert BEARER not in _texts(caught.value) and "Bearer ***" in str(caught.value)


def _endless(params: dict[str, str], sock: socket.socket) -> None:
    sock.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b'{"query":' + b" " * 65527
    framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    while True:
        sock.sendall(framed)


def _gigabyte_error(params: dict[str, str], sock: socket.socket) -> None:
    sock.sendall(
        f"HTTP/1.1 500 Oops\r\nContent-Type: text/plain\r\nContent-Length: {GIB}\r\n\r\n".encode()
    )
    block = b"x" * (1 << 20)
    for _ in range(1024):
        sock.sendall(block)


def test_an_endless_body_stops_at_the_limit(hostile: Callable[[Handler], HostileWiki]) -> None:
    server = hostile(_endless)
    with pytest.raises(ResponseTooLarge) as caught:
        Wiki(server.url, USER_AGENT, max_body_size=8 << 20).page("Pets")
    assert caught.value.limit == 8 << 20


def test_a_gigabyte_error_is_read_to_its_start(hostile: Callable[[Handler], HostileWiki]) -> None:
    server = hostile(_gigabyte_error)
    with pytest.raises(MediaWikiError) as caught:
        Wiki(server.url, USER_AGENT, max_retries=0).page("Pets")
    assert caught.value.code == "http-500"
    assert len(str(caught.value)) < 1000


def test_a_formatversion_1_answer_is_an_error_not_a_missing_page(
    hostile: Callable[[Handler], HostileWiki],
) -> None:
    def version_1(params: dict[str, str], sock: socket.socket) -> None:
        page = {"pageid": 5, "ns": 0, "title": "Pets", "revisions": [{"revid": 7, "*": "x"}]}
        _send(sock, 200, {"query": {"pages": {"5": page}}})

    server = hostile(version_1)
    with pytest.raises(DecodeError, match="formatversion 1"):
        Wiki(server.url, USER_AGENT).page("Pets")


def test_a_redirect_is_named_not_parsed(hostile: Callable[[Handler], HostileWiki]) -> None:
    def moved(params: dict[str, str], sock: socket.socket) -> None:
        location = "https://wiki.example.org/w/api.php?session=" + SESSION
        _send(sock, 301, b"<html>Moved</html>", f"Location: {location}\r\n")

    server = hostile(moved)
    wiki = Wiki(server.url, USER_AGENT, max_retries=0)
    wiki.login("Bot@app", PASSWORD)
    with pytest.raises(MediaWikiError) as caught:
        wiki.page("Pets")
    assert caught.value.code == "http-301"
    assert "https://wiki.example.org/w/api.php" in str(caught.value)
    assert "EOF" not in str(caught.value) and SESSION not in str(caught.value)
    # Nothing followed the redirect: one request for the page, none elsewhere.
    assert sum(1 for r in server.requests if r.get("titles") == "Pets") == 1


def test_credentials_never_travel_in_clear_text_to_another_host() -> None:
    remote = "http://wiki.example.org/w/api.php"
    with pytest.raises(ConfigurationError, match="allow_insecure_http"):
        Wiki(remote, USER_AGENT, auth=BEARER)
    with pytest.raises(ConfigurationError, match="allow_insecure_http"):
        AsyncWiki(remote, USER_AGENT, auth=BEARER)
    with pytest.raises(ConfigurationError, match="allow_insecure_http"):
        Wiki(remote, USER_AGENT).login("Bot@app", PASSWORD)
    # Allowed on request, and always to this machine.
    Wiki(remote, USER_AGENT, auth=BEARER, allow_insecure_http=True)
    Wiki("http://127.0.0.1:9/api.php", USER_AGENT, auth=BEARER)


def test_titles_the_api_would_misread_are_refused_before_sending(
    hostile: Callable[[Handler], HostileWiki],
) -> None:
    server = hostile(_echo_api_error)
    wiki = Wiki(server.url, USER_AGENT)
    for title in ("A|B", "\x1fCat", "Cat\ud800"):
        with pytest.raises(wikisuggest.InvalidParameter):
            wiki.page(title)
    with pytest.raises(wikisuggest.InvalidParameter):
        wiki.page(revid=0)
    assert server.requests == []


def test_text_that_is_not_unicode_is_a_typed_error_before_sending(
    hostile: Callable[[Handler], HostileWiki],
) -> None:
    server = hostile(_echo_api_error)
    wiki = Wiki(server.url, USER_AGENT)
    applied = _applied()
    with pytest.raises(wikisuggest.InvalidParameter, match="summary"):
        wiki.save(applied, summary="Add links \udcff")
    with pytest.raises(wikisuggest.InvalidParameter, match="wikitext"):
        wikisuggest.apply_links("Some cats \ud800 here.", [])
    assert server.requests == []


@pytest.mark.parametrize("handler", [_endless, _gigabyte_error, _echo_api_error])
def test_the_server_survives_a_wiki_that_misbehaves(
    hostile: Callable[[Handler], HostileWiki], handler: Handler
) -> None:
    """``serve --wiki-api`` reads pages through the same client: a wiki that streams without
    end, sends a 1 GB error or echoes requests costs one failed request, not the server."""
    from support.reference_server import DATASETS

    server = hostile(handler)
    with wikisuggest.Server(datasets=DATASETS, wiki_apis={"enwiki": server.url}, port=0) as served:
        client = wikisuggest.Client(USER_AGENT, base_url=served.url, max_retries=0)
        for _ in range(2):
            with pytest.raises(wikisuggest.ServerError):
                client.link_recommendations("wikipedia", "en", "Pets")
        assert served.running


def test_only_credentials_are_cut_out_after_a_login(
    hostile: Callable[[Handler], HostileWiki],
) -> None:
    """The public cookies MediaWiki sets at login (a user id, a user name, a flag) are sent
    back, but not cut out of every text: only the session is a secret."""

    def database_error(params: dict[str, str], sock: socket.socket) -> None:
        info = f"error 1213 on db1101 for Bot (session {SESSION})"
        _send(sock, 200, {"error": {"code": "internal_api_error_DBQueryError", "info": info}})

    server = hostile(database_error)
    server.login_cookies = ["enwikiUserID=1213", "enwikiUserName=Bot", "forceHTTPS=1"]
    wiki = Wiki(server.url, USER_AGENT, max_retries=0)
    wiki.login("Bot@app", PASSWORD)
    with pytest.raises(MediaWikiError) as caught:
        wiki.page("Pets")
    assert "enwikiUserID=1213" in server.requests[-1]["_raw"], "the cookies are sent"
    assert str(caught.value).endswith("error 1213 on db1101 for Bot (session ***)"), str(
        caught.value
    )


def test_an_answer_about_another_page_is_refused(
    hostile: Callable[[Handler], HostileWiki],
) -> None:
    def other_page(params: dict[str, str], sock: socket.socket) -> None:
        revid = int(params.get("revids", "7"))
        page = {"pageid": 9, "title": "Evil", "revisions": [{"revid": revid + 1,
                "slots": {"main": {"content": "[[Spam]]"}}}]}  # fmt: skip
        _send(sock, 200, {"query": {"pages": [page]}})

    server = hostile(other_page)
    wiki = Wiki(server.url, USER_AGENT, max_retries=0)
    with pytest.raises(DecodeError, match=r"another page.*Evil.*Pets"):
        wiki.page("Pets")
    with pytest.raises(DecodeError, match=r"another page.*revision 8"):
        wiki.page(revid=7)


def test_the_wikis_own_spelling_of_a_title_is_the_same_page(
    hostile: Callable[[Handler], HostileWiki],
) -> None:
    def normalised(params: dict[str, str], sock: socket.socket) -> None:
        page = {"pageid": 9, "title": "Pet shop", "revisions": [{"revid": 3,
                "slots": {"main": {"content": "x"}}}]}  # fmt: skip
        normalized = [{"from": params["titles"], "to": "Pet shop"}]
        _send(sock, 200, {"query": {"normalized": normalized, "pages": [page]}})

    server = hostile(normalised)
    found = Wiki(server.url, USER_AGENT).page("pet_shop")
    assert found is not None and found.title == "Pet shop"


def test_a_hostile_community_configuration_is_a_typed_error(
    hostile: Callable[[Handler], HostileWiki],
) -> None:
    from wikisuggest.edits.community import CommunityConfiguration

    nested = "[" * 100_000 + "]" * 100_000
    page_text = {"config": nested}

    def configuration(params: dict[str, str], sock: socket.socket) -> None:
        page = {"pageid": 1, "title": params["titles"], "revisions": [{"revid": 2,
                "slots": {"main": {"content": page_text["config"]}}}]}  # fmt: skip
        _send(sock, 200, {"query": {"pages": [page]}})

    server = hostile(configuration)
    wiki = Wiki(server.url, USER_AGENT, max_retries=0)
    with pytest.raises(ConfigurationError, match="nested too deeply"):
        CommunityConfiguration.from_wiki(wiki)
    with pytest.raises(ConfigurationError, match="nested too deeply"):
        CommunityConfiguration.from_json('{"link_recommendation": ' + nested + "}")
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ConfigurationError, match="excludedTemplates must be a list of strings"):
        CommunityConfiguration.from_json({"link_recommendation": {"excludedTemplates": deep}})
    # A well-formed page, and then siteinfo answers of every wrong shape.
    siteinfo: Any
    page_text["config"] = '{"link_recommendation": {"excludedTemplates": ["Stub"]}}'
    for siteinfo in (
        [],
        {"query": []},
        {"query": {"namespaces": [1, 2]}},
        {"query": {"namespaces": {"10": "Template"}}},
        {"query": {"namespaces": [{"id": 10, "name": ["Template"]}]}},
        {"query": {"namespaces": [], "namespacealiases": {"id": 14}}},
    ):
        server.siteinfo = siteinfo
        with pytest.raises(DecodeError):
            CommunityConfiguration.from_wiki(wiki)
    server.siteinfo = {"query": {"namespaces": [{"id": 10, "name": "Vorlage",
                       "canonical": "Template"}], "namespacealiases": []}}  # fmt: skip
    config = CommunityConfiguration.from_wiki(wiki)
    assert config.excluded_templates == ("Stub",)
    assert config.template_namespaces == ("Vorlage", "Template")
