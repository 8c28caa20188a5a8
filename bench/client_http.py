"""Client benchmark: 10,000 link-recommendation requests against a local static server.

Compares wikisuggest (blocking batch, asyncio batch, and asyncio single calls gathered) with
the Python baselines aiohttp (asyncio),
httpx (asyncio) and requests (threads), all at the same concurrency, all decoding the JSON
body. Each client runs in its own process; we report wall time, client CPU seconds per 1,000
requests (user + system, all threads of that process, counted from after the interpreter
started and imported the client: start-up is paid once per process, not per request, and is
reported apart) and peak RSS, and the ratios against aiohttp. The clients take turns for
``--rounds`` rounds and each keeps its best round: on a shared machine the load changes from
one second to the next, and interleaving exposes every client to the same conditions.

The server is nginx (Debian's ``nginx-light``) serving a realistic 15-link response from
memory on 127.0.0.1, so it is not the limit. Run ``bash bench/run client`` (installs what is
missing), or ``python bench/client_http.py`` when nginx and the baselines are installed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

USER_AGENT = "wikisuggest-bench/1.0 (https://example.org/wikisuggest-bench; bench@example.org)"
PATH = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/"
CLIENTS = [
    "wikisuggest",
    "wikisuggest-async",
    "wikisuggest-async-calls",
    "aiohttp",
    "httpx",
    "requests",
]


def response_body() -> bytes:
    links = [
        {
            "context_after": " in the e",
            "context_before": "stronomy, ",
            "link_index": i,
            "link_target": f"Target article number {i}",
            "link_text": f"anchor text {i}",
            "match_index": 0,
            "score": 0.7511147260665894,
            "wikitext_offset": 1000 + 97 * i,
        }
        for i in range(15)
    ]
    body = {
        "links": links,
        "links_count": 15,
        "meta": {
            "application_version": "af851cd",
            "dataset_checksums": {
                k: "0" * 64 for k in ("anchors", "model", "pageids", "redirects", "w2vfiltered")
            },
            "format_version": 1,
        },
        "page_title": "Bench page",
        "pageid": 12,
        "revid": 34,
    }
    return json.dumps(body, separators=(",", ":")).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Nginx:
    def __init__(self) -> None:
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        if not os.path.exists(binary):
            sys.exit(
                "nginx is not installed: run 'bash bench/run client' (it installs nginx-light)"
            )
        self.dir = Path(tempfile.mkdtemp(prefix="wikisuggest-bench-"))
        self.dir.chmod(0o755)  # nginx workers run as an unprivileged user
        self.port = free_port()
        (self.dir / "logs").mkdir()
        (self.dir / "link.json").write_bytes(response_body())
        conf = f"""
worker_processes 1;
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/logs/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    keepalive_requests 100000;
    open_file_cache max=10;
    server {{
        listen 127.0.0.1:{self.port};
        root {self.dir};
        location / {{ default_type application/json; try_files /link.json =404; }}
    }}
}}
"""
        (self.dir / "nginx.conf").write_text(conf)
        self.proc = subprocess.Popen(
            [binary, "-c", str(self.dir / "nginx.conf"), "-p", str(self.dir)]
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.stop()
        sys.exit("nginx did not start")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def cpu_seconds() -> float:
    """User + system CPU of every thread of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


#: What each client imports, done before the clock starts: start-up is not per request.
IMPORTS = {
    "wikisuggest": ["wikisuggest"],
    "wikisuggest-async": ["asyncio", "wikisuggest"],
    "wikisuggest-async-calls": ["asyncio", "wikisuggest"],
    "aiohttp": ["asyncio", "aiohttp"],
    "httpx": ["asyncio", "httpx"],
    "requests": ["threading", "concurrent.futures", "requests"],
}


def run_worker(name: str, url: str, n: int, concurrency: int) -> dict[str, Any]:
    import importlib

    for module in IMPORTS.get(name, []):
        importlib.import_module(module)
    titles = [f"Page_{i}" for i in range(n)]
    startup_cpu = cpu_seconds()
    started = time.perf_counter()
    ok = 0
    if name == "wikisuggest":
        import wikisuggest

        client = wikisuggest.Client(USER_AGENT, base_url=url, max_concurrency=concurrency)
        results = client.link_recommendations_many(titles, domain="en")
        ok = sum(1 for r in results if r.ok and len(r.result.links) == 15)
    elif name == "wikisuggest-async":
        import asyncio

        import wikisuggest

        async def main() -> int:
            client = wikisuggest.AsyncClient(USER_AGENT, base_url=url, max_concurrency=concurrency)
            results = await client.link_recommendations_many(titles, domain="en")
            return sum(1 for r in results if r.ok and len(r.result.links) == 15)

        ok = asyncio.run(main())
    elif name == "wikisuggest-async-calls":
        # One awaitable per request, gathered: how asyncio code calls a client page by page.
        import asyncio

        import wikisuggest

        async def main() -> int:
            client = wikisuggest.AsyncClient(USER_AGENT, base_url=url, max_concurrency=concurrency)
            results = await asyncio.gather(
                *(client.link_recommendations("wikipedia", "en", t) for t in titles)
            )
            return sum(1 for r in results if len(r.links) == 15)

        ok = asyncio.run(main())
    elif name == "aiohttp":
        import asyncio

        import aiohttp

        async def main() -> int:
            limit = asyncio.Semaphore(concurrency)
            connector = aiohttp.TCPConnector(limit=concurrency)
            async with aiohttp.ClientSession(
                connector=connector, headers={"User-Agent": USER_AGENT}
            ) as session:

                async def one(title: str) -> Any:
                    async with (
                        limit,
                        session.get(url + PATH + title, params={"threshold": "0.5"}) as r,
                    ):
                        return await r.json()

                kept = await asyncio.gather(*(one(t) for t in titles))
                return sum(len(body["links"]) == 15 for body in kept)

        ok = asyncio.run(main())
    elif name == "httpx":
        import asyncio

        import httpx

        async def main() -> int:
            limit = asyncio.Semaphore(concurrency)
            limits = httpx.Limits(
                max_connections=concurrency, max_keepalive_connections=concurrency
            )
            async with httpx.AsyncClient(
                limits=limits, headers={"User-Agent": USER_AGENT}
            ) as client:

                async def one(title: str) -> Any:
                    async with limit:
                        r = await client.get(url + PATH + title, params={"threshold": "0.5"})
                        return r.json()

                kept = await asyncio.gather(*(one(t) for t in titles))
                return sum(len(body["links"]) == 15 for body in kept)

        ok = asyncio.run(main())
    elif name == "requests":
        import threading
        from concurrent.futures import ThreadPoolExecutor

        import requests

        local = threading.local()

        def one(title: str) -> Any:
            session = getattr(local, "session", None)
            if session is None:
                session = local.session = requests.Session()
                session.headers["User-Agent"] = USER_AGENT
            return session.get(url + PATH + title, params={"threshold": "0.5"}).json()

        with ThreadPoolExecutor(concurrency) as pool:
            kept = list(pool.map(one, titles))
        ok = sum(len(body["links"]) == 15 for body in kept)
    else:
        raise SystemExit(f"unknown client {name}")
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    total_cpu = usage.ru_utime + usage.ru_stime
    return {
        "client": name,
        "ok": ok,
        "wall": wall,
        "cpu": total_cpu - startup_cpu,
        "startup_cpu": startup_cpu,
        "maxrss_mb": usage.ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="a folder holding another build of the wikisuggest package: adds the clients "
        "wikisuggest@base and wikisuggest-async@base, run from it, for paired comparisons",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.url, args.requests, args.concurrency)))
        return

    clients = args.clients.split(",")
    if args.baseline:
        clients += [f"{name}@base" for name in clients if name.startswith("wikisuggest")]
    server = Nginx()
    best: dict[str, dict[str, Any]] = {}
    try:
        for _, name in ((r, n) for r in range(args.rounds) for n in clients):
            env = dict(os.environ)
            if name.endswith("@base"):
                env["PYTHONPATH"] = os.pathsep.join(
                    filter(None, [args.baseline, env.get("PYTHONPATH")])
                )
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--worker",
                    name.removesuffix("@base"),
                    "--url",
                    server.url,
                    "--requests",
                    str(args.requests),
                    "--concurrency",
                    str(args.concurrency),
                ],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            ).stdout
            row = json.loads(out.strip().splitlines()[-1])
            row["client"] = name
            if row["ok"] != args.requests:
                sys.exit(f"{name}: only {row['ok']} of {args.requests} responses were complete")
            kept = best.setdefault(name, row)
            for key in ("wall", "cpu", "startup_cpu", "maxrss_mb"):
                kept[key] = min(kept[key], row[key])
    finally:
        server.stop()
    rows = list(best.values())

    base = next((r for r in rows if r["client"] == "aiohttp"), rows[0])
    print(
        f"{args.requests} GET requests, concurrency {args.concurrency}, "
        f"15-link JSON body (nginx on 127.0.0.1); best of {args.rounds} interleaved rounds"
    )
    print(
        "CPU s/1k: CPU seconds of the requests (all threads), start-up and imports excluded "
        "(start-up s: interpreter start and imports, once per process)"
    )
    print(
        f"{'client':<29}{'wall s':>8}{'req/s':>9}{'CPU s/1k':>10}{'start-up s':>11}{'RSS MB':>8}"
        f"{'throughput vs ' + base['client']:>24}{'CPU/req vs ' + base['client']:>22}"
    )
    for r in rows:
        rate = args.requests / r["wall"]
        cpu_k = r["cpu"] / args.requests * 1000
        base_rate = args.requests / base["wall"]
        base_cpu = base["cpu"] / args.requests * 1000
        print(
            f"{r['client']:<29}{r['wall']:>8.2f}{rate:>9.0f}{cpu_k:>10.3f}{r['startup_cpu']:>11.3f}"
            f"{r['maxrss_mb']:>8.1f}{rate / base_rate:>23.2f}x{cpu_k / base_cpu:>21.2f}x"
        )


if __name__ == "__main__":
    main()
