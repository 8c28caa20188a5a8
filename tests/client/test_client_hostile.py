"""The client against a server that misbehaves on purpose.

A small raw-socket server (below) answers each scenario the way a broken or hostile server
might: bodies without end, gzip that inflates without end, error bodies that echo the
request's credentials, absurd token lifetimes, connections dropped mid-body, answers that
trickle in. Every case must end in a typed exception, with bounded memory, and with no
credential in any text the client produces (messages, attributes, reprs, log records).
"""

from __future__ import annotations

import functools
import gzip
import json
import logging
import os
import resource
import socket
import socketserver
import struct
import subprocess
import sys
import textwrap
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.oauth_server import USER_AGENT, WEBAPP_SECRET, OAuthTestServer

import wikisuggest
from wikisuggest import FileTokenStore, Token, TokenManager

LINKS = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/"
TOKEN_PATH = "/w/rest.php/oauth2/access_token"
BEARER = "hostile-test-bearer-0123456789abcdef"
CLIENT_SECRET = "hostile-test-client-secret-fedcba9876543210"
MIB = 1024 * 1024

Reply = Callable[[socket.socket, bytes], None]


def _json(status: int, body: Any, extra: str = "") -> bytes:
    data = json.dumps(body).encode()
    head = (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n{extra}\r\n"
    )
    return head.encode() + data


def _endless(sock: socket.socket, request: bytes) -> None:
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    sock.sendall(b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    chunk = b"[" + b"0," * 32_767
    framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    while True:  # until the client hangs up
        sock.sendall(framed)


@functools.cache
def gzip_bomb(total_mib: int) -> bytes:
    """One gzip member inflating to `total_mib` MiB of zeros, about a thousandth of that in
    size. Built from one compressed MiB repeated: after a full flush the compressor's state is
    reset, so every following MiB of zeros compresses to the same bytes."""
    zeros = bytes(MIB)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    unit = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(total_mib):
        crc = zlib.crc32(zeros, crc)
    # An empty final block, then the CRC-32 and length of everything inflated.
    trailer = b"\x03\x00" + struct.pack("<II", crc, (total_mib * MIB) & 0xFFFFFFFF)
    return first + unit * (total_mib - 1) + trailer


def _bomb(sock: socket.socket, request: bytes) -> None:
    bomb = gzip_bomb(1024)  # 1 GiB inflated
    sock.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
        + f"Content-Length: {len(bomb)}\r\nConnection: close\r\n\r\n".encode()
    )
    sock.sendall(bomb)


def _too_long_declared(sock: socket.socket, request: bytes) -> None:
    sock.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1099511627776\r\nConnection: close\r\n\r\n{"
    )


def _echoed_headers(request: str) -> str:
    """Response headers repeating the request's Authorization value, if it had one."""
    for line in request.split("\r\n"):
        name, _, value = line.partition(":")
        if name.lower() == "authorization":
            value = value.strip()
            return (
                f"X-Request-Id: {value}\r\n"
                f'WWW-Authenticate: Bearer error="invalid_token", error_description="{value}"\r\n'
            )
    return ""


def _echo(status: int, as_json: bool) -> Reply:
    """An error body quoting the whole request back: headers (with the bearer) and form."""

    def reply(sock: socket.socket, request: bytes) -> None:
        text = request.decode("latin-1")
        if as_json:
            body = {
                "error": "invalid_client",
                "error_description": f"you sent {text}",
                "hint": text,
                "httpReason": f"Echo {text}",
                "echo": {text: [text]},
            }
            sock.sendall(_json(status, body, extra=_echoed_headers(text)))
        else:
            data = f"<html><body><pre>{text}</pre></body></html>".encode()
            sock.sendall(
                f"HTTP/1.1 {status} X\r\nContent-Type: text/html\r\n"
                f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
                + data
            )

    return reply


def _echo_success(sock: socket.socket, request: bytes) -> None:
    # The credential first, so that it falls inside the quoted start of the body.
    data = ("not json: " + _echoed_headers(request.decode("latin-1"))).encode() + request
    sock.sendall(
        f"HTTP/1.1 200 OK\r\nContent-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
        + data
    )


def _expires(value: str) -> Reply:
    def reply(sock: socket.socket, request: bytes) -> None:
        data = (
            '{"token_type": "Bearer", "access_token": "at-huge", "refresh_token": "rt-huge", '
            f'"expires_in": {value}}}'
        ).encode()
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )

    return reply


def _dropped(sock: socket.socket, request: bytes) -> None:
    sock.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000\r\nConnection: close\r\n\r\n[1, 2, 3"
    )


def _trickle(sock: socket.socket, request: bytes) -> None:
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
    sock.sendall(b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    while True:
        sock.sendall(b"1\r\n \r\n")
        time.sleep(0.2)


class HostileServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.routes: dict[str, Reply] = {}
        self.requests: list[bytes] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(socketserver.BaseRequestHandler):
    server: HostileServer

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data:
            piece = sock.recv(65536)
            if not piece:
                return
            data += piece
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            body += sock.recv(65536)
        request = head + b"\r\n\r\n" + body
        self.server.requests.append(request)
        path = head.split(b" ")[1].decode().split("?")[0]
        reply = self.server.routes.get(path)
        try:
            if reply is None:
                sock.sendall(_json(404, {"detail": "no such scenario"}))
            else:
                reply(sock, request)
        except OSError:
            pass  # the client hung up, as it should


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    server = HostileServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


def client(server: HostileServer, **options: Any) -> wikisuggest.Client:
    settings: dict[str, Any] = {"max_retries": 0, "timeout": 10.0}
    settings.update(options)
    return wikisuggest.Client(USER_AGENT, base_url=server.url, auth_url=server.url, **settings)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def texts_of(error: BaseException) -> list[str]:
    """Every text a caller or a log could show of an exception."""
    found = [str(error), repr(error), repr(vars(error))]
    for name in ("body", "detail", "reason", "snippet", "hint", "error_description", "url"):
        found.append(repr(getattr(error, name, None)))
    found.append(repr(getattr(error, "headers", None)))
    return found


# -- bodies without bound ----------------------------------------------------------------


def test_endless_chunked_body_stops_at_the_limit(hostile: HostileServer) -> None:
    hostile.routes[LINKS + "Endless"] = _endless
    before = peak_rss_mib()
    with pytest.raises(wikisuggest.ResponseTooLarge) as info:
        client(hostile, max_body_size=8 * MIB).link_recommendations("wikipedia", "en", "Endless")
    assert isinstance(info.value, wikisuggest.TransportError)
    assert info.value.limit == 8 * MIB
    assert "max_body_size" in str(info.value)
    assert peak_rss_mib() - before < 256


def test_gzip_bomb_is_counted_after_inflation(hostile: HostileServer) -> None:
    hostile.routes[LINKS + "Bomb"] = _bomb
    before = peak_rss_mib()
    # The default limit (64 MiB): the 1 GiB the body inflates to is never held.
    with pytest.raises(wikisuggest.ResponseTooLarge) as info:
        client(hostile).link_recommendations("wikipedia", "en", "Bomb")
    assert info.value.limit == 64 * MIB
    assert peak_rss_mib() - before < 512
    assert len(gzip_bomb(1024)) < 2 * MIB


def test_the_bomb_is_a_valid_gzip_stream() -> None:
    assert gzip.decompress(gzip_bomb(3)) == bytes(3 * MIB)


def test_declared_length_over_the_limit_fails_before_reading(hostile: HostileServer) -> None:
    hostile.routes[LINKS + "Declared"] = _too_long_declared
    with pytest.raises(wikisuggest.ResponseTooLarge):
        client(hostile).link_recommendations("wikipedia", "en", "Declared")


@pytest.mark.parametrize("bad", [0, -1, 2**70, 1.5])
def test_max_body_size_is_validated(bad: Any) -> None:
    with pytest.raises(wikisuggest.InvalidParameter):
        wikisuggest.Client(USER_AGENT, base_url="http://127.0.0.1:9", max_body_size=bad)


# -- connections that break or trickle -----------------------------------------------------


def test_dropped_connection_is_a_transport_error(hostile: HostileServer) -> None:
    hostile.routes[LINKS + "Dropped"] = _dropped
    with pytest.raises(wikisuggest.TransportError) as info:
        client(hostile).link_recommendations("wikipedia", "en", "Dropped")
    assert not isinstance(info.value, wikisuggest.ResponseTooLarge)


def test_trickling_answer_times_out(hostile: HostileServer) -> None:
    hostile.routes[LINKS + "Trickle"] = _trickle
    with pytest.raises(wikisuggest.Timeout):
        client(hostile, timeout=1.0).link_recommendations("wikipedia", "en", "Trickle")


# -- echoed secrets -----------------------------------------------------------------------


@pytest.mark.parametrize("as_json", [True, False])
@pytest.mark.parametrize("status", [400, 401, 500])
def test_service_error_echoing_the_bearer_is_redacted(
    hostile: HostileServer, caplog: pytest.LogCaptureFixture, status: int, as_json: bool
) -> None:
    hostile.routes[LINKS + "Echo"] = _echo(status, as_json)
    caplog.set_level(logging.DEBUG, logger="wikisuggest")
    with pytest.raises(wikisuggest.HTTPError) as info:
        client(hostile, auth=BEARER).link_recommendations("wikipedia", "en", "Echo")
    assert any(BEARER.encode() in r for r in hostile.requests)  # it really was echoed
    for text in [*texts_of(info.value), caplog.text]:
        assert BEARER not in text
    assert "***" in str(info.value.body)


@pytest.mark.parametrize("as_json", [True, False])
def test_token_error_echoing_the_client_secret_is_redacted(
    hostile: HostileServer, caplog: pytest.LogCaptureFixture, as_json: bool
) -> None:
    hostile.routes[TOKEN_PATH] = _echo(400 if as_json else 502, as_json)
    caplog.set_level(logging.DEBUG, logger="wikisuggest")
    with pytest.raises(wikisuggest.HTTPError) as info:
        client(hostile).client_credentials("bot", CLIENT_SECRET)
    assert any(CLIENT_SECRET.encode() in r for r in hostile.requests)
    for text in [*texts_of(info.value), caplog.text]:
        assert CLIENT_SECRET not in text


@pytest.mark.parametrize("padding", [1980, 180])
def test_secret_straddling_the_quoted_length_is_not_left_half(
    hostile: HostileServer, padding: int
) -> None:
    # A text body is kept to its first 2000 characters and quoted to 200: a secret cut in
    # two by either limit must not leave its first half behind.
    def reply(sock: socket.socket, request: bytes) -> None:
        data = ("x" * padding + BEARER + " end").encode()
        sock.sendall(
            f"HTTP/1.1 400 X\r\nContent-Type: text/plain\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )

    hostile.routes[LINKS + "Cut"] = reply
    with pytest.raises(wikisuggest.HTTPError) as info:
        client(hostile, auth=BEARER).link_recommendations("wikipedia", "en", "Cut")
    for text in texts_of(info.value):
        assert BEARER[:12] not in text


def test_success_body_echoing_the_bearer_is_redacted(hostile: HostileServer) -> None:
    hostile.routes[LINKS + "EchoOk"] = _echo_success
    with pytest.raises(wikisuggest.DecodeError) as info:
        client(hostile, auth=BEARER).link_recommendations("wikipedia", "en", "EchoOk")
    assert info.value.snippet
    for text in texts_of(info.value):
        assert BEARER not in text


def test_refresh_error_echoing_the_refresh_token_is_redacted(
    hostile: HostileServer, caplog: pytest.LogCaptureFixture
) -> None:
    hostile.routes[TOKEN_PATH] = _echo(400, True)
    refresh = "rt-hostile-0123456789abcdefghij"
    manager = TokenManager.from_refresh_token(
        refresh, "webapp", CLIENT_SECRET, auth_url=hostile.url, user_agent=USER_AGENT
    )
    caplog.set_level(logging.DEBUG, logger="wikisuggest")
    with pytest.raises(wikisuggest.WikisuggestError) as info:
        manager.token()
    for text in [*texts_of(info.value), caplog.text]:
        assert refresh not in text and CLIENT_SECRET not in text


# -- absurd token lifetimes -----------------------------------------------------------------


@pytest.mark.parametrize("value", ["1e19", "1e20", "18446744073709551615", '"1e300"'])
def test_huge_expires_in_saturates(hostile: HostileServer, value: str) -> None:
    hostile.routes[TOKEN_PATH] = _expires(value)
    token = client(hostile).client_credentials("bot", CLIENT_SECRET)
    assert token.expires_in == 10 * 365 * 24 * 3600
    assert token.expires_at is not None and token.expires_at.year < 9999
    assert not token.is_expired()
    manager = TokenManager.client_credentials(
        "bot", CLIENT_SECRET, auth_url=hostile.url, user_agent=USER_AGENT
    )
    assert manager.token().access_token == "at-huge"


@pytest.mark.parametrize(
    "stored",
    [
        {"obtained_at": 1e19, "expires_at": 1e20, "expires_in": 2**64 - 1},
        {"obtained_at": -1e300, "expires_at": None, "expires_in": 2**64 - 1},
        {"obtained_at": 1e308, "expires_in": 5},
    ],
)
def test_out_of_range_times_in_a_token_store(tmp_path: Path, stored: dict[str, Any]) -> None:
    path = tmp_path / "token.json"
    path.write_text(json.dumps({"access_token": "at-x", "refresh_token": "rt-x", **stored}))
    loaded = FileTokenStore(path).load()
    assert loaded is not None
    Token.from_dict(loaded)
    manager = TokenManager.from_refresh_token(
        None,
        "webapp",
        auth_url="http://127.0.0.1:9",
        store=FileTokenStore(path),
        user_agent=USER_AGENT,
    )
    try:
        token = manager.token()
    except wikisuggest.TransportError:
        return  # judged expired and renewal attempted: typed, no panic
    assert token.expires_at is None or token.expires_at.year <= 9999


def test_token_store_parse_error_does_not_quote_the_file(tmp_path: Path) -> None:
    path = tmp_path / "token.json"
    for content in [
        '{"access_token": "a", "expires_in": "SECRET-IN-FILE"}',
        '{"access_token": ["SECRET-IN-FILE"]}',
        '"SECRET-IN-FILE"',
    ]:
        path.write_text(content)
        with pytest.raises(wikisuggest.WikisuggestError) as info:
            FileTokenStore(path).load()
        assert "SECRET-IN-FILE" not in str(info.value)
        assert "token.json" in str(info.value)
    with pytest.raises(wikisuggest.InvalidParameter) as bad:
        Token.from_dict({"access_token": "a", "expires_in": "SECRET-IN-FILE"})
    assert "SECRET-IN-FILE" not in str(bad.value)


# -- clear-text credentials ------------------------------------------------------------------


def test_credentials_are_not_sent_over_plain_http_to_a_remote_host() -> None:
    with pytest.raises(wikisuggest.ConfigurationError) as info:
        wikisuggest.Client(USER_AGENT, base_url="http://example.invalid", auth=BEARER)
    assert "allow_insecure_http" in str(info.value)
    assert BEARER not in str(info.value)
    opted_in = wikisuggest.Client(
        USER_AGENT, base_url="http://example.invalid", auth=BEARER, allow_insecure_http=True
    )
    assert opted_in.base_url == "http://example.invalid"
    # Loopback is this machine: allowed without opting in.
    wikisuggest.Client(USER_AGENT, base_url="http://127.0.0.1:9", auth=BEARER)
    wikisuggest.Client(USER_AGENT, base_url="http://localhost:9", auth=BEARER)
    # The token endpoint always receives a credential.
    plain = wikisuggest.Client(
        USER_AGENT, base_url="https://example.invalid", auth_url="http://example.invalid"
    )
    with pytest.raises(wikisuggest.ConfigurationError):
        plain.client_credentials("bot", CLIENT_SECRET)
    manager = TokenManager.client_credentials(
        "bot", CLIENT_SECRET, auth_url="http://127.0.0.1.example.invalid", user_agent=USER_AGENT
    )
    with pytest.raises(wikisuggest.ConfigurationError):
        manager.token()


def test_redirect_uri_with_user_info_is_refused() -> None:
    with pytest.raises(wikisuggest.InvalidParameter):
        wikisuggest.authorization_url(
            "app", redirect_uri="http://127.0.0.1:80@evil.example/callback"
        )


# -- one refresh for two processes sharing a token file ---------------------------------------

_REFRESHER = textwrap.dedent(
    """
    import sys, time
    from wikisuggest import FileTokenStore, TokenManager
    auth_url, path, secret, user_agent, start = sys.argv[1:6]
    manager = TokenManager.from_refresh_token(
        None, "webapp", secret, auth_url=auth_url, store=FileTokenStore(path),
        user_agent=user_agent,
    )
    time.sleep(max(0.0, float(start) - time.time()))
    print(manager.token().access_token)
    """
)


def test_two_processes_sharing_a_token_file_refresh_once(tmp_path: Path) -> None:
    server = OAuthTestServer().start()
    try:
        with server.lock:
            issued = server._issue("webapp", with_refresh=True)
        path = tmp_path / "shared.json"
        now = time.time()
        stale = {
            "token_type": "Bearer",
            "access_token": issued["access_token"],
            "refresh_token": issued["refresh_token"],
            "expires_in": 60,
            "obtained_at": now - 3600,
            "expires_at": now - 3540,
        }
        FileTokenStore(path).save(stale)
        # Each refresh takes a while: without a lock both processes would be in flight with
        # the same refresh token at once.
        server.token_delay = 1.0
        start = str(time.time() + 3.0)
        args = [server.url, str(path), WEBAPP_SECRET, USER_AGENT, start]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        runs = [
            subprocess.Popen(
                [sys.executable, "-c", _REFRESHER, *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for _ in range(2)
        ]
        outputs = [run.communicate(timeout=60) for run in runs]
        for run, (_, err) in zip(runs, outputs, strict=True):
            assert run.returncode == 0, err
        tokens = {out.strip() for out, _ in outputs}
        assert len(tokens) == 1, tokens
        assert server.grant_counts["refresh_token"] == 1
        saved = FileTokenStore(path).load()
        assert saved is not None and saved["access_token"] in tokens
    finally:
        server.stop()


def test_gzip_body_is_still_read_when_small(hostile: HostileServer) -> None:
    body = json.dumps({"links": [], "links_count": 0, "page_title": "Small"}).encode()
    packed = gzip.compress(body)

    def reply(sock: socket.socket, request: bytes) -> None:
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
            + f"Content-Length: {len(packed)}\r\nConnection: close\r\n\r\n".encode()
            + packed
        )

    hostile.routes[LINKS + "Small"] = reply
    result = client(hostile, max_body_size=len(body)).link_recommendations(
        "wikipedia", "en", "Small"
    )
    assert list(result.links) == [] and result.page_title == "Small"
