#!/usr/bin/env python3
"""Record what Wikimedia's translation recommendation service answers on the fixture dumps.

Runs the service's own code (wikimedia/research-recommendation-api, a checkout given with
``--service``) in this process, against ``support.translation_upstream`` started on
127.0.0.1 (its api.php, Wikidata and Pageview API calls answered from
``tests/data/translation/dumps``), and writes the answers to
``tests/data/translation/expected/*.json`` (see the README there for the layout and how to
compare them). Nothing of the service is copied: it is imported from the checkout.

The service starts as in production: its caches (site matrix, interwiki map, page
collections) are filled by the functions its start-up task calls, then every case is one
``GET /api/v1/translation`` through its ASGI app. Random draws (``rank_method=default``,
collection shuffles) come from Python's ``random``, seeded before each case, so a rerun writes
the same files; they stay random draws (compare them as the README says).

Usage (Python 3.11, the service's locked dependencies)::

    git clone https://github.com/wikimedia/research-recommendation-api /tmp/rra
    git -C /tmp/rra checkout b71c7e815e380848d6563d8ab1379f354235df0a
    git -C /tmp/rra worktree add /tmp/rra-array 2038a32268e4cda744c0f2e9ac8bb3785db2a392
    python3.11 -m venv /tmp/rra-venv
    /tmp/rra-venv/bin/pip install -r tests/fixtures_builder/requirements-translation.txt
    /tmp/rra-venv/bin/python tests/fixtures_builder/record_translation_answers.py \\
        --service /tmp/rra --array-service /tmp/rra-array
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
OUT = TESTS / "data" / "translation" / "expected"
ENDPOINT = "/api/v1/translation"
POOL = {"rank_method": "sitelinks", "count": "500"}
#: api.php parameters every call carries (left out of the recorded calls).
CONSTANT = {"format", "formatversion"}


def q(**params: str) -> str:
    """A query string as a browser sends it (``+`` in values as ``%2B``)."""
    return urllib.parse.urlencode(params)


def case(
    name: str, query: str, compare: str, note: str = "", pool: str | None = None
) -> dict[str, Any]:
    """One request. ``compare``: ``exact`` (the body as recorded), ``set`` (the same items in
    any order), ``sample`` (``min(count, pool)`` items, each one of ``pool``); for ``set`` and
    ``sample`` the pool is recorded with ``pool`` (default: the query with
    ``rank_method=sitelinks&count=500``)."""
    return {"name": name, "query": query, "compare": compare, "note": note, "pool_query": pool}


def pool_of(query: str, **extra: str) -> str:
    params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    params.update(POOL)
    params.update(extra)
    return urllib.parse.urlencode(params)


POPULAR = [
    case(
        "popular-fr-sitelinks",
        q(source="en", target="fr", rank_method="sitelinks", count="500"),
        "exact",
        "The day's top list cut at 500 entries, then titles resolved: missing titles (size 0), "
        "redirect titles (no langlinks: counted missing) and Main Page (present) appear as "
        "they do.",
    ),
    case(
        "popular-fr-default",
        q(source="en", target="fr"),
        "sample",
        "Default ranking shuffles: 12 of the pool.",
    ),
    case(
        "popular-ja-default-all",
        q(source="en", target="ja", count="500"),
        "set",
        "Default ranking with count above the pool: every candidate, in random order.",
    ),
    case(
        "popular-sw-sitelinks",
        q(source="en", target="sw", rank_method="sitelinks", count="500"),
        "exact",
    ),
    case(
        "popular-nb-sitelinks",
        q(source="en", target="nb", rank_method="sitelinks", count="500"),
        "exact",
        "nb is asked for as lllang=no (the domain code).",
    ),
    case(
        "popular-yue-sitelinks",
        q(source="en", target="yue", rank_method="sitelinks", count="500"),
        "exact",
        "yue is asked for as lllang=zh-yue.",
    ),
    case(
        "popular-be-tarask-sitelinks",
        q(source="en", target="be-tarask", rank_method="sitelinks", count="500"),
        "exact",
        "be-tarask is asked for as lllang=be-x-old: a page linked as be-tarask counts as missing.",
    ),
    case(
        "popular-fr-min-size",
        q(source="en", target="fr", rank_method="sitelinks", count="500", min_size="3000"),
        "exact",
        "Size is page_len; missing titles have size 0.",
    ),
    case(
        "popular-fr-max-size",
        q(source="en", target="fr", rank_method="sitelinks", count="500", max_size="1500"),
        "exact",
    ),
    case(
        "popular-fr-size-bounds",
        q(
            source="en",
            target="fr",
            rank_method="sitelinks",
            count="20",
            min_size="1000",
            max_size="5000",
        ),
        "exact",
        "Bounds are inclusive; filtered, then cut to count.",
    ),
    case(
        "popular-fr-lead-section-sizes",
        q(source="en", target="fr", rank_method="sitelinks", count="15", lead_section="true"),
        "exact",
        "lead_section without bounds: the first count items get lead_section_size (byte offset of "
        "the first heading; null when the page has none or is missing; a redirect title gets "
        "its target's).",
    ),
    case(
        "popular-fr-lead-section-bounds",
        q(
            source="en",
            target="fr",
            rank_method="sitelinks",
            count="10",
            lead_section="true",
            min_size="400",
            max_size="1500",
        ),
        "sample",
        "Lead-section bounds: the first count candidates (in completion order of the parse calls) "
        "whose lead section size is within the bounds.",
    ),
    case(
        "popular-fr-pageviews",
        q(source="en", target="fr", rank_method="sitelinks", count="12", include_pageviews="true"),
        "exact",
        "One prop=pageviews&pvipdays=1 call: only the 5 titles first in database-key order are "
        "looked up, the others answer 0 (the service does not follow the continuation).",
    ),
    case(
        "popular-fr-pageviews-over-50",
        q(source="en", target="fr", rank_method="sitelinks", count="60", include_pageviews="true"),
        "exact",
        "More than 50 titles: api.php answers toomanyvalues, so every pageviews value is 0.",
    ),
    case("popular-fr-count-zero", q(source="en", target="fr", count="0"), "exact"),
    case(
        "popular-fr-count-negative",
        q(source="en", target="fr", rank_method="sitelinks", count="-3"),
        "exact",
        "A negative count is a Python slice: all candidates but the last three.",
    ),
    case(
        "popular-simple-en-sitelinks",
        q(source="simple", target="en", rank_method="sitelinks", count="500"),
        "exact",
        "The second source wiki (no top-list cut: fewer than 500 viewed titles).",
    ),
    case(
        "popular-de-pageviews-all",
        q(
            source="en",
            target="de",
            rank_method="sitelinks",
            count="40",
            include_pageviews="true",
            max_size="800",
        ),
        "exact",
    ),
]

TOPIC = [
    case(
        "topic-biography-fr",
        q(source="en", target="fr", topic="biography", rank_method="sitelinks", count="500"),
        "exact",
    ),
    case("topic-women-sw", q(source="en", target="sw", topic="women"), "set"),
    case(
        "topic-or-regions-fr",
        q(
            source="en",
            target="fr",
            topic="Southern Africa|Eastern Africa",
            rank_method="sitelinks",
            count="500",
        ),
        "exact",
        "Spaces become hyphens, | is OR inside a keyword.",
    ),
    case(
        "topic-and-stem-space-ja",
        q(source="en", target="ja", topic="stem+space", rank_method="sitelinks", count="500"),
        "exact",
        "+ (sent as %2B) splits keywords that must all match.",
    ),
    case(
        "topic-literal-plus",
        "source=en&target=ja&topic=stem+space&rank_method=sitelinks&count=500",
        "exact",
        "A bare + decodes to a space: the topic becomes stem-space, not a term: no result.",
    ),
    case(
        "topic-unknown-term",
        q(source="en", target="fr", topic="arts"),
        "exact",
        "Not a topic term: no result.",
    ),
    case(
        "topic-music-upper-case-de-min-size",
        q(
            source="en",
            target="de",
            topic="Music",
            rank_method="sitelinks",
            count="500",
            min_size="2000",
        ),
        "exact",
        "Size is the search index's text_bytes.",
    ),
    case(
        "topic-geographical-max-size",
        q(
            source="en",
            target="es",
            topic="geographical",
            rank_method="sitelinks",
            count="500",
            max_size="2500",
        ),
        "exact",
    ),
    case(
        "topic-history-lead-bounds",
        q(
            source="en",
            target="fr",
            topic="history",
            rank_method="sitelinks",
            count="8",
            lead_section="true",
            min_size="200",
            max_size="1500",
        ),
        "sample",
    ),
    case(
        "topic-europe-lead-sizes",
        q(
            source="en",
            target="sw",
            topic="europe",
            rank_method="sitelinks",
            count="20",
            lead_section="true",
        ),
        "exact",
    ),
    case(
        "topic-europe-pageviews",
        q(
            source="en",
            target="sw",
            topic="europe",
            rank_method="sitelinks",
            count="10",
            include_pageviews="true",
        ),
        "exact",
    ),
    case(
        "topic-stem-yue",
        q(source="en", target="yue", topic="stem", rank_method="sitelinks", count="500"),
        "exact",
    ),
    case(
        "topic-biography-nb",
        q(source="en", target="nb", topic="biography", rank_method="sitelinks", count="500"),
        "exact",
    ),
    case(
        "topic-politics-be-tarask",
        q(
            source="en",
            target="be-tarask",
            topic="politics-and-government",
            rank_method="sitelinks",
            count="500",
        ),
        "exact",
    ),
    case(
        "topic-geographical-simple-en",
        q(source="simple", target="en", topic="geographical", rank_method="sitelinks", count="500"),
        "exact",
    ),
    case("topic-music-default", q(source="en", target="sw", topic="music", count="3"), "sample"),
]

COUNTRY = [
    case(
        "country-usa-fr",
        q(source="en", target="fr", country="usa", rank_method="sitelinks", count="500"),
        "exact",
    ),
    case(
        "country-tza-sw",
        q(source="en", target="sw", country="tza", rank_method="sitelinks", count="500"),
        "exact",
    ),
    case(
        "country-or-can-mex-es",
        q(source="en", target="es", country="can|mex", rank_method="sitelinks", count="500"),
        "exact",
    ),
    case(
        "country-and-usa-gbr",
        q(source="en", target="sw", country="usa+gbr", rank_method="sitelinks", count="500"),
        "exact",
    ),
    case(
        "country-upper-case-ken-sw",
        q(source="en", target="sw", country="KEN", count="50"),
        "set",
        "The service passes the code as given; the search lower-cases it.",
    ),
    case("country-unknown-code", q(source="en", target="fr", country="xyz"), "exact"),
    case(
        "country-and-topic-de",
        q(
            source="en",
            target="de",
            topic="biography",
            country="usa",
            rank_method="sitelinks",
            count="500",
        ),
        "exact",
    ),
    case(
        "country-jpn-size-bounds-ja",
        q(
            source="en",
            target="ja",
            country="jpn",
            rank_method="sitelinks",
            count="500",
            min_size="1500",
            max_size="6000",
        ),
        "exact",
    ),
    case(
        "country-nor-nb",
        q(source="en", target="nb", country="nor", rank_method="sitelinks", count="500"),
        "exact",
    ),
    case("country-gbr-default", q(source="en", target="it", country="gbr", count="5"), "sample"),
    case(
        "country-fra-lead-bounds",
        q(
            source="en",
            target="de",
            country="fra",
            rank_method="sitelinks",
            count="4",
            lead_section="true",
            min_size="300",
            max_size="1200",
        ),
        "sample",
    ),
]

COLLECTIONS = [
    case(
        "collections-all-fr",
        q(source="en", target="fr", collections="true", count="500"),
        "set",
        "No seed: every collection, shuffled and interleaved round-robin.",
    ),
    case(
        "collections-essential-page-1",
        q(
            source="en",
            target="fr",
            collections="true",
            seed="Essential Articles",
            count="12",
            continue_seed="42",
        ),
        "exact",
        "One collection: random.Random(continue_seed).shuffle of its articles (as fetched: "
        "Wikidata "
        "items in link order), cut at continue_offset.",
    ),
    case(
        "collections-essential-page-2",
        "",
        "exact",
        "The next page: continue_offset from page 1 (it starts with page 1's last item).",
    ),
    case(
        "collections-group-wiki99-sw",
        q(source="en", target="sw", collections="true", seed="Wiki99", count="500"),
        "set",
        "A seed naming a group (Wiki99/…) picks every collection of the group: several "
        "collections.",
    ),
    case(
        "collections-food-fr",
        q(
            source="en",
            target="fr",
            collections="true",
            seed="wiki99/food",
            count="500",
            continue_seed="7",
        ),
        "set",
        "Case-insensitive name; articles from Wikidata ids and from enwiki/frwiki titles; the "
        "order of title-resolved articles depends on Python's set order, so: as a set.",
    ),
    case(
        "collections-nb",
        q(source="en", target="nb", collections="true", count="500"),
        "set",
        "Collections compare the target code with Wikidata's site languages (no, not nb): "
        "every article counts as missing.",
    ),
    case("collections-yue", q(source="en", target="yue", collections="true", count="500"), "set"),
    case(
        "collections-source-fr-en",
        q(source="fr", target="en", collections="true", count="500"),
        "set",
        "Sizes are English Wikipedia's only: null for another source.",
    ),
    case(
        "collections-featured-sw",
        q(
            source="en",
            target="sw",
            collections="true",
            featured_collection="Essential Articles",
            count="500",
        ),
        "set",
    ),
    case(
        "collections-min-size-fr",
        q(source="en", target="fr", collections="true", min_size="3000", count="500"),
        "set",
    ),
    case(
        "collections-essential-lead-bounds",
        q(
            source="en",
            target="sw",
            collections="true",
            seed="Essential Articles",
            lead_section="true",
            min_size="100",
            max_size="1500",
            count="5",
            continue_seed="42",
        ),
        "exact",
        "One collection keeps its order through the lead-section filter.",
    ),
    case(
        "collections-name-from-title-sw",
        q(
            source="en",
            target="sw",
            collections="true",
            seed="Campaign:Tanzania 2026",
            count="500",
            continue_seed="3",
        ),
        "set",
        "A marker without a name: the page title names the collection.",
    ),
    case(
        "collections-featured-topic-search",
        q(
            source="en",
            target="fr",
            topic="stem",
            featured_collection="Wiki99/Science",
            rank_method="sitelinks",
            count="500",
        ),
        "exact",
        "Topic search interleaved 1:1 with the featured collection's pages found by the same "
        "search restricted to their page ids.",
    ),
]

ERRORS = [
    case("error-same-languages", q(source="en", target="en"), "exact"),
    case("error-invalid-source", q(source="x12", target="fr"), "exact"),
    case("error-invalid-target", q(source="en", target="zz9"), "exact"),
    case("error-count-not-integer", q(source="en", target="fr", count="abc"), "exact"),
    case("error-count-float", q(source="en", target="fr", count="12.5"), "exact"),
    case("error-rank-method", q(source="en", target="fr", rank_method="best"), "exact"),
    case(
        "error-include-pageviews", q(source="en", target="fr", include_pageviews="maybe"), "exact"
    ),
    case("error-missing-target", q(source="en"), "exact"),
    case("error-search-algorithm", q(source="en", target="fr", search_algorithm="foo"), "exact"),
    case("error-min-size", q(source="en", target="fr", min_size="big", max_size="1e3"), "exact"),
]

ARRAY_SHAPE = [
    case(
        "array-popular-fr-sitelinks",
        q(source="en", target="fr", rank_method="sitelinks", count="12"),
        "exact",
    ),
    case(
        "array-topic-biography-fr",
        q(source="en", target="fr", topic="biography", rank_method="sitelinks", count="12"),
        "exact",
    ),
    case(
        "array-collections-essential",
        q(source="en", target="fr", collections="true", seed="Essential Articles", count="12"),
        "set",
    ),
    case("array-error-same-languages", q(source="en", target="en"), "exact"),
]

GROUPS = {
    "popular": POPULAR,
    "topic": TOPIC,
    "country": COUNTRY,
    "collections": COLLECTIONS,
    "errors": ERRORS,
}


def git_commit(path: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(path), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


async def record(
    service: Path, groups: dict[str, list[dict[str, Any]]], listings: bool
) -> dict[str, Any]:
    sys.path.insert(0, str(TESTS))
    from support.translation_upstream import TODAY, UpstreamServer

    fake = UpstreamServer().start()
    api = f"{fake.url}/w/api.php"
    os.environ.update(
        WIKIPEDIA_API=api,
        WIKIPEDIA_API_HEADER="{source}.wikipedia.org",
        WIKIDATA_API=api,
        WIKIDATA_API_HEADER="www.wikidata.org",
        WIKIMEDIA_API=api,
        WIKIMEDIA_API_HEADER="meta.wikimedia.org",
        EVENT_LOGGER_API=f"{fake.url}/v1/events",
        CXSERVER_URL=f"{fake.url}/cx/",
        CACHE_DIRECTORY=tempfile.mkdtemp(prefix="rra-cache-"),
        LOG_LEVEL="CRITICAL",
    )
    os.chdir(service)
    sys.path.insert(0, str(service))
    import httpx
    import pydantic
    from recommendation.main import app
    from recommendation.utils import cache_updater

    await cache_updater.initialize_interwiki_map_cache()
    await cache_updater.initialize_sitematrix_cache()
    await cache_updater.update_page_collection_cache()
    with fake.upstream.lock:
        startup_calls = [
            {"host": c["host"], **{k: v for k, v in c["params"].items() if k not in CONSTANT}}
            for c in fake.upstream.calls
            if c["method"] == "GET" and c["path"] == "/w/api.php"
        ]

    transport = httpx.ASGITransport(app=app)
    results: dict[str, Any] = {}
    async with httpx.AsyncClient(transport=transport, base_url="http://recommend.local") as client:

        async def get(
            query: str, seed: int, path: str = ENDPOINT
        ) -> tuple[httpx.Response, list[dict[str, Any]]]:
            random.seed(seed)
            with fake.upstream.lock:
                fake.upstream.calls.clear()
            response = await client.get(f"{path}?{query}" if query else path)
            with fake.upstream.lock:
                calls = [
                    {
                        "host": c["host"],
                        **{k: v for k, v in c["params"].items() if k not in CONSTANT},
                    }
                    for c in fake.upstream.calls
                    if c["method"] == "GET" and c["path"] == "/w/api.php"
                ]
            # Concurrent calls (one parse call per candidate) come in any order.
            return response, sorted(calls, key=lambda c: json.dumps(c, sort_keys=True))

        for group, cases in groups.items():
            recorded = []
            for number, item in enumerate(cases):
                query = item["query"]
                if item["name"].endswith("page-2"):
                    first = recorded[-1]
                    params = dict(urllib.parse.parse_qsl(first["query"]))
                    params["continue_offset"] = str(first["body"]["continue_offset"])
                    params["continue_seed"] = str(first["body"]["continue_seed"])
                    query = urllib.parse.urlencode(params)
                response, calls = await get(query, seed=1000 + number)
                kind = response.headers.get("content-type", "")
                body = response.json() if kind.startswith("application/json") else response.text
                entry: dict[str, Any] = {
                    "name": item["name"],
                    "query": query,
                    "status": response.status_code,
                    "compare": item["compare"],
                    "note": item["note"],
                    "body": body,
                    "upstream_calls": calls,
                }
                if item["compare"] in ("set", "sample"):
                    pool_query = item["pool_query"] or pool_of(query)
                    pool_response, _ = await get(pool_query, seed=2000 + number)
                    entry["pool_query"] = pool_query
                    pool_body = pool_response.json()
                    items = (
                        pool_body["recommendations"] if isinstance(pool_body, dict) else pool_body
                    )
                    entry["pool"] = sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
                recorded.append(entry)
            results[group] = recorded
        if listings:
            listing = []
            for path in (
                "/api/v1/translation/page-collections",
                "/api/v1/translation/page-collection-groups",
            ):
                response, _ = await get("", seed=0, path=path)
                listing.append(
                    {
                        "name": path.rsplit("/", 1)[1],
                        "path": path,
                        "status": response.status_code,
                        "compare": "exact",
                        "body": response.json(),
                    }
                )
            listing.append(
                {
                    "name": "start-up",
                    "note": "The calls that fill the service's caches "
                    "(site matrix, interwiki map, page collections) before it answers.",
                    "upstream_calls": startup_calls,
                }
            )
            results["listings"] = listing
    fake.stop()
    results["__service__"] = {
        "repository": "wikimedia/research-recommendation-api",
        "commit": git_commit(service),
        "python": sys.version.split()[0],
        "pydantic": pydantic.VERSION,
        "upstream_today": TODAY.isoformat(),
    }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--service", type=Path, required=True, help="research-recommendation-api checkout (b71c7e8)"
    )
    parser.add_argument("--array-service", type=Path, help="a checkout of the array era (2038a32)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--array", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if os.environ.get("PYTHONHASHSEED") != "0":
        # Set iteration order feeds a few orders in the service: fix it for reruns.
        os.execve(
            sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"}
        )
    args.out.mkdir(parents=True, exist_ok=True)
    if args.array:
        results = asyncio.run(record(args.service, {"array_shape": ARRAY_SHAPE}, listings=False))
        service = results.pop("__service__")
        service["recorded"] = dt.date.today().isoformat()
        write(args.out / "array_shape.json", service, results["array_shape"])
        return
    results = asyncio.run(record(args.service, GROUPS, listings=True))
    service = results.pop("__service__")
    service["recorded"] = dt.date.today().isoformat()
    for group, cases in results.items():
        write(args.out / f"{group}.json", service, cases)
    if args.array_service:
        # The array era in a process of its own (its modules share the service's names).
        subprocess.run(
            [
                sys.executable,
                __file__,
                "--service",
                str(args.array_service),
                "--array",
                "--out",
                str(args.out),
            ],
            check=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )


def write(path: Path, service: dict[str, Any], cases: list[dict[str, Any]]) -> None:
    document = {"service": service, "cases": cases}
    path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"{path}: {len(cases)} cases")


if __name__ == "__main__":
    main()
