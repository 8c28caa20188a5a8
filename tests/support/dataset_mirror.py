"""A loopback server that plays Wikimedia's two published dataset bases, with faults.

``/v2/`` and ``/legacy/`` are laid out as the real bases are: ``wikis.txt``, then
``<wiki>/lr_<wiki>_<table>.sql.gz``, ``<wiki>/<wiki>.linkmodel.json`` and a ``.checksum``
beside each. The content is the parity dataset the repository ships (enwiki), and copies of it
under other wiki ids (the tables renamed inside the dumps). Files answer ``HEAD`` and ``GET``
with ``Content-Length``, a strong ``ETag`` and ``Last-Modified``, and honour ``Range`` with
``If-Range`` as static file servers do.

Faults are armed per path and fire on the next ``GET`` requests: a connection cut after N
bytes, a ``200`` answer to a ``Range`` request, a ``206`` answer that starts elsewhere than
asked, corrupt bytes, a slow (or stalling) body, an error status with ``Retry-After``, a
redirect. Paths in ``unsized`` are answered without ``Content-Length`` (``HEAD`` included),
the body ending when the connection closes. Every request is recorded, with the body bytes
sent for it, so a test can say exactly what was downloaded.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from support.paths import REPO

ROOT = REPO
PARITY = ROOT / "tests" / "data" / "parity" / "datasets" / "enwiki"
TABLES = ("anchors", "redirects", "pageids", "w2vfiltered")
LAST_MODIFIED = "Tue, 04 Mar 2025 10:00:00 GMT"


def _gzip(data: bytes) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as f:
        f.write(data)
    return out.getvalue()


def dataset_files(wiki: str, *, model_suffix: bytes = b"") -> dict[str, bytes]:
    """The five published files of the parity dataset under the id ``wiki`` (the dumps'
    table names changed to match). ``model_suffix`` appended to the model JSON (whitespace)
    makes a different published version with the same model."""
    return dict(_dataset_files(wiki, model_suffix))


@functools.cache
def _dataset_files(wiki: str, model_suffix: bytes) -> tuple[tuple[str, bytes], ...]:
    files = {}
    for table in TABLES:
        data = (PARITY / f"lr_enwiki_{table}.sql.gz").read_bytes()
        if wiki != "enwiki":
            text = gzip.decompress(data).replace(b"`lr_enwiki_", f"`lr_{wiki}_".encode())
            data = _gzip(text)
        files[f"lr_{wiki}_{table}.sql.gz"] = data
    files[f"{wiki}.linkmodel.json"] = (PARITY / "enwiki.linkmodel.json").read_bytes() + model_suffix
    return tuple(files.items())


def checksum_line(name: str, data: bytes, relative: bool = False) -> bytes:
    """``shasum -a 256`` output; legacy files name a relative path of the old pipeline."""
    shown = f"../../data/{name}" if relative else name
    return f"{hashlib.sha256(data).hexdigest()}  {shown}\n".encode()


@dataclass
class Fault:
    """What the next matching ``GET`` answers of one path do wrong (``times`` of them)."""

    times: int = 1
    #: Close the connection after this many body bytes (the headers announce them all).
    cut_after: int | None = None
    #: Answer ``200`` with the whole file to a ``Range`` request.
    ignore_range: bool = False
    #: Answer a ``Range`` request with a ``206`` whose range starts half way to the byte asked
    #: for (the bytes from there, truthfully labelled).
    other_range: bool = False
    #: Flip the byte at this offset of the body.
    corrupt_at: int | None = None
    #: Send the body in chunks of this size, sleeping ``delay`` seconds before each.
    chunk: int | None = None
    delay: float = 0.0
    #: Go silent for this long after sending ``stall_after`` bytes.
    stall_after: int | None = None
    stall: float = 0.0
    #: Answer this status (and ``Retry-After`` if given) instead of the file.
    status: int | None = None
    retry_after: str | None = None
    #: Redirect (302) here.
    location: str | None = None


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    status: int = 0
    #: Body bytes written for this request.
    sent: int = 0


@dataclass
class Mirror:
    """The server. ``files`` maps paths (``v2/enwiki/…``) to their bytes."""

    files: dict[str, bytes] = field(default_factory=dict)
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    unsized: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None
    thread: threading.Thread | None = None
    #: While set, every request is recorded and its connection closed unanswered (as when
    #: the host is unreachable): tests of an offline mode check that nothing was asked.
    offline: bool = False

    @classmethod
    def standard(cls) -> Mirror:
        """Both bases: enwiki in v2 and (another version) in legacy, frwiki in legacy only
        (checksums with relative paths there), simplewiki listed in v2 only."""
        m = cls()
        m.publish("v2", "enwiki")
        m.publish("legacy", "enwiki", model_suffix=b"\n", relative=True)
        m.publish("legacy", "frwiki", relative=True)
        m.publish("v2", "simplewiki")
        m.set_index("v2", ["enwiki", "simplewiki"])
        m.set_index("legacy", ["enwiki", "frwiki", "not a valid line!"])
        return m

    def publish(
        self, base: str, wiki: str, *, model_suffix: bytes = b"", relative: bool = False
    ) -> None:
        for name, data in dataset_files(wiki, model_suffix=model_suffix).items():
            self.files[f"{base}/{wiki}/{name}"] = data
            self.files[f"{base}/{wiki}/{name}.checksum"] = checksum_line(name, data, relative)

    def withdraw(self, base: str, wiki: str) -> None:
        """Removes a wiki's files and its index line."""
        for path in [p for p in self.files if p.startswith(f"{base}/{wiki}/")]:
            del self.files[path]
        index = self.files.get(f"{base}/wikis.txt", b"").decode().split()
        self.set_index(base, [w for w in index if w != wiki])

    def set_index(self, base: str, wikis: list[str]) -> None:
        self.files[f"{base}/wikis.txt"] = "".join(f"{w}\n" for w in wikis).encode()

    def sha256(self, path: str) -> str:
        return hashlib.sha256(self.files[path]).hexdigest()

    def arm(self, path: str, fault: Fault) -> None:
        with self.lock:
            self.faults.setdefault(path, []).append(fault)

    def take_fault(self, path: str) -> Fault | None:
        with self.lock:
            queue = self.faults.get(path) or []
            if not queue:
                return None
            fault = queue[0]
            fault.times -= 1
            if fault.times <= 0:
                queue.pop(0)
            return fault

    def normalize(self, path: str) -> str:
        """The key of ``files`` a request path (without its leading ``/``) names."""
        return path

    def resolve(self, path: str) -> bytes | None:
        """The body served at ``path`` (``None``: 404)."""
        return self.files.get(path)

    def content_headers(self, path: str) -> list[tuple[str, str]]:
        # As some servers label .gz files: a client must not inflate them.
        headers = [("Content-Type", "application/gzip")]
        if path.endswith(".gz"):
            headers.append(("Content-Encoding", "gzip"))
        return headers

    def last_modified(self, path: str) -> str:
        return LAST_MODIFIED

    def url(self, base: str) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/{base}/"

    def gets(self, suffix: str = "") -> list[Request]:
        """The ``GET`` requests of files whose path ends with ``suffix`` (not checksums or
        indexes unless asked for)."""
        with self.lock:
            return [
                r
                for r in self.requests
                if r.method == "GET"
                and r.path.endswith(suffix)
                and (
                    suffix.endswith((".checksum", ".txt"))
                    or not r.path.endswith((".checksum", ".txt"))
                )
            ]

    def reset_log(self) -> None:
        with self.lock:
            self.requests.clear()

    def start(self) -> Mirror:
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self.answer(head=True)

            def do_GET(self) -> None:
                self.answer(head=False)

            def answer(self, head: bool) -> None:
                path = mirror.normalize(self.path.split("?", 1)[0].lstrip("/"))
                record = Request(
                    self.command, path, {k.lower(): v for k, v in self.headers.items()}
                )
                with mirror.lock:
                    mirror.requests.append(record)
                if mirror.offline:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                data = mirror.resolve(path)
                fault = None if head else mirror.take_fault(path)
                if fault is not None and fault.location is not None:
                    record.status = 302
                    self.send_response(302)
                    self.send_header("Location", fault.location)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if fault is not None and fault.status is not None:
                    record.status = fault.status
                    self.send_response(fault.status)
                    if fault.retry_after is not None:
                        self.send_header("Retry-After", fault.retry_after)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if data is None:
                    record.status = 404
                    body = b"not found\n"
                    self.send_response(404)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    if not head:
                        self.wfile.write(body)
                    return
                etag = '"' + hashlib.sha256(data).hexdigest()[:20] + '"'
                start = 0
                ranged = self.headers.get("Range")
                if_range = self.headers.get("If-Range")
                modified = mirror.last_modified(path)
                honoured = if_range is None or if_range in (etag, modified)
                if ranged and honoured and not (fault and fault.ignore_range):
                    start = int(ranged.removeprefix("bytes=").split("-")[0])
                    if fault and fault.other_range:
                        start //= 2
                if start >= len(data) and start > 0:
                    record.status = 416
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(data)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = data[start:]
                if fault and fault.corrupt_at is not None and fault.corrupt_at < len(body):
                    damaged = bytearray(body)
                    damaged[fault.corrupt_at] ^= 0xFF
                    body = bytes(damaged)
                record.status = 206 if start else 200
                self.send_response(record.status)
                for name, value in mirror.content_headers(path):
                    self.send_header(name, value)
                if path in mirror.unsized:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                else:
                    self.send_header("Content-Length", str(len(body)))
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", modified)
                self.send_header("Accept-Ranges", "bytes")
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if head:
                    return
                try:
                    self.send_body(body, fault, record)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            def send_body(self, body: bytes, fault: Fault | None, record: Request) -> None:
                if fault is None:
                    self.wfile.write(body)
                    record.sent += len(body)
                    return
                limit = len(body) if fault.cut_after is None else min(fault.cut_after, len(body))
                step = fault.chunk or 1 << 16
                sent = 0
                stalled = False
                while sent < limit:
                    if fault.delay:
                        time.sleep(fault.delay)
                    if fault.stall_after is not None and not stalled and sent >= fault.stall_after:
                        stalled = True
                        time.sleep(fault.stall)
                    piece = body[sent : min(limit, sent + step)]
                    self.wfile.write(piece)
                    self.wfile.flush()
                    sent += len(piece)
                    record.sent += len(piece)
                if limit < len(body):
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def serve_standard() -> Iterator[Mirror]:
    """A started standard mirror, stopped afterwards (for fixtures)."""
    mirror = Mirror.standard().start()
    try:
        yield mirror
    finally:
        mirror.stop()
