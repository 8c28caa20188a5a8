"""Reference-server benchmark: POST link recommendations for the real articles of the gensim
enwiki sample, against the engine's own ``recommend_many`` on the same articles, in one run.

The server (``python -m wikisuggest serve``, two worker threads) runs in its own process with
the enwiki datasets of ``tests/data/parity/datasets``; this process sends every article of the
sample (106 real articles, 5.7 M characters of wikitext) round-robin at a fixed concurrency
and reports requests per second and p50/p99 latency. In the same run the same process runs
``LinkEngine.recommend_many`` on two workers over the same requests. The two take turns over
``--rounds`` rounds (which goes first alternates), and each round is one pair: the engine's
pass and the server's pass right after or before it, under the same machine load. Every
figure comes from whole rounds: the ratio of each round's pair, the median of those ratios
and their range, and the other figures of the round whose ratio is the median (never the
least CPU one side took in one round set against the other side's least of another).

The ratio that counts is per CPU second: the engine's CPU seconds for the pages against the
server's CPU seconds plus the load generator's (both share the machine's cores), all threads
of each process, user and system time. The wall-clock ratio is printed beside it.

The load generator is lean by default (``--load raw``): one thread per connection writing
requests built once up front on keep-alive sockets and reading the answers, so that on two
cores it takes as little CPU as possible from the server it measures (its CPU is reported).
``--load client`` sends with ``wikisuggest.AsyncClient`` instead. ``--baseline DIR`` serves
the same requests from a second server run from another build of the package in ``DIR`` (a
folder holding a ``wikisuggest`` package), in the same rounds, and prints the two servers'
CPU per request side by side. The sample comes from the gensim 4.4.0 wheel on PyPI
(downloaded once into ``bench/out/``, sha256-verified).

Run ``bash bench/run server`` (dist build), or ``python bench/server_links.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import bz2
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path

from articles import ROOT, gensim_excerpt

import wikisuggest

OUT = ROOT / "bench" / "out"
USER_AGENT = "wikisuggest-bench/1.0 (https://example.org/wikisuggest-bench; bench@example.org)"
TOKEN = "example-personal-api-token-0001"


def sample() -> Path:
    """The enwiki excerpt in gensim's wheel, as a file (see ``bench/articles.py``)."""
    target = OUT / "enwiki-sample.xml.bz2"
    OUT.mkdir(parents=True, exist_ok=True)
    target.write_bytes(gensim_excerpt())
    return target


def articles(path: Path) -> list[tuple[str, int, int, str]]:
    """(title, pageid, revid, wikitext) of the articles (namespace 0, not redirects)."""
    found = []
    with bz2.open(path) as stream:
        for _, element in ET.iterparse(stream):
            if not element.tag.endswith("}page"):
                continue
            ns = {"m": element.tag[: -len("page")].strip("{}")}
            redirect = element.find("m:redirect", ns) is not None
            if element.findtext("m:ns", namespaces=ns) == "0" and not redirect:
                found.append(
                    (
                        element.findtext("m:title", namespaces=ns) or "",
                        int(element.findtext("m:id", namespaces=ns) or 0),
                        int(element.findtext("m:revision/m:id", namespaces=ns) or 0),
                        element.findtext("m:revision/m:text", namespaces=ns) or "",
                    )
                )
            element.clear()
    return found


Article = tuple[str, int, int, str]
DATASETS = ROOT / "tests/data/parity/datasets"
PATH = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/"


def _process_cpu(pid: int) -> float:
    """User + system CPU seconds of every thread of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Round:
    """What one timed pass measured: wall seconds, latencies, links, CPU seconds by side."""

    def __init__(self, wall: float, latencies: list[float], links: int, cpu: dict[str, float]):
        self.wall, self.latencies, self.links, self.cpu = wall, sorted(latencies), links, cpu


def engine_round(engine: wikisuggest.LinkEngine, pages: list[Article], total: int) -> Round:
    """``recommend_many`` on two workers over the requests the server gets, in their order."""
    from wikisuggest.engine import Page

    batch = [
        Page(text, title, pageid=pageid, revid=revid)
        for title, pageid, revid, text in (pages[i % len(pages)] for i in range(total))
    ]
    cpu, started = time.process_time(), time.perf_counter()
    # A batch runs when it is first read: wait for it inside the timed span.
    results = engine.recommend_many(batch, workers=2).wait()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    links = sum(len(item.unwrap().links) for item in results)
    return Round(wall, [], links, {"engine": cpu})


def raw_requests(url: str, pages: list[Article]) -> tuple[tuple[str, int], list[bytes]]:
    """Every article's whole HTTP/1.1 request, built once (the load generator then only
    writes bytes), and the server's address."""
    parsed = urllib.parse.urlsplit(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 80
    built = []
    for title, pageid, revid, text in pages:
        body = json.dumps({"wikitext": text, "revid": revid, "pageid": pageid}).encode()
        target = PATH + urllib.parse.quote(title.replace(" ", "_"), safe="")
        head = (
            f"POST {target}?threshold=0.5&max_recommendations=15 HTTP/1.1\r\n"
            f"Host: {host}:{port}\r\nUser-Agent: {USER_AGENT}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        built.append(head.encode() + body)
    return (host, port), built


def _exchange(conn: socket.socket, request: bytes, pending: bytearray) -> bytes:
    """Send one request on a keep-alive connection and return its body (status 200 only)."""
    conn.sendall(request)
    while (end := pending.find(b"\r\n\r\n")) < 0:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        pending += chunk
    head = bytes(pending[:end]).decode("latin-1").split("\r\n")
    if head[0].split(" ", 2)[1] != "200":
        raise RuntimeError(f"server answered {head[0]}: {bytes(pending[end:])[:300]!r}")
    length = next(
        int(line.split(":", 1)[1]) for line in head if line.lower().startswith("content-length:")
    )
    del pending[: end + 4]
    while len(pending) < length:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        pending += chunk
    body = bytes(pending[:length])
    del pending[:length]
    return body


def raw_round(
    address: tuple[str, int], requests: list[bytes], total: int, workers: int, server: int
) -> Round:
    """``workers`` threads, one keep-alive connection each, sending request ``i % len`` for
    i in 0..total; every answer is decoded to count its links."""
    latencies: list[float] = []
    links: list[int] = []  # one total per thread (`+=` on a shared one could lose updates)
    counter = iter(range(total))
    lock = threading.Lock()
    failures: list[BaseException] = []

    def worker() -> None:
        found = 0
        try:
            with socket.create_connection(address) as conn:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                pending = bytearray()
                while True:
                    with lock:
                        i = next(counter, None)
                    if i is None:
                        break
                    started = time.perf_counter()
                    body = _exchange(conn, requests[i % len(requests)], pending)
                    latencies.append(time.perf_counter() - started)
                    found += len(json.loads(body)["links"])
        except BaseException as err:  # reported by the caller
            failures.append(err)
        links.append(found)

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    cpu, server_cpu, started = time.process_time(), _process_cpu(server), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    cpu = {"server": _process_cpu(server) - server_cpu, "load": time.process_time() - cpu}
    if failures:
        raise failures[0]
    return Round(wall, latencies, sum(links), cpu)


def client_round(url: str, pages: list[Article], total: int, workers: int, server: int) -> Round:
    """The same load sent with ``wikisuggest.AsyncClient`` (records decoded)."""

    async def run() -> tuple[float, list[float], int]:
        client = wikisuggest.AsyncClient(
            USER_AGENT,
            base_url=url,
            auth=TOKEN,
            max_retries=0,
            max_concurrency=workers,
            timeout=120,
        )
        latencies: list[float] = []
        links = 0
        counter = iter(range(total))

        async def worker() -> None:
            nonlocal links
            for i in counter:
                title, pageid, revid, text = pages[i % len(pages)]
                started = time.perf_counter()
                result = await client.link_recommendations_for_revision(
                    "wikipedia", "en", title, wikitext=text, revid=revid, pageid=pageid
                )
                latencies.append(time.perf_counter() - started)
                links += result.links_count or 0

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(workers)))
        return time.perf_counter() - started, latencies, links

    cpu, server_cpu = time.process_time(), _process_cpu(server)
    wall, latencies, links = asyncio.run(run())
    cpu_used = {"server": _process_cpu(server) - server_cpu, "load": time.process_time() - cpu}
    return Round(wall, latencies, links, cpu_used)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _by_cpu(engine: Round, served: Round) -> float:
    """The engine's CPU for the pages over the server's and the load generator's."""
    return engine.cpu["engine"] / (served.cpu["server"] + served.cpu["load"])


def _server_command(threads: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "wikisuggest",
        "serve",
        "--port",
        "0",
        "--datasets",
        str(DATASETS),
        "--clients",
        str(ROOT / "examples/clients.toml"),
        "--rate-limit",
        "1000000000",
        "--threads",
        str(threads),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1060, help="10 rounds of the sample")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5, help="server and engine take turns")
    parser.add_argument("--threads", type=int, default=2, help="the server's worker threads")
    parser.add_argument(
        "--load", choices=["raw", "client"], default="raw", help="the load generator"
    )
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="a folder holding another build of the wikisuggest package: its server is "
        "measured in the same rounds, for a paired comparison",
    )
    args = parser.parse_args()
    pages = articles(sample())
    chars = sum(len(p[3]) for p in pages)
    engine = wikisuggest.LinkEngine.open(DATASETS / "enwiki", "enwiki")
    names = ["server"] + (["baseline"] if args.baseline else [])
    load_before = round(os.getloadavg()[0], 1)
    servers: dict[str, subprocess.Popen[str]] = {}
    rounds: list[dict[str, Round]] = []
    try:
        for name in names:
            env = dict(os.environ)
            if name == "baseline":
                env["PYTHONPATH"] = os.pathsep.join(
                    filter(None, [args.baseline, env.get("PYTHONPATH")])
                )
            servers[name] = subprocess.Popen(
                _server_command(args.threads), stdout=subprocess.PIPE, text=True, env=env
            )
        urls = {}
        for name, server in servers.items():
            assert server.stdout is not None
            urls[name] = server.stdout.readline().strip().removeprefix("Serving on ")

        def serve_round(name: str, total: int) -> Round:
            url, pid = urls[name], servers[name].pid
            if args.load == "raw":
                address, requests = raw_requests(url, pages)
                return raw_round(address, requests, total, args.concurrency, pid)
            return client_round(url, pages, total, args.concurrency, pid)

        for name in names:  # warm-up: page cache, connections, allocator
            serve_round(name, len(pages))
        engine_round(engine, pages, len(pages))
        for i in range(args.rounds):
            measured: dict[str, Round] = {}
            # Alternate which side goes first, so neither always follows the other.
            order = ["engine", *names] if i % 2 == 0 else [*names[::-1], "engine"]
            for name in order:
                if name == "engine":
                    measured[name] = engine_round(engine, pages, args.requests)
                else:
                    measured[name] = serve_round(name, args.requests)
            rounds.append(measured)
    finally:
        for server in servers.values():
            server.send_signal(signal.SIGINT)
        for server in servers.values():
            server.wait(timeout=60)
    load_after = round(os.getloadavg()[0], 1)
    for measured in rounds:
        for name in names:
            if measured[name].links != measured["engine"].links:
                raise SystemExit(
                    f"the {name} found {measured[name].links} links, "
                    f"the engine {measured['engine'].links}"
                )
    ratios = [_by_cpu(r["engine"], r["server"]) for r in rounds]
    median = _median(ratios)
    chosen = rounds[ratios.index(median)]
    served, own = chosen["server"], chosen["engine"]
    latencies = served.latencies
    pct = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    per_request = lambda seconds: round(seconds / args.requests * 1000, 3)  # noqa: E731
    report: dict[str, object] = {
        "articles": len(pages),
        "mean_article_chars": round(chars / len(pages)),
        "requests": args.requests,
        "concurrency": args.concurrency,
        "load_generator": args.load,
        "rounds": args.rounds,
        "cpus": os.cpu_count(),
        # The machine's 1-minute load average before and after the rounds.
        "load_average": [load_before, load_after],
        # Per CPU second, each round's pair; the median, the range, and the median
        # round's other figures.
        "server_vs_recommend_many_by_cpu": round(median, 3),
        "server_vs_recommend_many_by_cpu_rounds": [round(r, 3) for r in ratios],
        "server_vs_recommend_many_by_cpu_range": [round(min(ratios), 3), round(max(ratios), 3)],
        "server_cpu_ms_per_request": per_request(served.cpu["server"]),
        "load_generator_cpu_ms_per_request": per_request(served.cpu["load"]),
        "engine_cpu_ms_per_page": per_request(own.cpu["engine"]),
        "server_requests_per_second": round(args.requests / served.wall, 1),
        "engine_recommend_many_pages_per_second": round(args.requests / own.wall, 1),
        "server_vs_recommend_many": round(own.wall / served.wall, 3),
        "server_vs_recommend_many_rounds": [
            round(r["engine"].wall / r["server"].wall, 3) for r in rounds
        ],
        "p50_ms": round(pct(0.50), 2),
        "p99_ms": round(pct(0.99), 2),
        "links_per_article": round(served.links / args.requests, 2),
    }
    if args.baseline:
        paired = [r["server"].cpu["server"] / r["baseline"].cpu["server"] for r in rounds]
        report["baseline_vs_recommend_many_by_cpu_rounds"] = [
            round(_by_cpu(r["engine"], r["baseline"]), 3) for r in rounds
        ]
        report["server_cpu_vs_baseline_rounds"] = [round(p, 3) for p in paired]
        report["server_cpu_vs_baseline"] = round(_median(paired), 3)
        report["baseline_cpu_ms_per_request_rounds"] = [
            per_request(r["baseline"].cpu["server"]) for r in rounds
        ]
        report["server_cpu_ms_per_request_rounds"] = [
            per_request(r["server"].cpu["server"]) for r in rounds
        ]
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
