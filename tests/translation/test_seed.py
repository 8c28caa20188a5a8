"""Seed mode: ``engine.similar`` and ``recommend(seed=...)`` from the search index built with a
catalog, on the English fixture dumps whose search documents carry texts written here from a
small vocabulary of words the English analyzer keeps as they are. Expected hits and BM25 scores
are computed here, independently of the code under test, the way Lucene's MoreLikeThis and
BM25 compute them for CirrusSearch; production's post-processing rules (disambiguation pages
dropped, only articles the target lacks, ``morelikethis`` beside a topic as a filter) are
asserted on those hits. The reference server answers the same seed requests."""

from __future__ import annotations

import asyncio
import bz2
import json
import math
import random
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import reference_server as ref
from support.dump_formats import index_shards, integer, run_file, search_documents, sql_rows, text
from support.translation_catalogs import INDEX, RUN, spec

import wikisuggest
from wikisuggest import InvalidParameter, TranslationEngine
from wikisuggest._native import build_translation_catalog
from wikisuggest.errors import MissingCatalogPart

#: Words the English analyzer indexes unchanged (no stop word, no stemmer suffix).
VOCABULARY = ("moon", "orbit", "crater", "star", "planet", "ocean", "comet", "rock", "dust")


def synthetic_text(page_id: int) -> str:
    """3 to 14 words (under Lucene's 24 exactly stored document lengths)."""
    draw = random.Random(page_id)
    return " ".join(draw.choice(VOCABULARY) for _ in range(draw.randint(3, 14)))


@dataclass(frozen=True)
class Doc:
    page_id: int
    title: str
    redirects: tuple[str, ...]
    terms: Counter[str]
    text_bytes: int


def write_shards(folder: Path) -> tuple[list[Path], dict[int, Doc]]:
    """The fixture wiki's search index dump with each article's text replaced."""
    docs: dict[int, Doc] = {}
    shards = []
    for n, shard in enumerate(index_shards(INDEX, "enwiki_content")):
        lines = []
        for doc in search_documents([shard]):
            page_id = int(doc["page_id"])
            doc["text"] = synthetic_text(page_id)
            lines.append(json.dumps({"index": {"_id": str(page_id)}}))
            lines.append(json.dumps(doc))
            if doc.get("namespace") == 0 and doc.get("page_type", "primary") == "primary":
                docs[page_id] = Doc(
                    page_id,
                    doc["title"],
                    tuple(r["title"] for r in doc.get("redirect", []) if r["namespace"] == 0),
                    Counter(doc["text"].split()),
                    int(doc.get("text_bytes") or 0),
                )
        path = folder / f"enwiki_content-{INDEX}-{n:05d}.json.bz2"
        path.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
        shards.append(path)
    return shards, docs


@dataclass
class Seeded:
    path: Path
    docs: dict[int, Doc]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    root = tmp_path_factory.mktemp("seeded")
    shards, docs = write_shards(root)
    settings = spec("enwiki", None)
    settings.update(cirrus=[str(s) for s in shards], pageviews=None, pageviews_day=None)
    build_translation_catalog(settings, str(root / "catalog"))
    return Seeded(root / "catalog", docs)


# --- Lucene's MoreLikeThis and BM25, written here --------------------------------------------


def f32(x: float) -> float:
    import struct

    return float(struct.unpack("f", struct.pack("f", x))[0])


def expected_similar(
    docs: dict[int, Doc],
    seeds: list[int],
    *,
    min_term_freq: int = 2,
    min_doc_freq: int = 2,
    max_query_terms: int = 25,
    percent: int = 30,
) -> dict[str, float]:
    """Title → score of every hit of ``morelike`` (the seeds' ids given, already resolved)."""
    n = len(docs)
    df: Counter[str] = Counter()
    for d in docs.values():
        df.update(d.terms.keys())
    tf: Counter[str] = Counter()
    for s in seeds:
        tf.update(docs[s].terms)
    scored = []
    for term, freq in tf.items():
        if freq < min_term_freq or df[term] < min_doc_freq:
            continue
        idf = 1 + math.log((n + 1) / (df[term] + 1))
        scored.append((freq * idf, term))
    scored.sort(reverse=True)
    # The vocabulary is smaller than any bound here: no tie falls at the cut.
    terms = [t for _, t in scored[: min(max_query_terms, 100)]]
    required = max(1, len(terms) * percent // 100)
    avgdl = sum(sum(d.terms.values()) for d in docs.values()) / n
    out = {}
    for d in docs.values():
        if d.page_id in seeds:
            continue
        matched = [t for t in terms if d.terms[t]]
        if not terms or len(matched) < required:
            continue
        length = sum(d.terms.values())
        score = 0.0
        for t in matched:
            idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
            freq = d.terms[t]
            score += idf * freq / (freq + 1.2 * (1 - 0.75 + 0.75 * length / avgdl))
        out[d.title] = score
    return out


def assert_hits(found: list[tuple[str, float]], want: dict[str, float]) -> None:
    assert {t for t, _ in found} == set(want)
    for title, score in found:
        assert score == pytest.approx(want[title], rel=1e-4), title
    scores = [s for _, s in found]
    assert scores == sorted(scores, reverse=True)


def by_title(docs: dict[int, Doc], title: str) -> int:
    return next(d.page_id for d in docs.values() if d.title == title)


def seed_titles(docs: dict[int, Doc]) -> list[str]:
    """Three articles with a redirect each, whose texts repeat a word (so morelike has terms)."""
    chosen = [
        d.title
        for d in sorted(docs.values(), key=lambda d: d.page_id)
        if d.redirects and max(d.terms.values()) >= 2
    ]
    assert len(chosen) >= 3
    return chosen[:3]


# --- similar -----------------------------------------------------------------------------------


def test_similar_is_lucenes_morelike(seeded: Seeded) -> None:
    engine = TranslationEngine.open(seeded.path)
    assert engine.manifest["search_index"] is True
    one, two, _ = seed_titles(seeded.docs)
    a, b = by_title(seeded.docs, one), by_title(seeded.docs, two)
    found = engine.similar(one)
    assert found, "the seed's repeated word is a query term"
    assert_hits(found, expected_similar(seeded.docs, [a]))
    both = engine.similar([one, two])
    assert_hits(both, expected_similar(seeded.docs, [a, b]))
    assert engine.similar(f"{one}|{two}") == both
    assert one not in dict(both) and two not in dict(both)
    assert engine.similar(one, limit=3) == found[:3]
    assert engine.similar(one, limit=0) == []


def test_redirects_missing_seeds_and_disambiguation_pages(seeded: Seeded) -> None:
    engine = TranslationEngine.open(seeded.path)
    title, *_ = seed_titles(seeded.docs)
    doc = seeded.docs[by_title(seeded.docs, title)]
    found = engine.similar(title)
    assert engine.similar(doc.redirects[0]) == found
    assert engine.similar([title, "No such article in the fixture"]) == found
    assert engine.similar("No such article in the fixture") == []
    assert engine.similar([]) == []
    # Disambiguation pages are hits, as the search cluster returns them.
    disambiguation = {
        integer(r[0])
        for r in sql_rows(run_file("enwiki", RUN, "page_props"), "page_props")
        if text(r[1]) == "disambiguation"
    }
    every = engine.similar(title, limit=10_000, min_term_freq=1, min_doc_freq=1)
    titles = {t for t, _ in every}
    assert {seeded.docs[p].title for p in disambiguation if p in seeded.docs} & titles


def test_parameters_apply_per_call(seeded: Seeded) -> None:
    engine = TranslationEngine.open(seeded.path)
    _, _, title = seed_titles(seeded.docs)
    seed = [by_title(seeded.docs, title)]
    cases: list[tuple[dict[str, int], str | None]] = [
        ({"min_term_freq": 1}, None),
        ({"min_term_freq": 1, "max_query_terms": 2}, None),
        ({"min_term_freq": 1}, "100%"),
        ({"min_doc_freq": 400, "min_term_freq": 1}, None),
    ]
    for counts, should_match in cases:
        want = expected_similar(
            seeded.docs,
            seed,
            min_term_freq=counts.get("min_term_freq", 2),
            min_doc_freq=counts.get("min_doc_freq", 2),
            max_query_terms=counts.get("max_query_terms", 25),
            percent=100 if should_match else 30,
        )
        found = engine.similar(
            title,
            limit=10_000,
            min_term_freq=counts.get("min_term_freq"),
            min_doc_freq=counts.get("min_doc_freq"),
            max_query_terms=counts.get("max_query_terms"),
            minimum_should_match=should_match,
        )
        assert_hits(found, want)
    # max_query_terms is capped at 100, as CirrusSearch caps it.
    assert engine.similar(title, max_query_terms=1000) == engine.similar(title, max_query_terms=100)
    assert wikisuggest.SIMILAR_DEFAULTS["limit"] == 500
    assert wikisuggest.SIMILAR_DEFAULTS["minimum_should_match"] == "30%"
    bad: list[dict[str, Any]] = [
        {"limit": -1},
        {"limit": 10_001},
        {"min_term_freq": -1},
        {"max_query_terms": 0},
        {"minimum_should_match": "most"},
    ]
    for arguments in bad:
        with pytest.raises(InvalidParameter):
            engine.similar(title, **arguments)
    with pytest.raises(InvalidParameter):
        engine.similar([title, 3])  # type: ignore[list-item]


def test_similar_async_and_threads(seeded: Seeded) -> None:
    engine = TranslationEngine.open(seeded.path)
    titles = seed_titles(seeded.docs)

    async def main() -> list[list[tuple[str, float]]]:
        return list(await asyncio.gather(*(engine.similar_async(t) for t in titles)))

    assert asyncio.run(main()) == [engine.similar(t) for t in titles]


# --- seed mode ---------------------------------------------------------------------------------


def missing_in(target: str) -> set[int]:
    """Page ids of the articles whose interlanguage links lack ``target``, disambiguation
    pages left out (production's rule, from the dumps)."""
    disambiguation = {
        integer(r[0])
        for r in sql_rows(run_file("enwiki", RUN, "page_props"), "page_props")
        if text(r[1]) == "disambiguation"
    }
    links: dict[int, set[str]] = defaultdict(set)
    for r in sql_rows(run_file("enwiki", RUN, "langlinks"), "langlinks"):
        links[integer(r[0])].add(text(r[1]))
    pages = {
        integer(r[0])
        for r in sql_rows(run_file("enwiki", RUN, "page"), "page")
        if integer(r[1]) == 0 and integer(r[3]) == 0
    }
    return {p for p in pages if p not in disambiguation and target not in links[p]}


@pytest.mark.parametrize("target", ["sw", "fr"])
def test_seed_mode_runs_productions_post_processing(seeded: Seeded, target: str) -> None:
    engine = TranslationEngine.open(seeded.path)
    title, *_ = seed_titles(seeded.docs)
    seed = by_title(seeded.docs, title)
    hits = expected_similar(seeded.docs, [seed])
    ids = {d.title: d.page_id for d in seeded.docs.values()}
    missing = missing_in(target)
    want = {t for t in hits if ids[t] in missing}
    items = engine.recommend(target, seed=title, count=500, rank_method="sitelinks")
    assert {i.title for i in items} == want and want
    counts = [i.langlinks_count or 0 for i in items]
    assert counts == sorted(counts, reverse=True)
    for item in items:
        assert item.size == seeded.docs[ids[item.title]].text_bytes
    # The default ranking shuffles the same items, reproducibly.
    shuffled = engine.recommend(target, seed=title, count=500, random_seed=3)
    assert {i.title for i in shuffled} == want
    assert engine.recommend(target, seed=title, count=5, random_seed=3) == shuffled[:5]
    assert engine.recommend(target, seed="No such article in the fixture") == []


def test_seed_beside_a_topic_is_a_filter(seeded: Seeded) -> None:
    engine = TranslationEngine.open(seeded.path)
    title, *_ = seed_titles(seeded.docs)
    # morelikethis: beside a topic, the seed only filters (every match, in a random order).
    topics = ("biography", "stem", "europe")
    for topic in topics:
        alone = {i.title for i in engine.recommend("sw", topic=topic, count=500, random_seed=1)}
        seeds = {i.title for i in engine.recommend("sw", seed=title, count=500, random_seed=1)}
        both = engine.recommend("sw", seed=title, topic=topic, count=500, random_seed=1)
        assert {i.title for i in both} == alone & seeds
    assert any(engine.recommend("sw", seed=title, topic=topic, count=500) for topic in topics)


def test_without_an_index_seed_requests_name_the_part(tmp_path: Path) -> None:
    settings = spec("enwiki", None)
    settings.update(cirrus=[], pageviews=None, pageviews_day=None)
    build_translation_catalog(settings, str(tmp_path / "bare"))
    engine = TranslationEngine.open(tmp_path / "bare")
    with pytest.raises(MissingCatalogPart, match="cirrus"):
        engine.similar("Moon")
    with pytest.raises(MissingCatalogPart, match="cirrus"):
        engine.recommend("sw", seed="Moon")


# --- the reference server ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(
    seeded: Seeded, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[wikisuggest.Server]:
    folder = tmp_path_factory.mktemp("server")
    with ref.start(folder, translation={"enwiki": seeded.path}) as running:
        yield running


def ask(server: wikisuggest.Server, **params: Any) -> Any:
    query = urllib.parse.urlencode(params)
    url = f"{server.url}/service/lw/recommendation/api/v1/translation?{query}"
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def test_the_server_answers_seed_requests(seeded: Seeded, server: wikisuggest.Server) -> None:
    engine = TranslationEngine.open(seeded.path)
    title, *_ = seed_titles(seeded.docs)
    answer = ask(server, source="en", target="sw", seed=title, count=500, rank_method="sitelinks")
    local = engine.recommend("sw", seed=title, count=500, rank_method="sitelinks")
    assert answer and {i["title"] for i in answer} == {i.title for i in local}
    assert ask(server, source="en", target="sw", seed="No such article in the fixture") == []
