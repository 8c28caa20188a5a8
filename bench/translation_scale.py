"""Translation catalog build at scale: time, peak memory and disk, extrapolated to enwiki.

Generates the dumps a catalog is built from, in the shape of English Wikipedia's and at
fractions of its size (``--fraction``, default 0.01 and 0.05), then builds the catalog from
them in a child process (``catalog_build``, the crate's example around
``wikisuggest_translation::build``: the function ``TranslationEngine.published`` and
``wikisuggest translation fetch|build`` call, with their options: one search-shard reader per
core, 1 GiB of sort buffers by default), twice: with the default budget and with 64 MiB,
which makes every sort spill to work files. Reported per build: wall time of each phase, CPU
time (user + system, all threads, read by the child at its end), peak resident memory (its
``VmHWM``), the peak of the build's work files (sampled every 0.2 s) and the catalog's size
on disk; then the engine opened on the catalog in a fresh process (what answering holds in
memory).

The generated dumps (every count below times the fraction; enwiki's figures of 2025-2026,
rounded; those marked *shape* are estimates of a distribution, not published counts):

* ``page.sql.gz``: 6.9 M articles, 10.1 M main-namespace redirects (17 M main-namespace
  pages) and 45 M pages of other namespaces (talk, user, file, category, template…; enwiki
  has about 62 M pages in all, which is what makes its ``page`` dump 2.4 GB of gzip). Page
  ids ascending with gaps, as the dump is ordered; ``page_len`` log-normal (articles: median
  3.5 kB) and the other columns as MediaWiki fills them.
* ``page_props.sql.gz``: per article ``wikibase_item`` (97 %), ``wikibase-shortdesc`` (85 %),
  ``page_image_free`` (45 %), ``page_image`` (25 %), ``defaultsort`` (12 %),
  ``kartographer_links`` (10 %), ``disambiguation`` (4 %); a few
  properties on redirects and other pages (*shape*: aimed at the dump's 0.47 GB).
* ``langlinks.sql.gz``: heavy-tailed links per article (*shape*: 45 % of articles none, the
  rest twice a Pareto variable of exponent 1.1, capped at 320 languages: 5 per article on
  average, 45 M rows for enwiki), popular languages more often, titles in the link's script;
  a few rows from categories, templates and modules.
* ``redirect.sql.gz``: one row per redirect (a few to sections, other namespaces, or
  missing titles).
* ``enwiki_content-*.json.bz2``: the search index dump, ``max(2, 64·F)`` shards (enwiki has
  64), one document per article in a shard picked by page id, with every field the dump has
  (``redirect``, ``weighted_tags`` with 1-6 article topics, 0-2 countries and other tag
  families, ``text_bytes``, ``source_text`` with section headings…) but short texts
  (``--text-chars``, default 1,200 characters of ``text`` and of ``source_text``): a real
  document is about 26 kB uncompressed (40 GB of bzip2 for 6.9 M documents, about 4.5 : 1).
* ``pageviews-YYYYMMDD-user.bz2``: one ``pageview_complete`` day: 15 M ``en.wikipedia``
  lines (titles of articles, redirects, other namespaces and missing pages, Zipf-distributed
  totals, one to three access methods per title) and 20 M lines of other projects (*shape*:
  aimed at the day file's 0.7 GB).

Extrapolation to enwiki: every phase streams its input once and sorts what it keeps by
external merge sort, so time grows with the rows (the merge's log factor is small next to
the parsing; the 64 MiB builds show what spilling costs); each phase's time is divided by
the fraction. The search phase reads short documents: its time is extrapolated twice, by
documents (lower bound) and by uncompressed bytes (upper bound: the JSON and bzip2 cost of
26 kB documents). The build's peak memory is bounded by the sort
budget (the small budget shows it: its peak does not grow with the fraction). Disk (the
catalog, the work files) and the opened engine's memory grow with the articles.

Run ``bash bench/run translation`` (``--fraction 0.02`` runs one size; ``--work-dir`` holds
the scratch files, removed afterwards unless ``--keep``).
"""

from __future__ import annotations

import argparse
import bz2
import concurrent.futures
import contextlib
import gzip
import json
import math
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "fixtures_builder"))

from make_translation_fixtures import (  # noqa: E402
    CREATE,
    LL_CODES,
    MYSQL_FOOTER,
    MYSQL_HEADER,
    NET_BUFFER,
    sql_value,
)

ENWIKI = {
    "articles": 6_900_000,
    "redirects": 10_100_000,
    "other pages": 45_000_000,
    "pageview lines": 15_000_000,
    "other project lines": 20_000_000,
    "search shards": 64,
}
# Published sizes, for comparing the generated dumps' shape.
ENWIKI_BYTES = {
    "page": 2.4e9,
    "page_props": 0.47e9,
    "langlinks": 0.45e9,
    "cirrus": 40e9,
    "pageviews": 0.7e9,
}
# A real search document, uncompressed (40 GB of bzip2 at about 4.5 : 1, 6.9 M documents).
REAL_DOCUMENT_BYTES = 26_000
RUN = "20260601"
INDEX_DATE = "20260607"
DAY = "20260614"
# The build's sort buffers: the default of `fetch` and `wikisuggest translation build`, and a
# small budget that makes every sort spill at these fractions (memory bounded by the budget).
DEFAULT_BUDGET_MB = 1024
SMALL_BUDGET_MB = 64
TOPIC_PREFIX = "classification.prediction.articletopic/"
COUNTRY_PREFIX = "classification.prediction.articlecountry/"
COUNTRIES = (
    "United States", "United Kingdom", "India", "Canada", "Australia", "France", "Germany",
    "Japan", "China", "Italy", "Spain", "Russia", "Brazil", "Mexico", "Ireland", "Nigeria",
    "South Africa", "Philippines", "Pakistan", "New Zealand", "Netherlands", "Sweden",
    "Poland", "Turkey", "Egypt", "Kenya", "Argentina", "South Korea", "Iran", "Indonesia",
)  # fmt: skip
WORDS = (
    "river", "church", "station", "battle", "album", "school", "county", "house", "film",
    "island", "song", "football", "club", "district", "mountain", "party", "election",
    "railway", "bridge", "lake", "village", "army", "league", "castle", "park", "airport",
    "museum", "novel", "ship", "temple", "university", "cup", "award", "series", "tower",
    "king", "queen", "saint", "john", "william", "maria", "george", "henry", "anna", "paul",
    "café", "zürich", "são", "kraków", "málaga", "dvořák", "øresund", "łódź", "ångström",
)  # fmt: skip
SCRIPTS = {
    "ru": "абвгдеёжзийклмнопрстуфхцчшщыэюя",
    "uk": "абвгдеєжзиіїйклмнопрстуфхцчшщюя",
    "bg": "абвгдежзийклмнопрстуфхцчшщъюя",
    "sr": "абвгдђежзијклљмнњопрстћуфхцчџш",
    "ja": "あいうえおかきくけこさしすせそたちつてと日本語東京大学",
    "zh": "中国人大学北京上海历史文化电影城市河山",
    "ko": "가나다라마바사아자차카타파하한국서울",
    "ar": "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
    "fa": "ابپتثجچحخدذرزژسشصضطظعغفقکگلمنوهی",
    "he": "אבגדהוזחטיכלמנסעפצקרשת",
    "hi": "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसह",
    "th": "กขคงจฉชซญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรลวศษสหฬอฮ",
    "el": "αβγδεζηθικλμνξοπρστυφχψω",
    "ka": "აბგდევზთიკლმნოპჟრსტუფქღყშჩცძწჭხჯჰ",
}


def topic_labels() -> list[str]:
    """The article topics the catalog knows (from the crate's table, its one owner)."""
    source = (REPO / "crates/wikisuggest-translation/src/topics.rs").read_text()
    labels = re.findall(r'\("[a-z-]+", "([A-Z][A-Za-z_.*]+)"\)', source)
    if len(labels) < 40:
        raise SystemExit("could not read the topic labels from topics.rs")
    return labels


def language_codes() -> list[str]:
    """About 330 interlanguage-link codes, most linked first: the fixtures' 91 real codes,
    then generated three-letter codes standing in for the smaller wikis."""
    codes = list(LL_CODES)
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    while len(codes) < 330:
        code = "".join(rng.choice(letters) for _ in range(3))
        if code not in codes:
            codes.append(code)
    return codes


class SqlWriter:
    """One table's dump as mysqldump writes it: the header, extended INSERTs cut at
    ``--net-buffer-length``, the footer; gzip."""

    def __init__(self, path: Path, table: str) -> None:
        self.path = path
        self.table = table
        # Closed by close(), after the footer.
        self.out = gzip.open(path, "wt", encoding="utf-8", compresslevel=6, newline="\n")  # noqa: SIM115
        create = CREATE[table].replace("{auto}", "0")
        self.out.write(
            MYSQL_HEADER.format(host="db1206.eqiad.wmnet", db="enwiki", table=table, create=create)
        )
        self.prefix = f"INSERT INTO `{table}` VALUES "
        self.parts: list[str] = []
        self.size = 0
        self.rows = 0

    def row(self, values: tuple[object, ...]) -> None:
        text = "(" + ",".join(sql_value(v) for v in values) + ")"
        n = len(text.encode()) + 1
        if self.parts and self.size + n > NET_BUFFER:
            self._flush()
        if not self.parts:
            self.size = len(self.prefix)
        self.parts.append(text)
        self.size += n
        self.rows += 1

    def _flush(self) -> None:
        self.out.write(self.prefix + ",".join(self.parts) + ";\n")
        self.parts = []

    def close(self) -> None:
        if self.parts:
            self._flush()
        self.out.write(MYSQL_FOOTER.format(table=self.table, completed="2026-06-02  3:14:15"))
        self.out.close()


def base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def article_title(i: int) -> str:
    """The stored title (underscores) of the i-th article: distinct, of enwiki's length."""
    a = WORDS[(i * 7919 + 3) % len(WORDS)]
    b = WORDS[(i * 104_729 + 11) % len(WORDS)]
    c = WORDS[(i // len(WORDS)) % len(WORDS)]
    return f"{a.capitalize()}_{b}_{c}_{base36(i)}"


def foreign_title(code: str, title: str, rng: random.Random) -> str:
    letters = SCRIPTS.get(code)
    if letters is None:
        return title.replace("_", " ")
    n = max(3, len(title) // 2)
    return "".join(rng.choice(letters) for _ in range(n))


def langlink_count(rng: random.Random) -> int:
    if rng.random() < 0.45:
        return 0
    return min(320, int(2 / (1 - rng.random()) ** (1 / 1.1)))


def pick_codes(codes: list[str], k: int, rng: random.Random) -> list[str]:
    """k distinct codes, popular ones more often."""
    if k > 40:
        head = codes[: k // 2]
        return head + rng.sample(codes[k // 2 :], k - len(head))
    chosen: set[int] = set()
    while len(chosen) < k:
        chosen.add(int(len(codes) * rng.random() ** 6))
    return [codes[i] for i in chosen]


def layout(fraction: float) -> tuple[list[int], str]:
    """Every page's id (ascending, with gaps) and kind: ``a``rticle, ``r``edirect in the main
    namespace, ``o``ther namespace."""
    rng = random.Random(1)
    left = {
        "a": max(1, round(ENWIKI["articles"] * fraction)),
        "r": round(ENWIKI["redirects"] * fraction),
        "o": round(ENWIKI["other pages"] * fraction),
    }
    ids: list[int] = []
    kinds: list[str] = []
    page_id = 9
    for _ in range(sum(left.values())):
        page_id += 1 + int(rng.expovariate(1 / 0.3))
        pick = rng.random() * (left["a"] + left["r"] + left["o"])
        kind = "a" if pick < left["a"] else "r" if pick < left["a"] + left["r"] else "o"
        left[kind] -= 1
        ids.append(page_id)
        kinds.append(kind)
    return ids, "".join(kinds)


def write_tables(src: Path, page_ids: list[int], kinds: str, rng: random.Random) -> dict[str, int]:
    """page, page_props, langlinks and redirect; returns the rows written."""
    n_articles = sum(1 for k in kinds if k == "a")
    codes = language_codes()
    tables = {
        name: SqlWriter(src / f"enwiki-{RUN}-{name}.sql.gz", name)
        for name in ("page", "page_props", "langlinks", "redirect")
    }
    page, props, links, redirect = (
        tables[n] for n in ("page", "page_props", "langlinks", "redirect")
    )
    redirect_i = other_i = article_i = 0
    other_namespaces = (1, 1, 1, 2, 3, 3, 3, 4, 5, 6, 6, 10, 11, 14, 14, 118, 828)
    for page_id, kind in zip(page_ids, kinds, strict=True):
        touched = f"202605{rng.randint(1, 31):02d}{rng.randint(0, 235959):06d}"
        latest = 1_000_000_000 + page_id * 3 + rng.randint(0, 2)
        if kind == "a":
            i = article_i
            article_i += 1
            title = article_title(i)
            length = int(math.exp(rng.gauss(math.log(3500), 1.1)))
            page.row(
                (
                    page_id,
                    0,
                    title,
                    0,
                    0,
                    rng.random(),
                    touched,
                    touched,
                    latest,
                    length,
                    "wikitext",
                    None,
                )
            )
            disambiguation = rng.random() < 0.04
            row_props: list[tuple[str, str]] = []
            if rng.random() < 0.12:
                row_props.append(("defaultsort", title.replace("_", " ").upper()[:30]))
            if disambiguation:
                row_props.append(("disambiguation", ""))
            if rng.random() < 0.1:
                row_props.append(("kartographer_links", str(rng.randint(1, 40))))
            if rng.random() < 0.25:
                row_props.append(("page_image", f"{title[:24]}_poster_{rng.randint(1, 99999)}.png"))
            if rng.random() < 0.45:
                row_props.append(("page_image_free", f"{title[:20]}_{rng.randint(1, 99999)}.jpg"))
            if rng.random() < 0.85:
                desc = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8)))
                row_props.append(("wikibase-shortdesc", desc.capitalize()))
            if rng.random() < 0.97:
                row_props.append(("wikibase_item", f"Q{rng.randint(1, 130_000_000)}"))
            for name, value in sorted(row_props):
                props.row((page_id, name, value, None))
            k = 0 if disambiguation else langlink_count(rng)
            for code in sorted(pick_codes(codes, k, rng)):
                links.row((page_id, code, foreign_title(code, title, rng)))
        elif kind == "r":
            redirect_i += 1
            title = f"{article_title(n_articles + redirect_i)}_(redirect)"
            length = rng.randint(20, 120)
            page.row(
                (
                    page_id,
                    0,
                    title,
                    1,
                    rng.random() < 0.2,
                    rng.random(),
                    touched,
                    touched,
                    latest,
                    length,
                    "wikitext",
                    None,
                )
            )
            target_i = min(n_articles - 1, int(n_articles * rng.random() ** 1.6))
            roll = rng.random()
            if roll < 0.02:
                target = (0, f"Missing_{base36(redirect_i)}", "", "")
            elif roll < 0.04:
                target = (4, f"WikiProject_{base36(redirect_i)}", "", "")
            elif roll < 0.10:
                target = (0, article_title(target_i), "", "History")
            else:
                target = (0, article_title(target_i), "", "")
            redirect.row((page_id, *target))
            if rng.random() < 0.05:
                props.row((page_id, "wikibase_item", f"Q{rng.randint(1, 130_000_000)}", None))
        else:
            other_i += 1
            ns = rng.choice(other_namespaces)
            title = f"{article_title(other_i * 7 + 3)}_{base36(other_i)}"
            is_redirect = rng.random() < 0.06
            length = int(math.exp(rng.gauss(math.log(1500), 1.4)))
            page.row(
                (
                    page_id,
                    ns,
                    title,
                    int(is_redirect),
                    0,
                    rng.random(),
                    touched,
                    touched,
                    latest,
                    length,
                    "wikitext",
                    None,
                )
            )
            if is_redirect:
                redirect.row((page_id, ns, f"{title}_target", "", ""))
            if ns in (10, 14, 828) and rng.random() < 0.5:
                props.row((page_id, "wikibase_item", f"Q{rng.randint(1, 130_000_000)}", None))
                if ns == 14 and rng.random() < 0.3:
                    props.row((page_id, "hiddencat", "", None))
                k = rng.randint(1, 12) if rng.random() < 0.3 else 0
                for code in sorted(pick_codes(codes, k, rng)):
                    links.row((page_id, code, foreign_title(code, title, rng)))
            elif rng.random() < 0.05:
                props.row((page_id, "noindex", "", None))
    counts = {name: w.rows for name, w in tables.items()}
    for w in tables.values():
        w.close()
    return counts


_POOL_RNG = random.Random(3)
# Text to cut documents from: long enough that bzip2 meets few long repeats.
POOL = " ".join(_POOL_RNG.choice(WORDS) for _ in range(1_000_000))


def words(rng: random.Random, chars: int) -> str:
    at = rng.randrange(len(POOL) - chars - 16)
    at = POOL.index(" ", at) + 1
    return POOL[at : at + chars].rsplit(" ", 1)[0]


def write_search(
    src: Path, fraction: float, article_ids: list[int], text_chars: int, rng: random.Random
) -> tuple[int, int]:
    """The search index dump: returns (documents, uncompressed bytes)."""
    shards = max(2, round(ENWIKI["search shards"] * fraction))
    folder = src / "cirrus_search_index" / INDEX_DATE / "index_name=enwiki_content"
    folder.mkdir(parents=True)
    with contextlib.ExitStack() as stack:
        outs = [
            stack.enter_context(
                bz2.open(
                    folder / f"enwiki_content-{INDEX_DATE}-{n:05d}.json.bz2", "wt", encoding="utf-8"
                )
            )
            for n in range(shards)
        ]
        raw = _write_documents(outs, article_ids, text_chars, rng)
    (folder / "_SUCCESS").write_bytes(b"")
    return len(article_ids), raw


def _write_documents(
    outs: list[Any], article_ids: list[int], text_chars: int, rng: random.Random
) -> int:
    shards = len(outs)
    topics = topic_labels()
    raw = 0
    for i, page_id in enumerate(article_ids):
        title = article_title(i).replace("_", " ")
        tags = [
            f"{TOPIC_PREFIX}{t}|{rng.randint(500, 1000)}"
            for t in rng.sample(topics, rng.randint(1, 6))
        ]
        tags += [
            f"{COUNTRY_PREFIX}{c}|{rng.randint(500, 1000)}"
            for c in rng.sample(COUNTRIES, rng.choice((0, 0, 1, 1, 1, 2)))
        ]
        if rng.random() < 0.3:
            tags.append("recommendation.link/exists|1")
        if rng.random() < 0.1:
            tags.append("recommendation.image/exists|1")
        lead = words(rng, text_chars // 3)
        body = words(rng, text_chars - len(lead))
        source_text = (
            f"{{{{Short description|{words(rng, 30)}}}}}\n'''{title}''' {lead}\n"
            f"== History ==\n{body}\n== References ==\n{{{{Reflist}}}}"
        )
        doc = {
            "page_id": page_id,
            "namespace": 0,
            "namespace_text": "",
            "title": title,
            "timestamp": "2026-05-27T20:29:48Z",
            "create_timestamp": "2011-11-06T01:04:59Z",
            "version": 1_100_000_000 + i,
            "wiki": "enwiki",
            "page_type": "primary",
            "category": [words(rng, 20).capitalize() for _ in range(rng.randint(1, 8))],
            "template": ["Template:Short description", "Template:Reflist", "Template:Cite web"],
            "outgoing_link": [
                article_title(rng.randrange(len(article_ids))) for _ in range(rng.randint(0, 12))
            ],
            "external_link": [f"https://example.org/{base36(i)}"],
            "heading": ["History", "References"],
            "text": f"{lead} History {body}",
            "opening_text": lead,
            "auxiliary_text": [],
            "source_text": source_text,
            "text_bytes": int(math.exp(rng.gauss(math.log(3500), 1.1))),
            "content_model": "wikitext",
            "language": "en",
            "defaultsort": False,
            "display_title": None,
            "redirect": [
                {"namespace": 0, "title": f"{title} alt {k}"}
                for k in range(rng.choice((0, 0, 1, 1, 2, 4)))
            ],
            "incoming_links": rng.randint(0, 5000),
            "popularity_score": rng.random() * 1e-5,
            "coordinates": [],
            "wikibase_item": f"Q{rng.randint(1, 130_000_000)}",
            "weighted_tags": tags,
        }
        encoded = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        line = f'{{"index":{{"_id":"{page_id}"}}}}\n{encoded}\n'
        raw += len(line.encode())
        outs[(page_id * 2_654_435_761) % shards].write(line)
    return raw


def hourly(total: int, rng: random.Random) -> str:
    hours = min(24, max(1, total))
    first = rng.randint(0, 24 - hours)
    each, extra = divmod(total, hours)
    return "".join(f"{chr(65 + first + h)}{each + (1 if h < extra else 0)}" for h in range(hours))


def write_pageviews(
    src: Path, fraction: float, article_ids: list[int], n_redirects: int, rng: random.Random
) -> tuple[Path, int]:
    """One pageview_complete day: the wiki's lines sorted by title among other projects'."""
    path = src / f"pageviews-{DAY}-user.bz2"
    n_en = round(ENWIKI["pageview lines"] * fraction)
    n_other = round(ENWIKI["other project lines"] * fraction)
    lines: list[str] = []
    n_articles = len(article_ids)
    made = 0
    while made < n_en:
        roll = rng.random()
        if roll < 0.75:
            i = min(n_articles - 1, int(n_articles * rng.random() ** 1.3))
            title, pid = article_title(i), str(article_ids[i])
        elif roll < 0.85 and n_redirects:
            title, pid = (
                f"{article_title(n_articles + rng.randint(1, n_redirects))}_(redirect)",
                "null",
            )
        elif roll < 0.95:
            title, pid = f"Special:Search/{rng.choice(WORDS)}_{base36(made)}", "null"
        else:
            title, pid = f"Missing_{base36(made)}", "null"
        total = max(1, int(1 / (1 - rng.random()) ** 1.2))
        for access in rng.sample(
            ("desktop", "mobile-web", "mobile-app"), rng.choice((1, 1, 2, 2, 3))
        ):
            lines.append(f"en.wikipedia {title} {pid} {access} {total} {hourly(total, rng)}")
            made += 1
    projects = (
        "de.wikipedia",
        "fr.wikipedia",
        "ja.wikipedia",
        "commons.wikimedia",
        "zh.wikipedia",
        "es.wikipedia",
        "ru.wikipedia",
        "www.wikidata",
    )
    for k in range(n_other):
        total = max(1, int(1 / (1 - rng.random()) ** 1.2))
        lines.append(
            f"{rng.choice(projects)} {rng.choice(WORDS).capitalize()}_{base36(k)} {k + 10}"
            f" desktop {total} {hourly(total, rng)}"
        )
    lines.sort()
    with bz2.open(path, "wt", encoding="utf-8") as out:
        for line in lines:
            out.write(line + "\n")
    return path, len(lines)


def du(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):  # a work file removed meanwhile
                total += (Path(root) / name).stat().st_size
    return total


def _tables_job(src: Path, fraction: float) -> dict[str, int]:
    ids, kinds = layout(fraction)
    return write_tables(src, ids, kinds, random.Random(2))


def generate(src: Path, fraction: float, text_chars: int) -> dict[str, object]:
    """The dumps, the SQL tables in a second process while this one writes the rest."""
    started = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(1) as pool:
        tables = pool.submit(_tables_job, src, fraction)
        ids, kinds = layout(fraction)
        article_ids = [i for i, k in zip(ids, kinds, strict=True) if k == "a"]
        del ids, kinds
        rng = random.Random(4)
        docs, raw = write_search(src, fraction, article_ids, text_chars, rng)
        pageviews, lines = write_pageviews(
            src, fraction, article_ids, round(ENWIKI["redirects"] * fraction), rng
        )
        rows = tables.result()
    sizes = {p.name: p.stat().st_size for p in src.rglob("*") if p.is_file()}
    return {
        "rows": rows,
        "documents": docs,
        "document bytes": raw,
        "pageview lines": lines,
        "pageviews": pageviews,
        "sizes": sizes,
        "seconds": time.perf_counter() - started,
    }


def build(binary: Path, src: Path, out: Path, memory_mb: int) -> dict[str, Any]:
    shards = sorted(src.rglob("enwiki_content-*.json.bz2"))
    args = [str(binary), "--wiki", "enwiki"]
    for flag, name in (
        ("--page", "page"),
        ("--page-props", "page_props"),
        ("--langlinks", "langlinks"),
        ("--redirect", "redirect"),
    ):
        args += [flag, str(src / f"enwiki-{RUN}-{name}.sql.gz")]
    for shard in shards:
        args += ["--cirrus", str(shard)]
    args += ["--pageviews", str(src / f"pageviews-{DAY}-user.bz2"), "--out", str(out)]
    args += ["--memory-mb", str(memory_mb)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_disk = [0]
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            peak_disk[0] = max(peak_disk[0], du(out.parent))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    started = time.perf_counter()
    child = subprocess.run(args, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    done.set()
    watcher.join()
    if child.returncode:
        raise SystemExit(f"the build failed:\n{child.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    marks = [line.split(" ", 1) for line in child.stderr.splitlines() if line[:1].isdigit()]
    phases = {name: float(marks[k + 1][0]) - float(at) for k, (at, name) in enumerate(marks[:-1])}
    printed = json.loads(child.stdout)
    return {
        "wall": float(marks[-1][0]),
        "cpu": printed["build_cpu_seconds"],
        "process wall": wall,
        "process cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "process peak rss": after.ru_maxrss * 1024,
        "peak rss": printed["build_peak_rss_kib"] * 1024,
        "peak disk": peak_disk[0],
        "catalog": du(out),
        "phases": phases,
        "counts": printed["manifest"]["counts"],
    }


def open_engine(binary: Path, catalog: Path) -> dict[str, Any]:
    """The engine opened on the catalog in a fresh process: seconds and resident bytes."""
    child = subprocess.run(
        [str(binary), "--open", str(catalog)], capture_output=True, text=True, check=True
    )
    printed = json.loads(child.stdout)
    return {
        "open seconds": printed["open_seconds"],
        "open rss": printed["open_rss_kib"] * 1024,
        "rss before": printed["rss_before_kib"] * 1024,
    }


def mb(n: float) -> str:
    return f"{n / 1e6:,.0f} MB" if n < 1e9 else f"{n / 1e9:,.2f} GB"


def report(
    fraction: float,
    made: dict[str, Any],
    results: dict[int, dict[str, Any]],
    opened: dict[str, Any],
) -> None:
    f = fraction
    sizes: dict[str, int] = made["sizes"]
    print(f"\n== fraction {f:g} of enwiki (dumps generated in {made['seconds']:.0f} s) ==")
    print("dumps: generated, / fraction, enwiki's published size")
    groups = {
        name: sum(v for n, v in sizes.items() if f"-{name}.sql" in n)
        for name in ("page", "page_props", "langlinks", "redirect")
    }
    groups["cirrus"] = sum(v for n, v in sizes.items() if n.startswith("enwiki_content-"))
    groups["pageviews"] = sum(v for n, v in sizes.items() if n.startswith("pageviews-"))
    for name, size in groups.items():
        ref = ENWIKI_BYTES.get(name)
        vs = f"   {mb(ref)}" if ref else ""
        print(f"  {name:<11} {mb(size):>10} {mb(size / f):>10}{vs}")
    per_doc = made["document bytes"] / made["documents"]
    print(f"  rows {made['rows']}")
    print(
        f"  search documents {made['documents']:,} ({per_doc:,.0f} B each uncompressed), "
        f"pageview lines {made['pageview lines']:,}"
    )
    for budget, result in results.items():
        phases: dict[str, float] = result["phases"]
        wall, cpu = float(result["wall"]), float(result["cpu"])
        print(
            f"build, {budget} MiB of sort buffers (load {result['load']:.1f}):"
            f" wall {wall:.1f} s, CPU {cpu:.1f} s,"
            f" peak RSS {mb(result['peak rss'])}, peak disk of the build"
            f" {mb(result['peak disk'])}, catalog {mb(result['catalog'])}"
        )
        print("  phases (wall s): " + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
    print(f"  counts {json.dumps(result['counts'])}")
    engine_bytes = opened["open rss"] - opened["rss before"]
    print(
        f"engine opened on the catalog: {opened['open seconds']:.2f} s,"
        f" {mb(engine_bytes)} resident ({mb(opened['open rss'])} in all)"
    )
    result = results[DEFAULT_BUDGET_MB]
    phases = result["phases"]
    wall, cpu = float(result["wall"]), float(result["cpu"])
    search = phases.get("search documents", 0.0)
    rest = wall - search
    scale = REAL_DOCUMENT_BYTES / per_doc
    low, high = (rest + search) / f, (rest + search * scale) / f
    print("enwiki, extrapolated (default budget):")
    print(
        f"  wall = (other phases {rest:.1f} s + search documents {search:.1f} s"
        f" x [1 .. {REAL_DOCUMENT_BYTES:,} / {per_doc:,.0f}]) / {f:g}"
        f" = {low / 60:,.0f} .. {high / 60:,.0f} min at this load"
    )
    print(
        f"  CPU = wall x {cpu / wall:.2f} (this run's CPU / wall)"
        f" = {low * cpu / wall / 60:,.0f} .. {high * cpu / wall / 60:,.0f} min"
    )
    print(
        f"  catalog = {mb(result['catalog'])} / {f:g} = {mb(result['catalog'] / f)};"
        f" build's peak disk = {mb(result['peak disk'] / f)} (besides the dumps)"
    )
    print(f"  engine opened = {mb(engine_bytes)} / {f:g} = {mb(engine_bytes / f)} resident")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--fraction", default="0.01,0.05", help="fractions of enwiki, comma-separated"
    )
    parser.add_argument("--text-chars", type=int, default=1200)
    parser.add_argument("--work-dir", type=Path, default=REPO / "target" / "bench-translation")
    parser.add_argument(
        "--binary", type=Path, default=REPO / "target" / "release" / "examples" / "catalog_build"
    )
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    print(f"commit {commit}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at start")
    for fraction in (float(x) for x in args.fraction.split(",")):
        work = args.work_dir / f"f{fraction:g}"
        shutil.rmtree(work, ignore_errors=True)
        src = work / "dumps"
        src.mkdir(parents=True)
        try:
            made = generate(src, fraction, args.text_chars)
            results = {}
            for budget in (DEFAULT_BUDGET_MB, SMALL_BUDGET_MB):
                out = work / f"catalogs-{budget}" / "enwiki"
                out.parent.mkdir(parents=True)
                load = os.getloadavg()[0]
                results[budget] = build(args.binary, src, out, budget) | {"load": load}
            opened = open_engine(args.binary, work / f"catalogs-{DEFAULT_BUDGET_MB}" / "enwiki")
            report(fraction, made, results, opened)
        finally:
            if not args.keep:
                shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
