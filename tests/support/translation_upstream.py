"""A loopback stand-in for what Wikimedia's translation recommender calls: api.php, Wikidata and
the Pageview API, answering from the translation fixture dumps.

The recommendation service (research-recommendation-api) asks, per request, a wiki's api.php for
``generator=search`` (CirrusSearch) or ``generator=mostviewed`` (PageViewInfo), with
``prop=langlinks|langlinkscount|pageprops[|info]``; then maybe ``prop=pageviews`` and
``action=parse&prop=sections``; and, to build its page collections, Meta's api.php
(``action=sitematrix``, ``meta=siteinfo&siprop=interwikimap``, ``generator=categorymembers``,
``list=pagecollectionsmetadata``, ``prop=iwlinks``), Wikidata's ``wbgetentities`` and
``prop=info`` on English Wikipedia. This server answers all of them from
``tests/data/translation/dumps`` (read with ``support.dump_formats``), the way MediaWiki and its
extensions do. The rules it follows, each as its upstream code does it (MediaWiki core,
CirrusSearch f930d425d, PageViewInfo 9e8a6da, WikimediaCampaignEvents 73aaa62, Wikibase):

Wikis and pages
  The host (``Host`` header) picks the wiki: ``en.wikipedia.org`` and ``simple.wikipedia.org``
  read their SQL dumps and search index; ``meta.wikimedia.org`` the metawiki dumps;
  ``www.wikidata.org`` ``wb_items_per_site``; any other ``*.wikipedia.org`` is an empty wiki.
  Titles are normalised as MediaWiki does (underscores → spaces, namespace prefixes, first letter
  upper case, ``#fragment`` dropped); titles with ``[]{}|<>`` are invalid.
Page sets (``titles=``, generators)
  Duplicates are merged; special pages and missing titles get fake ids -1, -2, … (special pages
  as they come, then missing titles grouped by namespace in order of first appearance);
  ``query.pages`` is sorted by id (``formatversion=2``: fake ids first, most negative first, then
  page ids ascending) — not in search or popularity order. More than 50 ``titles`` is the
  ``toomanyvalues`` error.
``generator=search``
  Keywords only (full-text and ``morelike`` are not implemented: they answer an error):
  ``articletopic:`` (lower-cased; ``|`` = any of; each term a label of the 64-term taxonomy,
  matched in both its underscore and space spelling under
  ``classification.prediction.articletopic/``), ``articlecountry:`` (lower-cased ISO 3166
  alpha-3 → ``classification.prediction.articlecountry/<country name>``), ``pageid:1|2``;
  separate keywords must all match; a keyword with no valid term matches nothing. Only
  namespace-0 documents that are not redirect documents match. ``gsrsort=random`` shuffles the
  match set with a generator seeded by the query, then takes ``gsrlimit`` (``max`` = 500);
  without it, hits are ordered by their summed tag scores. Each page gets ``index`` (1-based hit
  position) and ``size`` (the document's ``text_bytes``).
``generator=mostviewed``
  The Pageview API's top list of the last complete day (the day before :attr:`Upstream.today`)
  for the wiki's project, first ``gpvimlimit`` (``max`` = 500) entries; titles MediaWiki cannot
  parse are skipped after the cut (they use up places).
Top list (``/api/rest_v1/metrics/pageviews/top/…``)
  From that day's ``pageview_complete`` *user* file: views summed per title (all access
  methods, all page ids), most viewed first, at most 1000.
``prop=pageviews`` (``pvipdays``)
  Titles sorted by their prefixed database key; only the first 5 are looked up (PageViewInfo's
  per-request lookup limit), the rest are left to a continuation; each looked-up title gets the
  per-article views of the last ``pvipdays`` complete days (``null`` when the title has none).
``prop=langlinks`` (``lllang`` exact), ``prop=langlinkscount`` (rows in ``langlinks``, omitted
  when 0), ``prop=pageprops`` (``ppprop`` filter), ``prop=info`` (``length`` = ``page_len``).
``action=parse&prop=sections``
  The sections of the page's wikitext (``source_text`` of its search index document), each
  with the byte offset of its heading line: a line ``=…=`` (levels 1-6) outside comments,
  ``<nowiki>`` and ``<pre>``. ``redirects`` follows a redirect to its target; a missing page is
  the ``missingtitle`` error.
Collections (Meta)
  Category members from ``categorylinks``/``linktarget`` (``gcmnamespace`` filter);
  ``list=pagecollectionsmetadata`` from the ``<page-collection …>`` marker's attributes in the
  page's wikitext (``pages-articles``), missing attributes as ``""``; ``prop=iwlinks`` from
  ``iwlinks`` (sorted by prefix, then title; ``url`` from the interwiki map).
``wbgetentities``
  ``ids`` (missing items as ``{"id": …, "missing": ""}``) or ``sites``+``titles`` (titles with
  ``_`` read as spaces, no other normalisation; missing as ``"-1"``, ``"-2"``…); ``sitelinks``
  from ``wb_items_per_site``.

Every request is recorded (:attr:`Upstream.calls`), so a recording can say what production's
service asked for. ``POST /v1/events`` (analytics) is accepted and dropped.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import re
import threading
import unicodedata
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from support.dump_formats import (
    DUMPS,
    index_shards,
    pageview_file,
    pageview_rows,
    run_file,
    search_documents,
    sql_rows,
    xml_pages,
)
from support.dump_formats import integer as number
from support.dump_formats import text as string

RUN = "20260601"
INDEX_DATE = "20260607"
#: The day after the fixture's newest pageview file: its "last complete day" is 2026-06-14.
TODAY = dt.date(2026, 6, 15)
LOOKUP_LIMIT = 5
TOP_LIMIT = 1000
SERVED_BY = "mw-api-ext.loopback"
DOCREF = "See https://en.wikipedia.org/w/api.php for API usage."

NAMESPACES = {
    -2: "Media", -1: "Special", 0: "", 1: "Talk", 2: "User", 3: "User talk", 4: "Wikipedia",
    5: "Wikipedia talk", 6: "File", 7: "File talk", 8: "MediaWiki", 9: "MediaWiki talk",
    10: "Template", 11: "Template talk", 12: "Help", 13: "Help talk", 14: "Category",
    15: "Category talk", 100: "Portal", 101: "Portal talk", 118: "Draft", 119: "Draft talk",
    828: "Module", 829: "Module talk",
}  # fmt: skip
ALIASES = {"project": 4, "wp": 4, "image": 6, "project talk": 5}
META_NAMESPACES = {**{k: v for k, v in NAMESPACES.items() if k not in (100, 101, 118, 119)}}
META_NAMESPACES.update({4: "Meta", 5: "Meta talk"})
SPECIAL_PAGES = {"Search", "RecentChanges", "Random", "Watchlist", "Contributions"}
INVALID = re.compile(r"[\[\]{}|<>\x00-\x1f\x7f]")

#: CirrusSearch's articletopic terms → weighted-tag labels (ArticleTopicFeature, f930d425d).
TOPIC_TERMS = {
    "biography": "Culture.Biography.Biography*", "women": "Culture.Biography.Women",
    "food-and-drink": "Culture.Food_and_drink", "internet-culture": "Culture.Internet_culture",
    "linguistics": "Culture.Linguistics", "literature": "Culture.Literature",
    "books": "Culture.Media.Books", "entertainment": "Culture.Media.Entertainment",
    "films": "Culture.Media.Films", "media": "Culture.Media.Media*",
    "music": "Culture.Media.Music", "radio": "Culture.Media.Radio",
    "software": "Culture.Media.Software", "television": "Culture.Media.Television",
    "video-games": "Culture.Media.Video_games", "performing-arts": "Culture.Performing_arts",
    "philosophy-and-religion": "Culture.Philosophy_and_religion", "sports": "Culture.Sports",
    "architecture": "Culture.Visual_arts.Architecture",
    "comics-and-anime": "Culture.Visual_arts.Comics_and_Anime",
    "fashion": "Culture.Visual_arts.Fashion", "visual-arts": "Culture.Visual_arts.Visual_arts*",
    "geographical": "Geography.Geographical", "africa": "Geography.Regions.Africa.Africa*",
    "central-africa": "Geography.Regions.Africa.Central_Africa",
    "eastern-africa": "Geography.Regions.Africa.Eastern_Africa",
    "northern-africa": "Geography.Regions.Africa.Northern_Africa",
    "southern-africa": "Geography.Regions.Africa.Southern_Africa",
    "western-africa": "Geography.Regions.Africa.Western_Africa",
    "central-america": "Geography.Regions.Americas.Central_America",
    "north-america": "Geography.Regions.Americas.North_America",
    "south-america": "Geography.Regions.Americas.South_America",
    "asia": "Geography.Regions.Asia.Asia*", "central-asia": "Geography.Regions.Asia.Central_Asia",
    "east-asia": "Geography.Regions.Asia.East_Asia",
    "north-asia": "Geography.Regions.Asia.North_Asia",
    "south-asia": "Geography.Regions.Asia.South_Asia",
    "southeast-asia": "Geography.Regions.Asia.Southeast_Asia",
    "west-asia": "Geography.Regions.Asia.West_Asia",
    "eastern-europe": "Geography.Regions.Europe.Eastern_Europe",
    "europe": "Geography.Regions.Europe.Europe*",
    "northern-europe": "Geography.Regions.Europe.Northern_Europe",
    "southern-europe": "Geography.Regions.Europe.Southern_Europe",
    "western-europe": "Geography.Regions.Europe.Western_Europe",
    "oceania": "Geography.Regions.Oceania",
    "business-and-economics": "History_and_Society.Business_and_economics",
    "education": "History_and_Society.Education", "history": "History_and_Society.History",
    "military-and-warfare": "History_and_Society.Military_and_warfare",
    "politics-and-government": "History_and_Society.Politics_and_government",
    "society": "History_and_Society.Society",
    "transportation": "History_and_Society.Transportation",
    "biology": "STEM.Biology", "chemistry": "STEM.Chemistry", "computing": "STEM.Computing",
    "earth-and-environment": "STEM.Earth_and_environment", "engineering": "STEM.Engineering",
    "libraries-and-information": "STEM.Libraries_&_Information",
    "mathematics": "STEM.Mathematics", "medicine-and-health": "STEM.Medicine_&_Health",
    "physics": "STEM.Physics", "stem": "STEM.STEM*", "space": "STEM.Space",
    "technology": "STEM.Technology",
}  # fmt: skip
#: The articlecountry codes whose countries the fixture documents carry (the labels are
#: CirrusSearch's ArticleCountryFeature names). Other codes match no fixture document.
COUNTRY_TERMS = {
    "usa": "United States", "gbr": "United Kingdom", "fra": "France", "deu": "Germany",
    "ita": "Italy", "esp": "Spain", "rus": "Russia", "chn": "China", "jpn": "Japan",
    "ind": "India", "can": "Canada", "mex": "Mexico", "bra": "Brazil", "aus": "Australia",
    "egy": "Egypt", "grc": "Greece", "tur": "Turkey", "nga": "Nigeria", "ken": "Kenya",
    "tza": "Tanzania", "zaf": "South Africa", "kor": "South Korea", "prk": "North Korea",
    "irl": "Ireland", "nor": "Norway", "che": "Switzerland",
    "cod": "Democratic Republic of the Congo", "civ": "Ivory Coast", "blz": "Belize",
    "kaz": "Kazakhstan",
}  # fmt: skip
TOPIC_PREFIX = "classification.prediction.articletopic/"
COUNTRY_PREFIX = "classification.prediction.articlecountry/"

#: Wikipedias of the site matrix: language code → (database name, domain). Closed: ``aa``.
LANGUAGE_WIKIS = {
    code: (code.replace("-", "_") + "wiki", code)
    for code in [
        "en",
        "fr",
        "de",
        "es",
        "it",
        "ru",
        "ja",
        "zh",
        "pt",
        "pl",
        "nl",
        "ar",
        "uk",
        "sv",
        "fa",
        "ca",
        "ko",
        "fi",
        "he",
        "id",
        "no",
        "cs",
        "hu",
        "ro",
        "tr",
        "vi",
        "sr",
        "da",
        "bg",
        "el",
        "ms",
        "sh",
        "eu",
        "hr",
        "sk",
        "lt",
        "et",
        "sl",
        "hy",
        "gl",
        "simple",
        "hi",
        "th",
        "az",
        "ka",
        "kk",
        "uz",
        "be",
        "bn",
        "ta",
        "ur",
        "la",
        "eo",
        "ml",
        "mk",
        "lv",
        "sq",
        "af",
        "cy",
        "is",
        "te",
        "mr",
        "bs",
        "tl",
        "ga",
        "sw",
        "oc",
        "nn",
        "kn",
        "an",
        "ast",
        "br",
        "zh-yue",
        "als",
        "jv",
        "ku",
        "lb",
        "fy",
        "ky",
        "mn",
        "tg",
        "pa",
        "yo",
        "ha",
        "ig",
        "zu",
        "so",
        "am",
        "ne",
        "si",
        "my",
        "km",
        "aa",
    ]
}
LANGUAGE_WIKIS["be-x-old"] = ("be_x_oldwiki", "be-tarask")
#: Interwiki prefixes other than the language codes: prefix → URL.
EXTRA_INTERWIKI = {
    "d": "https://www.wikidata.org/wiki/$1",
    "wikidata": "https://www.wikidata.org/wiki/$1",
    "mw": "https://www.mediawiki.org/wiki/$1",
    "m": "https://meta.wikimedia.org/wiki/$1",
    "meta": "https://meta.wikimedia.org/wiki/$1",
    "commons": "https://commons.wikimedia.org/wiki/$1",
    "w": "https://en.wikipedia.org/wiki/$1",
    "nb": "https://no.wikipedia.org/wiki/$1",
    "yue": "https://zh-yue.wikipedia.org/wiki/$1",
    "be-tarask": "https://be-tarask.wikipedia.org/wiki/$1",
}


def ucfirst(text: str) -> str:
    return text[:1].upper() + text[1:]


def iso(stamp: str) -> str:
    """``20260523150033`` → ``2026-05-23T15:00:33Z``."""
    return f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[8:10]}:{stamp[10:12]}:{stamp[12:14]}Z"


@dataclass(frozen=True)
class Title:
    ns: int
    dbkey: str  # underscores

    def text(self, namespaces: dict[int, str]) -> str:
        prefix = namespaces.get(self.ns, "")
        name = self.dbkey.replace("_", " ")
        return f"{prefix}:{name}" if prefix else name

    def prefixed_dbkey(self, namespaces: dict[int, str]) -> str:
        return self.text(namespaces).replace(" ", "_")


def parse_title(raw: str, namespaces: dict[int, str]) -> Title | None:
    """MediaWiki's reading of a title string, or ``None`` for an invalid title."""
    text = unicodedata.normalize("NFC", raw).replace("_", " ")
    text = text.split("#", 1)[0]
    text = re.sub(r" +", " ", text).strip()
    if text.startswith(":"):
        text = text[1:].strip()
    if not text or INVALID.search(text):
        return None
    ns = 0
    prefix, sep, rest = text.partition(":")
    if sep:
        names = {name.lower(): key for key, name in namespaces.items() if name}
        names.update(ALIASES)
        key = names.get(prefix.strip().lower())
        if key is not None:
            ns, text = key, rest.strip()
            if not text:
                return None
    return Title(ns, ucfirst(text).replace(" ", "_"))


@dataclass
class Page:
    page_id: int
    title: Title
    is_redirect: bool
    is_new: bool
    length: int
    latest: int
    touched: str
    props: dict[str, str] = field(default_factory=dict)
    langlinks: dict[str, str] = field(default_factory=dict)


@dataclass
class Wiki:
    """One wiki: its page table, page props, langlinks and search index documents."""

    name: str
    project: str  # pageview project code, "en.wikipedia"
    namespaces: dict[int, str]
    pages: dict[int, Page] = field(default_factory=dict)
    by_title: dict[Title, int] = field(default_factory=dict)
    documents: list[dict[str, Any]] = field(default_factory=list)
    document_of: dict[int, dict[str, Any]] = field(default_factory=dict)
    redirect_target: dict[Title, Title] = field(default_factory=dict)

    @classmethod
    def empty(cls, name: str, project: str) -> Wiki:
        return cls(name, project, NAMESPACES)

    @classmethod
    def load(cls, name: str, project: str, namespaces: dict[int, str]) -> Wiki:
        wiki = cls(name, project, namespaces)
        wiki.add_pages(name)
        if run_file(name, RUN, "page_props").exists():
            for pp_page, pp_name, pp_value, _ in sql_rows(
                run_file(name, RUN, "page_props"), "page_props"
            ):
                if pp_page in wiki.pages:
                    wiki.pages[number(pp_page)].props[string(pp_name)] = string(pp_value)
        if run_file(name, RUN, "langlinks").exists():
            for ll_from, lang, title in sql_rows(run_file(name, RUN, "langlinks"), "langlinks"):
                if ll_from in wiki.pages:
                    wiki.pages[number(ll_from)].langlinks[string(lang)] = string(title)
        for document in search_documents(index_shards(INDEX_DATE, f"{name}_content")):
            wiki.documents.append(document)
            if document.get("page_type") != "redirect":
                page_id = int(document["page_id"])
                wiki.document_of[page_id] = document
                target = Title(0, str(document["title"]).replace(" ", "_"))
                for redirect in document.get("redirect") or []:
                    source = Title(int(redirect["namespace"]), redirect["title"].replace(" ", "_"))
                    wiki.redirect_target[source] = target
        return wiki

    def add_pages(self, name: str) -> None:
        """The rows of the wiki's page table."""
        for row in sql_rows(run_file(name, RUN, "page"), "page"):
            page = Page(
                page_id=number(row[0]),
                title=Title(number(row[1]), string(row[2])),
                is_redirect=bool(row[3]),
                is_new=bool(row[4]),
                length=number(row[9]),
                latest=number(row[8]),
                touched=string(row[6]),
            )
            self.pages[page.page_id] = page
            self.by_title[page.title] = page.page_id

    def page(self, title: Title) -> Page | None:
        page_id = self.by_title.get(title)
        return None if page_id is None else self.pages[page_id]


@dataclass
class PageSet:
    """MediaWiki's ApiPageSet for a list of title strings."""

    good: dict[int, Page] = field(default_factory=dict)
    missing: dict[int, Title] = field(default_factory=dict)
    special: dict[int, Title] = field(default_factory=dict)
    invalid: list[str] = field(default_factory=list)
    normalized: list[dict[str, str]] = field(default_factory=list)
    generator_data: dict[Title, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_titles(cls, wiki: Wiki, raw_titles: Iterable[str]) -> PageSet:
        found = cls()
        fake_id = -1
        seen: set[Title] = set()
        remaining: dict[int, list[Title]] = {}
        for raw in raw_titles:
            title = parse_title(raw, wiki.namespaces)
            if title is None:
                found.invalid.append(raw)
                continue
            shown = title.text(wiki.namespaces)
            if shown != raw and {"from": raw, "to": shown} not in found.normalized:
                found.normalized.append({"from": raw, "to": shown})
            if title in seen:
                continue
            seen.add(title)
            if title.ns == -1:
                found.special[fake_id] = title
                fake_id -= 1
                continue
            page = wiki.page(title)
            if page is None:
                remaining.setdefault(title.ns, []).append(title)
            else:
                found.good[page.page_id] = page
        for titles in remaining.values():
            for title in titles:
                found.missing[fake_id] = title
                fake_id -= 1
        return found

    @classmethod
    def from_page_ids(cls, wiki: Wiki, page_ids: Iterable[int]) -> PageSet:
        found = cls()
        for page_id in page_ids:
            if page_id in wiki.pages:
                found.good[page_id] = wiki.pages[page_id]
        return found

    def count(self) -> int:
        return len(self.good) + len(self.missing) + len(self.special)


class ApiError(Exception):
    def __init__(self, code: str, info: str, **extra: Any) -> None:
        super().__init__(info)
        self.code, self.info, self.extra = code, info, extra


def limit_of(value: str | None, default: int, maximum: int) -> int:
    if value is None:
        return default
    if value == "max":
        return maximum
    return max(1, min(int(value), maximum))


class Upstream:
    """The data and the answers; :class:`UpstreamServer` serves them over HTTP."""

    def __init__(self, today: dt.date = TODAY) -> None:
        self.today = today
        self.wikis = {
            "en.wikipedia.org": Wiki.load("enwiki", "en.wikipedia", NAMESPACES),
            "simple.wikipedia.org": Wiki.load("simplewiki", "simple.wikipedia", NAMESPACES),
        }
        self.meta = Wiki.empty("metawiki", "meta.wikimedia")
        self.meta.namespaces = META_NAMESPACES
        self.meta.add_pages("metawiki")
        self.meta_text = {
            p.page_id: p.text
            for p in xml_pages(run_file("metawiki", RUN, "pages-articles.xml.bz2"))
        }
        targets = {
            number(lt_id): Title(number(ns), string(title))
            for lt_id, ns, title in sql_rows(run_file("metawiki", RUN, "linktarget"), "linktarget")
        }
        self.category_members: dict[Title, list[tuple[str, int]]] = {}
        for row in sql_rows(run_file("metawiki", RUN, "categorylinks"), "categorylinks"):
            cl_from, sortkey, target_id = number(row[0]), string(row[1]), number(row[6])
            self.category_members.setdefault(targets[target_id], []).append((sortkey, cl_from))
        self.iwlinks: dict[int, list[tuple[str, str]]] = {}
        for iwl_from, prefix, title in sql_rows(run_file("metawiki", RUN, "iwlinks"), "iwlinks"):
            self.iwlinks.setdefault(number(iwl_from), []).append((string(prefix), string(title)))
        self.items: dict[int, dict[str, str]] = {}
        self.item_of: dict[tuple[str, str], int] = {}
        rows = sql_rows(run_file("wikidatawiki", RUN, "wb_items_per_site"), "wb_items_per_site")
        for _, item, site, title in rows:
            self.items.setdefault(number(item), {})[string(site)] = string(title)
            self.item_of[(string(site), string(title))] = number(item)
        self.views: dict[str, dict[str, dict[str, int]]] = {}  # day -> project -> title -> views
        self.calls: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    # --- pageviews (the Pageview API) ----------------------------------------------------

    def day_views(self, day: dt.date) -> dict[str, dict[str, int]]:
        key = day.strftime("%Y%m%d")
        if key not in self.views:
            counts: dict[str, dict[str, int]] = {}
            path = pageview_file(key)
            if path.exists():
                for row in pageview_rows(path):
                    titles = counts.setdefault(row.wiki, {})
                    titles[row.title] = titles.get(row.title, 0) + row.views
            self.views[key] = counts
        return self.views[key]

    @property
    def last_complete_day(self) -> dt.date:
        return self.today - dt.timedelta(days=1)

    def top(self, project: str, day: dt.date) -> list[tuple[str, int]]:
        """The day's most viewed titles of a project (``en.wikipedia``), as the top endpoint."""
        titles = self.day_views(day).get(project.removesuffix(".org"), {})
        ranked = sorted(titles.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:TOP_LIMIT]

    def per_article(
        self, project: str, title: str, start: dt.date, end: dt.date
    ) -> list[dict[str, Any]]:
        items = []
        day = start
        while day <= end:
            views = self.day_views(day).get(project.removesuffix(".org"), {}).get(title)
            if views is not None:
                items.append(
                    {
                        "project": project.removesuffix(".org"),
                        "article": title,
                        "granularity": "daily",
                        "timestamp": day.strftime("%Y%m%d00"),
                        "access": "all-access",
                        "agent": "user",
                        "views": views,
                    }
                )
            day += dt.timedelta(days=1)
        return items

    # --- api.php ------------------------------------------------------------------------

    def api(self, host: str, params: dict[str, str]) -> dict[str, Any]:
        try:
            return self._api(host, params)
        except ApiError as error:
            return {
                "error": {"code": error.code, "info": error.info, **error.extra, "docref": DOCREF},
                "servedby": SERVED_BY,
            }

    def _api(self, host: str, params: dict[str, str]) -> dict[str, Any]:
        action = params.get("action")
        if host == "www.wikidata.org":
            if action == "wbgetentities":
                return self.wbgetentities(params)
            raise ApiError("badvalue", f'Unrecognized value for parameter "action": {action}.')
        if host == "meta.wikimedia.org":
            wiki = self.meta
            if action == "sitematrix":
                return self.sitematrix()
        else:
            wiki = self.wikis.get(host) or Wiki.empty(
                host.split(".")[0] + "wiki", host.removesuffix(".org")
            )
        if action == "query":
            return self.query(wiki, params)
        if action == "parse":
            return self.parse(wiki, params)
        raise ApiError("badvalue", f'Unrecognized value for parameter "action": {action}.')

    def query(self, wiki: Wiki, params: dict[str, str]) -> dict[str, Any]:
        result: dict[str, Any] = {"batchcomplete": True}
        query: dict[str, Any] = {}
        cont: dict[str, Any] = {}
        if params.get("meta") == "siteinfo" and "interwikimap" in params.get("siprop", ""):
            query["interwikimap"] = self.interwiki_map()
        generator = params.get("generator")
        pageset: PageSet | None = None
        if generator == "search":
            pageset = self.search(wiki, params, cont)
        elif generator == "mostviewed":
            pageset = self.mostviewed(wiki, params, cont)
        elif generator == "categorymembers":
            pageset = self.categorymembers(wiki, params)
        elif generator:
            raise ApiError(
                "badvalue", f'Unrecognized value for parameter "generator": {generator}.'
            )
        elif "titles" in params:
            titles = params["titles"].split("|") if params["titles"] else []
            if len(titles) > 50:
                raise ApiError(
                    "toomanyvalues",
                    'Too many values supplied for parameter "titles". The limit is 50.',
                    limit=50,
                    lowlimit=50,
                    highlimit=500,
                )
            pageset = PageSet.from_titles(wiki, titles)
        if params.get("list") == "pagecollectionsmetadata":
            query["page_collections"] = self.collection_metadata(params.get("titles", ""))
        if pageset is not None and pageset.count():
            if pageset.normalized:
                query["normalized"] = pageset.normalized
            query["pages"] = self.page_entries(wiki, pageset, params, cont)
        if query:
            result["query"] = query
        if cont:
            result["continue"] = {**cont, "continue": "||"}
            del result["batchcomplete"]
        return result

    def page_entries(
        self, wiki: Wiki, pageset: PageSet, params: dict[str, str], cont: dict[str, Any]
    ) -> list[dict[str, Any]]:
        props = set(params.get("prop", "").split("|")) - {""}
        entries: dict[int, dict[str, Any]] = {}
        for fake_id, title in pageset.missing.items():
            entry: dict[str, Any] = {
                "ns": title.ns,
                "title": title.text(wiki.namespaces),
                "missing": True,
            }
            if "info" in props:
                entry.update(self.info_of(None))
            entries[fake_id] = entry
        for fake_id, title in pageset.special.items():
            entry = {"ns": -1, "title": title.text(wiki.namespaces), "special": True}
            if title.dbkey.split("/")[0] not in SPECIAL_PAGES:
                entry["missing"] = True
            entries[fake_id] = entry
        for page_id, page in pageset.good.items():
            entry = {
                "pageid": page_id,
                "ns": page.title.ns,
                "title": page.title.text(wiki.namespaces),
            }
            if "info" in props:
                entry.update(self.info_of(page))
            if "pageprops" in props:
                wanted = set(params["ppprop"].split("|")) if params.get("ppprop") else None
                shown = {k: v for k, v in page.props.items() if wanted is None or k in wanted}
                if shown:
                    entry["pageprops"] = dict(sorted(shown.items()))
            if "langlinks" in props:
                lang = params.get("lllang")
                links = [
                    {"lang": code, "title": title}
                    for code, title in sorted(page.langlinks.items())
                    if lang is None or code == lang
                ]
                if links:
                    entry["langlinks"] = links
            if "langlinkscount" in props and page.langlinks:
                entry["langlinkscount"] = len(page.langlinks)
            if "iwlinks" in props and self.iwlinks.get(page_id):
                entry["iwlinks"] = [
                    {"prefix": prefix, "title": title, "url": self.interwiki_url(prefix, title)}
                    for prefix, title in sorted(self.iwlinks[page_id])
                ]
            entries[page_id] = entry
        key_of = {entry["title"]: key for key, entry in entries.items()}
        for title, data in pageset.generator_data.items():
            key = key_of.get(title.text(wiki.namespaces))
            if key is not None:
                entries[key].update(data)
        if "pageviews" in props:
            self.add_pageviews(wiki, pageset, entries, params, cont)
        return [entries[key] for key in sorted(entries)]

    def info_of(self, page: Page | None) -> dict[str, Any]:
        info: dict[str, Any] = {
            "contentmodel": "wikitext",
            "pagelanguage": "en",
            "pagelanguagehtmlcode": "en",
            "pagelanguagedir": "ltr",
        }
        if page is not None:
            info.update(touched=iso(page.touched), lastrevid=page.latest, length=page.length)
            if page.is_redirect:
                info["redirect"] = True
            if page.is_new:
                info["new"] = True
        return info

    def add_pageviews(
        self,
        wiki: Wiki,
        pageset: PageSet,
        entries: dict[int, dict[str, Any]],
        params: dict[str, str],
        cont: dict[str, Any],
    ) -> None:
        days = int(params.get("pvipdays", "60"))
        keyed: dict[int, str] = {}
        for key, title in list(pageset.missing.items()) + list(pageset.special.items()):
            keyed[key] = title.prefixed_dbkey(wiki.namespaces)
        for key, page in pageset.good.items():
            keyed[key] = page.title.prefixed_dbkey(wiki.namespaces)
        ordered = sorted(keyed.items(), key=lambda kv: kv[1])
        start_at = params.get("pvipcontinue")
        if start_at is not None:
            ordered = [kv for kv in ordered if kv[1] >= start_at]
        end = self.last_complete_day
        start = end - dt.timedelta(days=days - 1)
        for position, (key, dbkey) in enumerate(ordered):
            if position == LOOKUP_LIMIT:
                cont["pvipcontinue"] = dbkey
                break
            items = {
                i["timestamp"]: i["views"]
                for i in self.per_article(wiki.project, dbkey, start, end)
            }
            values: dict[str, int | None] = {}
            day = start
            while day <= end:
                values[day.isoformat()] = items.get(day.strftime("%Y%m%d00"))
                day += dt.timedelta(days=1)
            entries[key]["pageviews"] = values

    # --- generators ---------------------------------------------------------------------

    def search(self, wiki: Wiki, params: dict[str, str], cont: dict[str, Any]) -> PageSet:
        query = params.get("gsrsearch", "")
        hits = self.search_hits(wiki, query, params.get("gsrsort"), params.get("gsrnamespace", "0"))
        offset = int(params.get("gsroffset", "0"))
        limit = limit_of(params.get("gsrlimit"), 10, 500)
        chosen = hits[offset : offset + limit]
        if len(hits) > offset + limit:
            cont["gsroffset"] = offset + limit
        pageset = PageSet.from_titles(wiki, [str(d["title"]) for d in chosen])
        want_size = "size" in params.get("gsrprop", "size|wordcount|timestamp|snippet").split("|")
        for index, document in enumerate(chosen, start=offset + 1):
            data: dict[str, Any] = {"index": index}
            if want_size:
                data["size"] = document["text_bytes"]
            pageset.generator_data[Title(0, str(document["title"]).replace(" ", "_"))] = data
        return pageset

    def search_hits(
        self, wiki: Wiki, query: str, sort: str | None, namespaces: str
    ) -> list[dict[str, Any]]:
        allowed_ns = {int(n) for n in namespaces.split("|") if n}
        tag_filters: list[set[str]] = []
        id_filters: list[set[int]] = []
        for token in query.split():
            key, sep, value = token.partition(":")
            if sep and key in ("articletopic", "articlecountry"):
                terms = value.lower().split("|")
                if key == "articletopic":
                    labels = [TOPIC_TERMS[t] for t in terms if t in TOPIC_TERMS]
                    tags = {TOPIC_PREFIX + label for label in labels}
                    tags |= {TOPIC_PREFIX + label.replace("_", " ") for label in labels}
                else:
                    tags = {COUNTRY_PREFIX + COUNTRY_TERMS[t] for t in terms if t in COUNTRY_TERMS}
                tag_filters.append(tags)
            elif sep and key == "pageid":
                id_filters.append({int(v) for v in value.split("|") if v.isdigit()})
            else:
                raise ApiError(
                    "unsupported",
                    "The loopback api.php answers keyword searches only "
                    "(articletopic:, articlecountry:, pageid:).",
                )
        matches: list[tuple[float, dict[str, Any]]] = []
        for document in wiki.documents:
            if document.get("page_type") == "redirect" or document["namespace"] not in allowed_ns:
                continue
            doc_tags: dict[str, int] = {}
            for tag in document.get("weighted_tags") or []:
                name, _, score = tag.rpartition("|")
                doc_tags[name] = int(score)
            if any(int(document["page_id"]) not in ids for ids in id_filters):
                continue
            found = [[doc_tags[t] for t in tags if t in doc_tags] for tags in tag_filters]
            if all(found):
                matches.append((sum(max(f) for f in found) / 1000, document))
        if sort == "random":
            rng = random.Random(hashlib.sha256(query.encode()).hexdigest())
            documents = [d for _, d in sorted(matches, key=lambda m: int(m[1]["page_id"]))]
            rng.shuffle(documents)
            return documents
        return [d for _, d in sorted(matches, key=lambda m: (-m[0], int(m[1]["page_id"])))]

    def mostviewed(self, wiki: Wiki, params: dict[str, str], cont: dict[str, Any]) -> PageSet:
        offset = int(params.get("gpvimoffset", "0"))
        limit = limit_of(params.get("gpvimlimit"), 10, 500)
        top = self.top(wiki.project, self.last_complete_day)
        if len(top) > offset + limit:
            cont["gpvimoffset"] = offset + limit
        titles = [title for title, _ in top[offset : offset + limit]]
        valid = [t for t in titles if parse_title(t, wiki.namespaces) is not None]
        return PageSet.from_titles(wiki, valid)

    def categorymembers(self, wiki: Wiki, params: dict[str, str]) -> PageSet:
        category = parse_title(params.get("gcmtitle", ""), wiki.namespaces)
        spaces = {int(n) for n in params.get("gcmnamespace", "").split("|") if n}
        members = sorted(self.category_members.get(category, [])) if category else []
        ids = [
            page_id
            for _, page_id in members
            if page_id in wiki.pages and (not spaces or wiki.pages[page_id].title.ns in spaces)
        ]
        return PageSet.from_page_ids(wiki, ids)

    # --- parse ----------------------------------------------------------------------------

    def parse(self, wiki: Wiki, params: dict[str, str]) -> dict[str, Any]:
        title = parse_title(params.get("page", ""), wiki.namespaces)
        page = wiki.page(title) if title else None
        if page is None:
            raise ApiError("missingtitle", "The page you specified doesn't exist.")
        redirects = []
        if page.is_redirect and "redirects" in params:
            target = wiki.redirect_target.get(page.title)
            if target is not None and wiki.page(target) is not None:
                redirects.append(
                    {"from": page.title.text(wiki.namespaces), "to": target.text(wiki.namespaces)}
                )
                page = wiki.page(target)
                assert page is not None
        document = wiki.document_of.get(page.page_id)
        text = str(document["source_text"]) if document else ""
        parsed: dict[str, Any] = {
            "title": page.title.text(wiki.namespaces),
            "pageid": page.page_id,
        }
        if redirects:
            parsed["redirects"] = redirects
        parsed["sections"] = sections(text, page.title.prefixed_dbkey(wiki.namespaces))
        parsed["showtoc"] = True
        return {"parse": parsed}

    # --- Meta and Wikidata ----------------------------------------------------------------

    def sitematrix(self) -> dict[str, Any]:
        matrix: dict[str, Any] = {"count": len(LANGUAGE_WIKIS)}
        for position, (code, (dbname, domain)) in enumerate(sorted(LANGUAGE_WIKIS.items())):
            site: dict[str, Any] = {
                "url": f"https://{domain}.wikipedia.org",
                "dbname": dbname,
                "code": "wiki",
                "sitename": "Wikipedia",
            }
            if code == "aa":
                site["closed"] = True
            matrix[str(position)] = {"code": code, "site": [site]}
        matrix[str(len(LANGUAGE_WIKIS))] = {"code": "be-tarask", "site": []}
        return {"sitematrix": matrix}

    def interwiki_map(self) -> list[dict[str, Any]]:
        entries = [
            {"prefix": code, "local": True, "url": f"https://{domain}.wikipedia.org/wiki/$1"}
            for code, (_, domain) in sorted(LANGUAGE_WIKIS.items())
        ]
        entries += [
            {"prefix": p, "local": True, "url": u} for p, u in sorted(EXTRA_INTERWIKI.items())
        ]
        return entries

    def interwiki_url(self, prefix: str, title: str) -> str:
        for entry in self.interwiki_map():
            if entry["prefix"] == prefix:
                return str(entry["url"]).replace(
                    "$1", urllib.parse.quote(title, safe="/:!$()*,;@~")
                )
        return ""

    def collection_metadata(self, titles: str) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for raw in titles.split("|") if titles else []:
            title = parse_title(raw, self.meta.namespaces)
            page = self.meta.page(title) if title else None
            metadata: dict[str, Any] = {}
            if page is not None:
                marker = re.search(
                    r"<page-collection\b([^>]*?)/?>", self.meta_text.get(page.page_id, "")
                )
                if marker:
                    metadata = {"lang": "en", "name": "", "description": "", "end-date": ""}
                    for key, _, double, single in re.findall(
                        r"""([\w-]+)\s*=\s*("([^"]*)"|'([^']*)')""", marker.group(1)
                    ):
                        metadata[key] = double or single
            found[raw] = metadata
        return found

    def wbgetentities(self, params: dict[str, str]) -> dict[str, Any]:
        entities: dict[str, Any] = {}

        def entity(item: int) -> dict[str, Any]:
            links = self.items[item]
            return {
                "type": "item",
                "id": f"Q{item}",
                "sitelinks": {
                    site: {"site": site, "title": links[site], "badges": []}
                    for site in sorted(links)
                },
            }

        if "ids" in params:
            ids = params["ids"].split("|")
            if len(ids) > 50:
                raise ApiError(
                    "toomanyvalues",
                    'Too many values supplied for parameter "ids". The limit is 50.',
                )
            for qid in ids:
                item_id = int(qid[1:]) if re.fullmatch(r"Q\d+", qid) else -1
                entities[qid] = (
                    entity(item_id) if item_id in self.items else {"id": qid, "missing": ""}
                )
        else:
            sites = params.get("sites", "").split("|")
            titles = params.get("titles", "").split("|")
            if len(titles) > 50:
                raise ApiError(
                    "toomanyvalues",
                    'Too many values supplied for parameter "titles". The limit is 50.',
                )
            missing = -1
            for site in sites:
                for raw in titles:
                    title = unicodedata.normalize("NFC", raw.strip()).replace("_", " ")
                    item = self.item_of.get((site, title))
                    if item is None:
                        entities[str(missing)] = {"site": site, "title": raw, "missing": ""}
                        missing -= 1
                    else:
                        entities[f"Q{item}"] = entity(item)
        return {"entities": entities, "success": 1}


def sections(text: str, fromtitle: str) -> list[dict[str, Any]]:
    """The headings of wikitext as ``action=parse&prop=sections`` lists them."""
    hidden = [
        (m.start(), m.end())
        for m in re.finditer(r"<!--.*?(-->|$)|<nowiki>.*?</nowiki>|<pre>.*?</pre>", text, re.S)
    ]
    found = []
    position = 0
    for line in text.split("\n"):
        start = position
        position += len(line) + 1
        if any(a <= start < b for a, b in hidden):
            continue
        match = re.fullmatch(r"(={1,6})(.+?)(={1,6})[ \t]*", line)
        if not match or not match.group(2).strip("= \t"):
            continue
        level = min(len(match.group(1)), len(match.group(3)))
        found.append((level, match.group(2).strip(), len(text[:start].encode())))
    out = []
    stack: list[int] = []
    counters: list[int] = []
    for index, (level, heading, offset) in enumerate(found, start=1):
        while stack and stack[-1] >= level:
            stack.pop()
        stack.append(level)
        depth = len(stack)
        if len(counters) >= depth:
            counters = counters[:depth]
            counters[-1] += 1
        else:
            counters.append(1)
        anchor = heading.replace(" ", "_")
        out.append(
            {
                "toclevel": depth,
                "level": str(level),
                "line": heading,
                "number": ".".join(str(n) for n in counters),
                "index": str(index),
                "fromtitle": fromtitle,
                "byteoffset": offset,
                "anchor": anchor,
                "linkAnchor": anchor,
            }
        )
    return out


class UpstreamServer:
    """:class:`Upstream` on 127.0.0.1 (port 0), started in a thread, stopped by :meth:`stop`.

    ``/w/api.php`` (any host name in ``Host``), ``/api/rest_v1/metrics/pageviews/top/…`` and
    ``…/per-article/…`` (the Pageview API), ``POST /v1/events``.
    """

    def __init__(self, upstream: Upstream | None = None) -> None:
        self.upstream = upstream or Upstream()
        self.server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> UpstreamServer:
        upstream = self.upstream

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def send(self, status: int, body: object) -> None:
                data = json.dumps(body, ensure_ascii=False).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                with upstream.lock:
                    upstream.calls.append(
                        {"method": "POST", "host": self.headers.get("Host"), "path": self.path}
                    )
                self.send(201, {})

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                host = (self.headers.get("Host") or "").split(":")[0]
                params = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
                with upstream.lock:
                    upstream.calls.append(
                        {"method": "GET", "host": host, "path": url.path, "params": params}
                    )
                if url.path == "/w/api.php":
                    self.send(200, upstream.api(host, params))
                    return
                parts = [urllib.parse.unquote(p) for p in url.path.split("/")]
                if parts[1:5] == ["api", "rest_v1", "metrics", "pageviews"] and len(parts) >= 11:
                    self.pageview_api(parts[5:])
                    return
                self.send(404, {"detail": "Not Found"})

            def pageview_api(self, parts: list[str]) -> None:
                not_found = {
                    "type": "https://mediawiki.org/wiki/HyperSwitch/errors/not_found",
                    "title": "Not found.",
                    "method": "get",
                    "detail": "The date(s) you used are valid, but we either do not have data "
                    "for those date(s), or the project you asked for is not loaded yet.",
                }
                if parts[0] == "top":
                    project, _, year, month, day = parts[1:6]
                    date = dt.date(int(year), int(month), int(day))
                    top = upstream.top(project, date)
                    if not top:
                        self.send(404, not_found)
                        return
                    articles = [
                        {"article": t, "views": v, "rank": r} for r, (t, v) in enumerate(top, 1)
                    ]
                    item = {
                        "project": project.removesuffix(".org"),
                        "access": "all-access",
                        "year": year,
                        "month": month,
                        "day": day,
                        "articles": articles,
                    }
                    self.send(200, {"items": [item]})
                    return
                project, _, _, title, _, start, end = parts[1:8]
                items = upstream.per_article(
                    project,
                    title,
                    dt.datetime.strptime(start[:8], "%Y%m%d").date(),
                    dt.datetime.strptime(end[:8], "%Y%m%d").date(),
                )
                if items:
                    self.send(200, {"items": items})
                else:
                    self.send(404, not_found)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


__all__ = ["DUMPS", "TODAY", "Title", "Upstream", "UpstreamServer", "parse_title", "sections"]
