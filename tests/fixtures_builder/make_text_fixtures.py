#!/usr/bin/env python3
"""Write differential fixtures for the `wikisuggest-text` crate.

For every article it records what the production Python libraries produce:

* `partition`: mwparserfromhell 0.7.2's top-level nodes as
  `[kind, start, end, heading_level]` (code point offsets; level 0 if not a heading);
* `sections`: mwparserfromhell's flat sections (lead first) as
  `[stripped_heading_title_or_null, length]`;
* `wikilinks`: wikitextparser 0.51.1's wikilinks at every depth as
  `[title, text_or_null, start, end]`;
* `pipeline` (parity articles only): the dataset rows the link pass can
  touch (anchors whose key occurs in the lowercased page, redirects, the
  pageids of existing link targets) and the production engine's outputs for
  the `api` and `exhaustive` configurations;
* `text_nodes`: for every top-level Text node (in order), its sentences as
  the engine splits them (lines, then mwtokenizer 0.2.0 sentences) and each
  sentence's word tokens.

Inputs: the parity articles in `tests/data/parity/articles/` and the articles
of the enwiki sample shipped in the gensim 4.4.0 wheel.  Run it in a venv with
the pinned libraries:

    python -m venv .venv
    .venv/bin/pip install mwparserfromhell==0.7.2 wikitextparser==0.51.1 \
        mwtokenizer==0.2.0 regex==2022.10.31
    pip download --no-deps --only-binary :all: --python-version 3.11 \
        --platform manylinux_2_28_x86_64 gensim==4.4.0 -d /tmp/gensim
    .venv/bin/python tests/fixtures_builder/make_text_fixtures.py \
        --gensim-wheel /tmp/gensim/gensim-4.4.0-*.whl --out /tmp/text-fixtures

The Rust tests read the output directory from `WIKISUGGEST_TEXT_FIXTURES`.
With `--only NAME ...` it writes just those parity articles (how the small
committed set under `tests/data/text/` is made).
"""

from __future__ import annotations

import argparse
import bz2
import glob
import hashlib
import json
import os
import random
import sys
import xml.etree.ElementTree as ET
import zipfile

import mwparserfromhell
import mwtokenizer
import wikitextparser

GENSIM_MEMBER = (
    "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)
GENSIM_SHA256 = "a53f4648dec40467ebdcbc7a1307eddb51fe6e28e9309f6ebde81ba0d04bea2d"
SOUP = [
    "{",
    "}",
    "[",
    "]",
    "|",
    "=",
    "<",
    ">",
    "/",
    "'",
    "!",
    "-",
    ":",
    ";",
    "*",
    "#",
    "&",
    "\n",
    " ",
    "a",
    "b",
    "é",
    "http://",
    "mailto:",
    "ref",
    "nowiki",
    "br",
    "li",
    "math",
    "!--",
    "amp;",
    "#123;",
    "{|",
    "|}",
    "|-",
    "||",
    "!!",
    "{{",
    "}}",
    "[[",
    "]]",
    "''",
    "'''",
    "==",
    '"',
    "x.org",
    "<ref>",
    "</ref>",
    "<br/>",
    "{{a|",
    "[[a|",
    ". ",
    "Mr. ",
    "\x1c",
    "。",
]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PARITY = os.path.join(REPO, "tests", "data", "parity", "articles")

assert mwparserfromhell.__version__ == "0.7.2", mwparserfromhell.__version__
assert wikitextparser.__version__ == "0.51.1", wikitextparser.__version__


def partition(wikitext: str) -> list[list]:
    out, pos = [], 0
    for node in mwparserfromhell.parse(wikitext).nodes:
        text = str(node)
        kind = type(node).__name__
        level = node.level if kind == "Heading" else 0
        out.append([kind, pos, pos + len(text), level])
        pos += len(text)
    assert pos == len(wikitext)
    return out


def sections(wikitext: str) -> list[list]:
    out = []
    for section in mwparserfromhell.parse(wikitext).get_sections(
        include_lead=True, include_headings=True, flat=True
    ):
        first = section.nodes[0] if section.nodes else None
        title = (
            str(first.title).strip() if isinstance(first, mwparserfromhell.nodes.Heading) else None
        )
        out.append([title, len(str(section))])
    return out


def wikilinks(wikitext: str) -> list[list]:
    return [
        [wl.title, wl.text, wl.span[0], wl.span[1]]
        for wl in wikitextparser.parse(wikitext).wikilinks
    ]


def tokenization(wikitext: str, tokenizer: mwtokenizer.Tokenizer) -> list[list]:
    nodes = []
    for node in mwparserfromhell.parse(wikitext).filter_text(recursive=False):
        sentences = []
        for line in node.value.split("\n"):
            if not line:
                continue
            for sentence in tokenizer.sentence_tokenize(line, use_abbreviation=True):
                sentences.append(
                    [sentence, list(tokenizer.word_tokenize(sentence, use_abbreviation=True))]
                )
        nodes.append([node.value, sentences])
    return nodes


def record(name: str, source: str, wikitext: str, tokenizer) -> dict:
    return {
        "name": name,
        "source": source,
        "wikitext": wikitext,
        "partition": partition(wikitext),
        "wikilinks": wikilinks(wikitext),
        "sections": sections(wikitext),
        "text_nodes": tokenization(wikitext, tokenizer),
    }


DATASETS = os.path.join(REPO, "tests", "data", "parity", "datasets", "enwiki")
EXPECTED = os.path.join(REPO, "tests", "data", "parity", "expected")
_SQL_ESCAPES = {
    b"0": b"\0",
    b"'": b"'",
    b'"': b'"',
    b"\\": b"\\",
    b"n": b"\n",
    b"r": b"\r",
    b"Z": b"\x1a",
}


def _sql_string(line: bytes, i: int) -> tuple[bytes, int]:
    """Reads a quoted MySQL string literal starting at line[i] == "'"."""
    out = bytearray()
    i += 1
    while True:
        c = line[i : i + 1]
        if c == b"\\":
            nxt = line[i + 1 : i + 2]
            out += _SQL_ESCAPES.get(nxt, nxt)
            i += 2
        elif c == b"'":
            if line[i + 1 : i + 2] == b"'":
                out += b"'"
                i += 2
            else:
                return bytes(out), i + 1
        else:
            out += c
            i += 1


def load_table(name: str) -> dict:
    """`lookup -> unpickled value` from a published `.sql.gz` dump."""
    import gzip
    import pickle

    table = {}
    with gzip.open(os.path.join(DATASETS, f"lr_enwiki_{name}.sql.gz"), "rb") as f:
        for line in f:
            if not line.startswith(b"INSERT INTO"):
                continue
            i = line.index(b"VALUES (") + len(b"VALUES (")
            i = line.index(b",", i) + 1
            key, i = _sql_string(line, i)
            value, i = _sql_string(line, i + 1)
            table[key.decode("utf-8")] = pickle.loads(value)
    return table


def normalise_title(title: str) -> str:
    from urllib.parse import unquote

    title = unquote(title).strip()
    if title:
        title = title[0].upper() + title[1:]
    return title.replace("_", " ").split("#")[0]


def pipeline_fixture(stem: str, wikitext: str, tables: dict) -> dict:
    """What the link pass needs for one parity article: the dataset rows it
    can touch and the production outputs for both configurations."""
    anchors, redirects, pageids = tables["anchors"], tables["redirects"], tables["pageids"]
    lowered = wikitext.lower()
    sub_anchors = {k: list(v.items()) for k, v in anchors.items() if k and k in lowered}
    titles = set()
    for wl in wikitextparser.parse(wikitext).wikilinks:
        t = normalise_title(wl.title)
        titles.add(redirects.get(t, t))
    manifest = {}
    with open(os.path.join(PARITY, "manifest.tsv"), encoding="utf-8") as f:
        next(f)
        for row in f:
            cols = row.rstrip("\n").split("\t")
            manifest[cols[0]] = cols
    page_title = manifest[f"enwiki/{stem}.wikitext"][1]
    titles.add(normalise_title(page_title))
    expected = {}
    for config in ("api", "exhaustive"):
        with open(os.path.join(EXPECTED, config, "enwiki", stem + ".json"), encoding="utf-8") as f:
            expected[config] = json.load(f)["links"]
    return {
        "page_title": page_title,
        "anchors": sub_anchors,
        "redirects": redirects,
        "pageids": sorted(t for t in titles if t in pageids),
        "expected": expected,
    }


def gensim_articles(wheel: str):
    with zipfile.ZipFile(wheel) as zf:
        raw = zf.read(GENSIM_MEMBER)
    if hashlib.sha256(raw).hexdigest() != GENSIM_SHA256:
        sys.exit("gensim sample: sha256 mismatch")
    root = ET.fromstring(bz2.decompress(raw))
    ns = root.tag.split("}")[0] + "}"
    for page in root.iter(ns + "page"):
        if page.findtext(ns + "ns") != "0" or page.find(ns + "redirect") is not None:
            continue
        title = page.findtext(ns + "title")
        text = page.find(ns + "revision").findtext(ns + "text") or ""
        yield title, text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--gensim-wheel")
    parser.add_argument("--only", nargs="*", help="parity article file stems to write")
    parser.add_argument("--random", type=int, default=0, help="also write N random markup soups")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tokenizer = mwtokenizer.Tokenizer("en")

    def write(stem: str, rec: dict) -> None:
        with open(os.path.join(args.out, stem + ".json"), "w", encoding="utf-8") as f:
            json.dump(rec, f, ensure_ascii=False, separators=(",", ":"))

    count = 0
    tables = {name: load_table(name) for name in ("anchors", "redirects", "pageids")}
    for path in sorted(glob.glob(os.path.join(PARITY, "enwiki", "*.wikitext"))):
        stem = os.path.basename(path)[: -len(".wikitext")]
        if args.only is not None and stem not in args.only:
            continue
        with open(path, encoding="utf-8") as f:
            wikitext = f.read()
        rec = record(stem, "parity", wikitext, tokenizer)
        rec["pipeline"] = pipeline_fixture(stem, wikitext, tables)
        write("parity-" + stem, rec)
        count += 1
    if args.gensim_wheel:
        for title, text in gensim_articles(glob.glob(args.gensim_wheel)[0]):
            if os.path.exists(
                os.path.join(PARITY, "enwiki", title.replace(" ", "_") + ".wikitext")
            ):
                continue  # already written as a parity article
            stem = "gensim-" + title.replace(" ", "_").replace("/", "%2F")
            write(stem, record(title, "gensim", text, tokenizer))
            count += 1
    # Random markup soups (seeded) for the corners real articles rarely hit.
    rng = random.Random(20261122)
    for i in range(args.random):
        text = "".join(rng.choice(SOUP) for _ in range(rng.randrange(1, 300)))
        write(f"random-{i:04d}", record(f"random {i}", "random", text, tokenizer))
        count += 1
    # The symbol tables of mwtokenizer, to check the embedded copies.
    from mwtokenizer.config import symbols

    with open(os.path.join(args.out, "mwtokenizer-symbols.json"), "w", encoding="utf-8") as f:
        json.dump(
            {
                "sentence_terminators": sorted(
                    {ord(c) for s in symbols.GLOBAL_SENTENCE_TERMINATORS for c in s}
                ),
                "punctuation": sorted(ord(c) for c in symbols.ALL_UNICODE_PUNCTUATION),
            },
            f,
        )
    print(f"wrote {count} articles to {args.out}")


if __name__ == "__main__":
    main()
