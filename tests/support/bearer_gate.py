"""A bearer-token gate in front of a wiki, on 127.0.0.1, for the tests.

Debian's MediaWiki has no OAuth extension: it ignores an ``Authorization: Bearer`` header. The
gate stands in for that extension: it asks the token's issuer whether the token is good and
answers 401 (as the extension does) when it is not; otherwise it passes the request on to the
wiki as the token's user — with the session of that user, logged in once by the gate, in place
of the client's cookies — and the wiki's answer back. Every request is recorded with the token
it carried and its ``action``, so a test can see what a client really sent.
"""

from __future__ import annotations

import http.client
import http.cookiejar
import http.server
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

import wikisuggest
from support import reference_server as ref
from support.local_mediawiki import LocalWiki

#: Headers that belong to one connection, not to the message (RFC 9110 §7.6.1).
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "host",
        # Replaced: the gate authenticates the request to the wiki itself.
        "authorization",
        "cookie",
        "set-cookie",
    }
)


#: Only 127.0.0.1 is contacted: never through a proxy.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

#: A route behind the reference server's gateway, which answers 401 to a token it refuses.
GATED_ROUTE = "/service/lw/recommendation/api/v1/translation?source=en&target=fr&count=1"


def issuer_check(issuer: str) -> Callable[[str], bool]:
    """Whether the reference server at ``issuer`` accepts a bearer token (one it issued and
    still knows, or a registered personal token): its gateway decides."""

    def valid(token: str) -> bool:
        request = urllib.request.Request(
            issuer + GATED_ROUTE, headers={"Authorization": f"Bearer {token}"}
        )
        try:
            with OPENER.open(request, timeout=30) as reply:
                return bool(reply.status == 200)
        except urllib.error.HTTPError as refused:
            with refused:
                if refused.code == 401:
                    return False
                raise

    return valid


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    #: The bearer token the request carried (None: no bearer header).
    token: str | None
    status: int
    #: The Action API ``action`` (from the query string or the form body).
    action: str | None


def login_cookies(api_url: str, user: str, password: str) -> str:
    """A ``Cookie`` header of a session logged in with a bot password."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(jar)
    )

    def call(**params: str) -> Any:
        body = urllib.parse.urlencode({**params, "format": "json", "formatversion": "2"})
        with opener.open(api_url, data=body.encode(), timeout=30) as reply:
            return json.load(reply)

    login_token = call(action="query", meta="tokens", type="login")["query"]["tokens"]
    done = call(action="login", lgname=user, lgpassword=password, lgtoken=login_token["logintoken"])
    assert done["login"]["result"] == "Success", done
    return "; ".join(f"{cookie.name}={cookie.value}" for cookie in jar)


def _action(path: str, body: bytes | None, content_type: str) -> str | None:
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    if body and content_type.startswith("application/x-www-form-urlencoded"):
        query |= urllib.parse.parse_qs(body.decode("utf-8", "replace"))
    return query.get("action", [None])[0]


class BearerGate:
    """Serve on 127.0.0.1:0 and forward to ``upstream`` (``http://127.0.0.1:PORT``) the
    requests whose bearer token ``valid(token)`` accepts, with the ``Cookie`` header
    ``session`` (see :func:`login_cookies`): every good token is that user's."""

    def __init__(self, upstream: str, valid: Callable[[str], bool], session: str) -> None:
        parsed = urllib.parse.urlsplit(upstream)
        assert parsed.scheme == "http" and parsed.hostname == "127.0.0.1", upstream
        self._upstream = (parsed.hostname, parsed.port or 80)
        self._valid = valid
        self._session = session
        self._lock = threading.Lock()
        self._seen: list[Seen] = []
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def seen(self) -> list[Seen]:
        with self._lock:
            return list(self._seen)

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()

    def __enter__(self) -> BearerGate:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _record(self, seen: Seen) -> None:
        with self._lock:
            self._seen.append(seen)

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        gate = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self._pass()

            def do_POST(self) -> None:
                self._pass()

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _pass(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
                bearer = token.strip() if scheme.lower() == "bearer" and token.strip() else None
                action = _action(self.path, body, self.headers.get("Content-Type") or "")
                if bearer is None or not gate._valid(bearer):
                    gate._record(Seen(self.command, self.path, bearer, 401, action))
                    self._refuse()
                    return
                upstream = http.client.HTTPConnection(*gate._upstream, timeout=60)
                try:
                    headers = {
                        name: value
                        for name, value in self.headers.items()
                        if name.lower() not in HOP_BY_HOP
                    }
                    headers["Cookie"] = gate._session
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    payload = answer.read()
                    gate._record(Seen(self.command, self.path, bearer, answer.status, action))
                    self.send_response(answer.status)
                    for name, value in answer.getheaders():
                        if name.lower() not in HOP_BY_HOP:
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                finally:
                    upstream.close()

            def _refuse(self) -> None:
                # What MediaWiki's OAuth extension answers to a token it does not accept.
                payload = json.dumps(
                    {
                        "error": {
                            "code": "mwoauth-invalid-authorization",
                            "info": "The authorization headers in your request are not valid.",
                        }
                    }
                ).encode()
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Bearer error="invalid_token"')
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


@pytest.fixture(scope="module")
def issuer() -> Iterator[wikisuggest.Server]:
    """The reference server: the OAuth 2.0 server that issues the tokens and checks them."""
    with wikisuggest.Server(translation=ref.TRANSLATION, clients=ref.CLIENTS) as running:
        assert running.wikis == ()  # no link datasets: the translation and OAuth routes only
        yield running


@pytest.fixture(scope="module")
def gate(issuer: wikisuggest.Server, mediawiki: LocalWiki) -> Iterator[BearerGate]:
    """The local MediaWiki behind a gate: every good token is the bot user's."""
    bot = mediawiki.credentials["bot"]
    session = login_cookies(mediawiki.api_url, bot["user"], bot["password"])
    with BearerGate(mediawiki.url, issuer_check(issuer.url), session) as running:
        yield running


def stale_token_file(path: Path, access_token: str) -> wikisuggest.FileTokenStore:
    """A token file as a restarted bot finds it: an unexpired token the issuer does not know."""
    store = wikisuggest.FileTokenStore(path)
    now = time.time()
    store.save(
        {
            "token_type": "Bearer",
            "access_token": access_token,
            "expires_in": 14400,
            "obtained_at": now,
            "expires_at": now + 14400,
        }
    )
    return store
