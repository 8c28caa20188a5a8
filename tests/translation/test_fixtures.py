"""The translation fixture dumps read as their formats say and agree with each other, and the
answers recorded from production's service refer to what they hold."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import re
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from support.dump_formats import (
    DUMPS,
    EXPECTED,
    Namespace,
    index_shards,
    integer,
    pageview_file,
    pageview_rows,
    redirects,
    run_file,
    search_documents,
    siteinfo_namespaces,
    sql_rows,
    text,
    xml_pages,
)
from support.translation_upstream import UpstreamServer

RUN = "20260601"
INDEX = "20260607"
DAY = "20260614"
NOTES = json.loads((DUMPS.parent / "notes.json").read_text())
RUNS = sorted(p.parent for p in DUMPS.glob(f"*/{RUN}/dumpstatus.json"))


@cache
def pages(wiki: str) -> dict[int, tuple[int, str, bool, int]]:
    """page id → (namespace, title with spaces, is a redirect, page_len)."""
    rows = sql_rows(run_file(wiki, RUN, "page"), "page")
    return {
        integer(r[0]): (integer(r[1]), text(r[2]).replace("_", " "), bool(r[3]), integer(r[9]))
        for r in rows
    }


@cache
def by_title(wiki: str) -> dict[str, int]:
    return {title: page_id for page_id, (ns, title, _, _) in pages(wiki).items() if ns == 0}


@cache
def props(wiki: str) -> dict[int, dict[str, str]]:
    found: dict[int, dict[str, str]] = {}
    for page_id, name, value, _ in sql_rows(run_file(wiki, RUN, "page_props"), "page_props"):
        found.setdefault(integer(page_id), {})[text(name)] = text(value)
    return found


@cache
def langlinks(wiki: str) -> dict[int, dict[str, str]]:
    found: dict[int, dict[str, str]] = {}
    for page_id, lang, title in sql_rows(run_file(wiki, RUN, "langlinks"), "langlinks"):
        found.setdefault(integer(page_id), {})[text(lang)] = text(title)
    return found


@cache
def documents(wiki: str) -> dict[int, dict[str, Any]]:
    return {int(d["page_id"]): d for d in search_documents(index_shards(INDEX, f"{wiki}_content"))}


@cache
def viewed_titles() -> frozenset[str]:
    return frozenset(r.title for r in pageview_rows(pageview_file(DAY)) if r.wiki == "en.wikipedia")


@cache
def sitelinks() -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    rows = sql_rows(run_file("wikidatawiki", RUN, "wb_items_per_site"), "wb_items_per_site")
    for _, item, site, title in rows:
        found.setdefault(f"Q{item}", {})[text(site)] = text(title)
    return found


def test_the_sql_dumps_are_mysqldump_output() -> None:
    """Every table reads back; the statements are mysqldump's (header, CREATE TABLE, extended
    INSERTs cut into several statements where the table is large, the completion line); the
    rows are in primary-key order; titles are unique per namespace."""
    tables = sorted(DUMPS.glob(f"*/{RUN}/*.sql.gz"))
    assert len(tables) == 13
    for path in tables:
        text = gzip.decompress(path.read_bytes()).decode()
        table = path.name.split(f"-{RUN}-")[1].removesuffix(".sql.gz")
        assert text.startswith("/*M!999999\\- enable the sandbox mode */ \n-- MariaDB dump 10.19")
        assert f"CREATE TABLE `{table}` (" in text and text.endswith(
            "-- Dump completed on 2026-06-01 16:42:07\n"
        )
        rows = list(sql_rows(path, table))
        assert rows, path.name
        primary_key = {
            "page_props": (0, 1),
            "langlinks": (0, 1),
            "categorylinks": (0, 6),
            "iwlinks": (0, 1, 2),
        }
        keys = [tuple(r[i] for i in primary_key.get(table, (0,))) for r in rows]
        assert keys == sorted(keys), f"{path.name} is not in primary-key order"
    statements = gzip.decompress(run_file("enwiki", RUN, "langlinks").read_bytes()).decode()
    assert statements.count("INSERT INTO `langlinks` VALUES ") > 1
    for wiki in ("enwiki", "simplewiki"):
        titles = Counter((ns, title) for ns, title, _, _ in pages(wiki).values())
        assert max(titles.values()) == 1
    # Escapes: a title with a quote reads back with it.
    assert any("'" in title for _, title, _, _ in pages("enwiki").values())


def test_dumpstatus_lists_every_file_with_its_size_and_digests() -> None:
    """Each run's dumpstatus.json names every table file with the bytes it holds, and the
    md5/sha1 sum files agree with it."""
    assert len(RUNS) == 4
    for run in RUNS:
        wiki = run.parent.name
        status = json.loads((run / "dumpstatus.json").read_text())
        assert status["version"] == "0.8"
        listed = {}
        for job, entry in status["jobs"].items():
            assert entry["status"] == "done", job
            for name, file in entry["files"].items():
                data = (run / name).read_bytes()
                assert file["size"] == len(data)
                assert file["md5"] == hashlib.md5(data).hexdigest()
                assert file["sha1"] == hashlib.sha1(data).hexdigest()
                assert file["url"] == f"/{wiki}/{RUN}/{name}"
                listed[name] = file
        on_disk = {p.name for p in run.iterdir()} - {"dumpstatus.json"}
        sums = {f"{wiki}-{RUN}-md5sums.txt", f"{wiki}-{RUN}-sha1sums.txt"}
        assert on_disk - sums == set(listed)
        for kind in ("md5", "sha1"):
            lines = (run / f"{wiki}-{RUN}-{kind}sums.txt").read_text().splitlines()
            assert {line.split("  ")[1]: line.split("  ")[0] for line in lines} == {
                name: file[kind] for name, file in listed.items()
            }


def test_the_search_index_documents_are_the_articles_of_the_page_table() -> None:
    """Every primary document is a namespace-0 article of the SQL dump (same id and title,
    its redirects the redirect pages), its text_bytes the size of its source text (page_len
    too, but for the documents indexed from another revision); tags are prefix/label|score."""
    for wiki in ("enwiki", "simplewiki"):
        table = pages(wiki)
        folder = DUMPS / "other" / "cirrus_search_index" / INDEX / f"index_name={wiki}_content"
        assert (folder / "_SUCCESS").read_bytes() == b""
        primary = {i: d for i, d in documents(wiki).items() if d.get("page_type") == "primary"}
        articles = {i for i, (ns, _, redirect, _) in table.items() if ns == 0 and not redirect}
        assert set(primary) == articles
        stale = set(NOTES["enwiki"]["stale_index_documents"]) if wiki == "enwiki" else set()
        for page_id, document in primary.items():
            ns, title, _, page_len = table[page_id]
            assert (document["namespace"], document["title"]) == (ns, title)
            assert document["text_bytes"] == len(document["source_text"].encode())
            assert (document["text_bytes"] != page_len) == (title in stale)
            for redirect in document["redirect"]:
                assert table[by_title(wiki)[redirect["title"]]][2]
            assert document.get("wikibase_item") == props(wiki).get(page_id, {}).get(
                "wikibase_item"
            )
            for tag in document.get("weighted_tags", []):
                assert re.fullmatch(r"[a-z.]+/[^|]+\|([1-9]\d{0,2}|1000)", tag), tag
        for document in documents(wiki).values():
            if document.get("page_type") == "redirect":
                assert table[int(document["page_id"])][2]
    general = search_documents(index_shards(INDEX, "enwiki_general"))
    assert {d["namespace"] for d in general} == {1, 2, 4, 6, 10, 12, 14, 100}


def test_the_redirect_table_is_the_redirect_pages_and_the_index_lists_them() -> None:
    """One redirect row per page whose page_is_redirect is set, pointing at an article of the
    page table (local, no section: interwiki and fragment empty); each article's index
    document lists exactly the redirects that point at it, and a first-class redirect
    document names the target its row does."""
    for wiki in ("enwiki", "simplewiki"):
        path = run_file(wiki, RUN, "redirect")
        create = gzip.decompress(path.read_bytes()).decode().split("CREATE TABLE `redirect` (")[1]
        columns = re.findall(r"^  `(\w+)` ", create.split(";")[0], re.M)
        assert columns == ["rd_from", "rd_namespace", "rd_title", "rd_interwiki", "rd_fragment"]
        table = pages(wiki)
        rows = {row.page_id: row for row in redirects(path)}
        assert set(rows) == {i for i, (_, _, redirect, _) in table.items() if redirect}
        pointing: dict[int, set[str]] = {}
        for page_id, row in rows.items():
            assert (row.namespace, row.interwiki, row.fragment) == (0, "", "")
            assert table[page_id][0] == 0
            target = by_title(wiki)[row.title.replace("_", " ")]
            assert not table[target][2]  # no redirect to a redirect
            pointing.setdefault(target, set()).add(table[page_id][1])
        first_class = 0
        for page_id, document in documents(wiki).items():
            if document.get("page_type") == "redirect":
                first_class += 1
                assert document["redirect_target"]["title"] == rows[page_id].title.replace("_", " ")
                continue
            listed = document["redirect"]
            assert {r["namespace"] for r in listed} <= {0}
            assert {r["title"] for r in listed} == pointing.get(page_id, set())
        assert first_class == (2 if wiki == "enwiki" else 0)
    en = {
        pages("enwiki")[row.page_id][1]: row.title.replace("_", " ")
        for row in redirects(run_file("enwiki", RUN, "redirect"))
    }
    assert en == NOTES["enwiki"]["redirects"]
    assert any("'" in target for target in en.values())  # read back through mysqldump's \'


def test_the_siteinfo_answer_names_the_namespaces_the_dumps_use() -> None:
    """The ``namespaces`` job's file is api.php's compact format-version-1 answer (siprop
    namespaces|namespacealiases|magicwords|general, in that order): names under ``*``, last;
    no JSON booleans but variantarticlepath; every namespace of the page table, the search
    index and the pageview file's prefixed titles is there under the name they use."""
    for wiki in ("enwiki", "simplewiki"):
        path = run_file(wiki, RUN, "siteinfo-namespaces.json.gz")
        raw = gzip.decompress(path.read_bytes())
        answer = json.loads(raw)
        assert json.dumps(answer, separators=(",", ":")).encode() == raw
        assert list(answer) == ["batchcomplete", "query"]
        query = answer["query"]
        assert list(query) == ["namespaces", "namespacealiases", "magicwords", "general"]
        for entry in query["namespaces"].values():
            assert list(entry)[:2] == ["id", "case"] and list(entry)[-1] == "*"
            assert not any(isinstance(v, bool) for v in entry.values())
        assert [k for k, v in query["general"].items() if isinstance(v, bool)] == [
            "variantarticlepath"
        ]
        assert query["general"]["wikiid"] == wiki
        magic = {m["name"]: m for m in query["magicwords"]}
        assert magic["redirect"] == {"name": "redirect", "aliases": ["#REDIRECT"]}
        spaces = siteinfo_namespaces(path)
        assert spaces[0] == Namespace(0, "", None, True, ())
        assert [n for n, ns in spaces.items() if ns.content] == [0]
        assert (spaces[4].name, spaces[4].canonical) == ("Wikipedia", "Project")
        assert spaces[6].aliases == ("Image",)
        assert {ns for ns, _, _, _ in pages(wiki).values()} <= set(spaces)
    spaces = siteinfo_namespaces(run_file("enwiki", RUN, "siteinfo-namespaces.json.gz"))
    general = list(search_documents(index_shards(INDEX, "enwiki_general")))
    for document in general:
        assert document["namespace_text"] == spaces[document["namespace"]].name
    viewed = {r.title for r in pageview_rows(pageview_file(DAY)) if r.wiki == "en.wikipedia"}
    for ns, title, _, _ in pages("enwiki").values():
        if ns != 0:
            assert f"{spaces[ns].name}:{title}".replace(" ", "_") in viewed


def test_the_pageview_files_read_and_add_up() -> None:
    """Each line is ``wiki title page_id access views hourly``; the hourly counts add up to
    the day's views; page ids are those of the page table (or ``null``)."""
    for day in ("20260613", DAY):
        rows = list(pageview_rows(pageview_file(day)))
        lines = bz2.decompress(pageview_file(day).read_bytes()).decode().splitlines()
        assert lines == sorted(lines)
        for row in rows:
            hours = re.findall(r"([A-X])(\d+)", row.hourly)
            assert "".join(h + c for h, c in hours) == row.hourly
            assert sum(int(c) for _, c in hours) == row.views > 0
            assert row.access in ("desktop", "mobile-web", "mobile-app")
        en = [r for r in rows if r.wiki == "en.wikipedia"]
        ids = {i for i, (ns, title, _, _) in pages("enwiki").items()}
        assert {r.page_id for r in en} - {None} <= ids
        assert len({r.title for r in en}) > 500  # the top list is cut at 500
        assert list(pageview_rows(pageview_file(day, "automated")))


def test_collections_are_metawiki_pages_with_their_links() -> None:
    """The collection pages carry the marker, sit in its tracking category, and their
    interwiki links are rows of iwlinks; every linked Wikidata item's sitelinks are those of
    wb_items_per_site; enwiki's articles and their langlinks agree with their items."""
    exported = {
        p.page_id: p for p in xml_pages(run_file("metawiki", RUN, "pages-articles.xml.bz2"))
    }
    for page in exported.values():
        number = int.from_bytes(hashlib.sha1(page.text.encode()).digest(), "big")
        digits = ""
        while number:
            number, rest = divmod(number, 36)
            digits = "0123456789abcdefghijklmnopqrstuvwxyz"[rest] + digits
        assert page.text_sha1 == digits.rjust(31, "0")
    marked = {i for i, p in exported.items() if "<page-collection" in p.text}
    assert len(marked) == 5
    categorised = {
        integer(r[0])
        for r in sql_rows(run_file("metawiki", RUN, "categorylinks"), "categorylinks")
        if r[6] == 1
    }
    assert categorised == marked
    links = list(sql_rows(run_file("metawiki", RUN, "iwlinks"), "iwlinks"))
    assert {integer(r[0]) for r in links} == marked
    items = sitelinks()
    for _, prefix, title in links:
        if prefix in ("d", "wikidata") and title != NOTES["collections"]["item_without_entity"]:
            assert title in items
    for page_id, links_of in langlinks("enwiki").items():
        qid = props("enwiki").get(page_id, {}).get("wikibase_item")
        if qid is None or pages("enwiki")[page_id][2]:
            continue
        sites = items[qid]
        assert sites["enwiki"] == pages("enwiki")[page_id][1]
        for code, title in links_of.items():
            site = {"be-x-old": "be_x_oldwiki", "be-tarask": "be_x_oldwiki"}.get(
                code, code.replace("-", "_") + "wiki"
            )
            assert sites[site] == title


def expected_cases() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(EXPECTED.glob("*.json")):
        for item in json.loads(path.read_text())["cases"]:
            out.append((path.stem, item))
    return out


def recommendations(body: object) -> list[dict[str, Any]]:
    if isinstance(body, dict):
        return list(body.get("recommendations", []))
    return list(body) if isinstance(body, list) else []


@pytest.mark.parametrize(
    ("group", "case"), expected_cases(), ids=lambda v: v if isinstance(v, str) else v["name"]
)
def test_the_recorded_answers_refer_to_the_fixtures(group: str, case: dict[str, Any]) -> None:
    """Each recommendation production gave is a page of the fixtures with the fields the
    dumps give it: a source-wiki page (or a title the day's top list names), its Wikidata id
    and langlinks count; its size the search index's (search) or the page table's (popular);
    the draws of a set or sample case are in their pool."""
    if group == "listings" or case["status"] != 200:
        assert case.get("status", 200) in (200, 422)
        return
    query = dict(p.split("=", 1) for p in case["query"].split("&") if "=" in p)
    source = "simplewiki" if query["source"] == "simple" else "enwiki"
    items = recommendations(case["body"])
    for item in items + case.get("pool", []):
        if item["collection"] is not None:
            sites = sitelinks()[item["wikidata_id"]]
            assert item["title"] == sites[f"{query['source']}wiki"]
            if query["source"] == "en":
                assert item["size"] == pages("enwiki")[by_title("enwiki")[item["title"]]][3]
            continue
        if query["source"] not in ("en", "simple"):
            continue
        page_id = by_title(source).get(item["title"])
        if page_id is None:  # a title of the day's top list that is no page
            assert item["title"].replace(" ", "_") in viewed_titles()
            assert (item["size"], item["langlinks_count"], item["wikidata_id"]) == (0, 0, None)
            continue
        _, _, redirect, page_len = pages(source)[page_id]
        assert item["wikidata_id"] == props(source).get(page_id, {}).get("wikibase_item")
        assert item["langlinks_count"] == len(langlinks(source).get(page_id, {}))
        searched = any(k in query for k in ("topic", "country", "seed"))
        size = documents(source)[page_id]["text_bytes"] if searched else page_len
        assert item["size"] == size, item
        assert not redirect or not searched
    if case["compare"] in ("set", "sample"):
        # An article of several collections carries one of them (the first drawn).
        pool = [json.dumps(i | {"collection": None}, sort_keys=True) for i in case["pool"]]
        drawn = [json.dumps(i | {"collection": None}, sort_keys=True) for i in items]
        assert set(drawn) <= set(pool)
        if case["compare"] == "set":
            assert sorted(drawn) == sorted(pool)


def test_the_expected_answers_cover_every_mode() -> None:
    groups = {Path(p).stem for p in EXPECTED.glob("*.json")}
    assert groups == {
        "popular",
        "topic",
        "country",
        "collections",
        "errors",
        "listings",
        "array_shape",
    }
    names = [c["name"] for _, c in expected_cases()]
    assert len(names) == len(set(names))
    answered = [c for g, c in expected_cases() if g != "listings" and c["status"] == 200]
    assert sum(1 for c in answered if recommendations(c["body"])) > 50


@pytest.fixture(scope="module")
def upstream() -> Iterator[UpstreamServer]:
    server = UpstreamServer().start()
    yield server
    server.stop()


def replay(upstream: UpstreamServer, call: dict[str, str]) -> dict[str, Any]:
    params = {k: v for k, v in call.items() if k != "host"} | {
        "format": "json",
        "formatversion": "2",
    }
    request = urllib.request.Request(
        f"{upstream.url}/w/api.php?{urllib.parse.urlencode(params)}", headers={"Host": call["host"]}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer: dict[str, Any] = json.load(response)
    return answer


@pytest.mark.parametrize(
    "name",
    ["popular-fr-sitelinks", "popular-fr-pageviews", "topic-biography-fr", "country-tza-sw"],
)
def test_the_loopback_upstream_still_gives_what_production_was_answered_from(
    upstream: UpstreamServer, name: str
) -> None:
    """Replayed over HTTP, the api.php calls a recording made give the pages its answer
    holds, with the same Wikidata ids and langlinks counts, and the same pageviews."""
    case = next(c for _, c in expected_cases() if c["name"] == name)
    pages_of = replay(upstream, case["upstream_calls"][0])["query"]["pages"]
    by_name = {p["title"]: p for p in pages_of}
    items = recommendations(case["body"])
    assert items
    for item in items:
        page = by_name[item["title"]]
        assert page.get("pageprops", {}).get("wikibase_item") == item["wikidata_id"]
        assert page.get("langlinkscount", 0) == item["langlinks_count"]
        assert "langlinks" not in page  # the target is missing
    if len(case["upstream_calls"]) > 1:
        viewed = replay(upstream, case["upstream_calls"][1])["query"]["pages"]
        views = {p["title"]: sum(v or 0 for v in p.get("pageviews", {}).values()) for p in viewed}
        assert {i["title"]: i["pageviews"] for i in items} == {
            t: views.get(t, 0) for t in (i["title"] for i in items)
        }
        assert sum(1 for p in viewed if "pageviews" in p) == 5
