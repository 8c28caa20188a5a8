"""A local HTTP server that speaks the service contract with canned data, for client tests.

It listens on 127.0.0.1 on an ephemeral port, records every request it receives, and can be
scripted to answer the next requests with given statuses, headers, bodies, delays or dropped
connections (to test retries, timeouts and error mapping).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LINK_PREFIX = "/service/linkrecommendation/v1/linkrecommendations/"
TRANSLATION_PATH = "/service/lw/recommendation/api/v1/translation"
VALID_TOKEN = "valid-token-for-tests"
EXPIRED_TOKEN = "expired-token-for-tests"

CHECKSUMS = {
    "anchors": "a" * 64,
    "model": "b" * 64,
    "pageids": "c" * 64,
    "redirects": "d" * 64,
    "w2vfiltered": "e" * 64,
}


def link_set(title: str, pageid: int = 1, revid: int = 2, count: int = 2) -> dict[str, Any]:
    links = [
        {
            "context_after": " rodents a",
            "context_before": "s for ",
            "link_index": i,
            "link_target": f"Target {i}",
            "link_text": f"phrase {i}",
            "match_index": 0,
            "score": 0.5133472084999084,
            "wikitext_offset": 3334 + i,
        }
        for i in range(count)
    ]
    return {
        "links": links,
        "links_count": len(links),
        "meta": {
            "application_version": "af851cd",
            "dataset_checksums": CHECKSUMS,
            "format_version": 1,
        },
        "page_title": title,
        "pageid": pageid,
        "revid": revid,
    }


TRANSLATIONS = [
    {
        "title": "Douglas Adams",
        "pageviews": 0,
        "wikidata_id": "Q42",
        "rank": 1,
        "langlinks_count": 74,
    },
    {
        "title": "Towel Day",
        "pageviews": 0,
        "wikidata_id": "Q1319003",
        "rank": 2.0,
        "langlinks_count": 20,
    },
]


@dataclass
class Scripted:
    """One canned answer for the next request."""

    status: int = 200
    body: bytes | str | dict[str, Any] | list[Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False  # close the connection without answering
    held: bool = False  # answer only once the test opens the server's gate (or after 10 s)
    truncate: bool = False  # announce a longer body than is sent, then close


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    raw_query: str
    headers: dict[str, str]
    body: bytes


class ContractServer:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.script: deque[Scripted] = deque()
        self.translation_shape = "array"
        self.in_flight = 0
        self.max_in_flight = 0
        # Requests of earlier tests may still be running; they are not counted after a reset.
        self.generation = 0
        # Requests for the page "Held" wait until a test sets this (at most 10 s).
        self.gate = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> ContractServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.script.clear()
            self.translation_shape = "array"
            self.in_flight = 0
            self.max_in_flight = 0
            self.generation += 1
            self.gate.set()  # releases what an earlier test still holds
            self.gate = threading.Event()

    def then(self, *answers: Scripted) -> None:
        with self._lock:
            self.script.extend(answers)

    def _next_scripted(self) -> Scripted | None:
        with self._lock:
            return self.script.popleft() if self.script else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                raw_path, _, raw_query = self.path.partition("?")
                record = Recorded(
                    method=self.command,
                    path=raw_path,
                    query=urllib.parse.parse_qs(raw_query, keep_blank_values=True),
                    raw_query=raw_query,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                with server._lock:
                    server.requests.append(record)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    self.generation = server.generation
                    self.counted = True
                try:
                    scripted = server._next_scripted()
                    if scripted is None:
                        scripted = server._contract_answer(record)
                    self._answer(scripted)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout or cancellation): expected in these tests
                finally:
                    self._done()

            def _done(self) -> None:
                """Stop counting this request as in flight (once), before the client can see
                its answer, so that a client's next request never overlaps it in the count."""
                with server._lock:
                    if self.counted and self.generation == server.generation:
                        server.in_flight -= 1
                    self.counted = False

            def _answer(self, answer: Scripted) -> None:
                if answer.held:
                    server.gate.wait(10.0)
                if answer.delay:
                    time.sleep(answer.delay)
                self._done()
                if answer.drop:
                    self.close_connection = True
                    self.connection.close()
                    return
                payload = answer.body
                content_type = "application/json"
                if isinstance(payload, (dict, list)):
                    data = json.dumps(payload).encode()
                elif isinstance(payload, str):
                    data = payload.encode()
                    content_type = "text/html; charset=utf-8"
                else:
                    data = payload or b""
                self.send_response(answer.status)
                headers = {"Content-Type": content_type, **answer.headers}
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data) + (100 if answer.truncate else 0)))
                self.end_headers()
                self.wfile.write(data)
                if answer.truncate:
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.close()

        return Handler

    def _contract_answer(self, req: Recorded) -> Scripted:
        if req.path.startswith(LINK_PREFIX):
            return self._link_answer(req)
        if req.path == TRANSLATION_PATH:
            return self._translation_answer(req)
        return Scripted(404, {"httpCode": 404, "httpReason": "Not Found"})

    def _link_answer(self, req: Recorded) -> Scripted:
        parts = req.path[len(LINK_PREFIX) :].split("/", 2)
        if len(parts) != 3:
            return Scripted(404, {"httpCode": 404, "httpReason": "Not Found"})
        project, domain, raw_title = parts
        auth = req.headers.get("authorization", "")
        if auth == f"Bearer {EXPIRED_TOKEN}":
            return Scripted(
                401,
                {"httpCode": 401, "httpReason": "Jwt is expired"},
                {"WWW-Authenticate": 'Bearer realm="test", error="invalid_token"'},
            )
        if domain in ("xx", "yy"):
            status = 404 if domain == "xx" else 400
            return Scripted(
                status,
                {
                    "message": f"Unable to process request for {project}/{domain}",
                    "valid_project_domain_pairs": ["wikipedia/en", "wikipedia/simple"],
                },
            )
        title = urllib.parse.unquote(raw_title).replace("_", " ")
        if req.method == "POST":
            if auth != f"Bearer {VALID_TOKEN}":
                return Scripted(401, {"httpCode": 401, "httpReason": "Jwt is missing"})
            data = json.loads(req.body)
            return Scripted(200, link_set(title, data["pageid"], data["revid"]))
        if title == "Missing page":
            return Scripted(404, {"message": f"Page not found: {urllib.parse.unquote(raw_title)}"})
        return Scripted(200, link_set(title), held=title == "Held")

    def _translation_answer(self, req: Recorded) -> Scripted:
        missing = [
            {"type": "missing", "loc": ["query", name], "msg": "Field required", "input": None}
            for name in ("source", "target")
            if name not in req.query
        ]
        if missing:
            return Scripted(422, {"detail": missing})
        count = int(req.query.get("count", ["12"])[0])
        items = TRANSLATIONS[:count]
        if self.translation_shape == "envelope":
            return Scripted(
                200, {"recommendations": items, "continue_offset": None, "continue_seed": None}
            )
        return Scripted(200, items)
