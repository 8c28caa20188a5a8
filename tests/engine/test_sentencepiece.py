"""Languages written without spaces, end to end: a Japanese dataset built with
``language_code="ja"`` from a real jawiki page, then the engine and the reference server
answering on it with the SentencePiece tokenizer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import reference_server as ref
from support.clients import USER_AGENT
from support.paths import DATA

import wikisuggest

pytest.importorskip("numpy")
pytest.importorskip("xgboost")


from wikisuggest.datasets.build import BuildReport, build

# The wikitext of jawiki's "ONE OK ROCK" as recorded in the wptools 0.4.17 test data
# (see DATA-ATTRIBUTION).
JAWIKI = DATA / "jawiki" / "ONE_OK_ROCK.wikitext"
LINK = re.compile(r"\[\[(?:[^\[\]|]*\|)?([^\[\]|]*)\]\]")


def article_chunks() -> list[str]:
    """The page cut into articles: its sections, split at line breaks every ~1,500 chars."""
    chunks = []
    for section in re.split(r"\n(?===)", JAWIKI.read_text(encoding="utf-8")):
        current = ""
        for line in section.split("\n"):
            if len(current) > 1500:
                chunks.append(current)
                current = ""
            current += line + "\n"
        if current.strip():
            chunks.append(current)
    return chunks


def write_dump(path: Path) -> None:
    def esc(s: str) -> str:
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    out = [
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><siteinfo><namespaces>',
        '<namespace key="0" case="first-letter" />',
        "</namespaces></siteinfo>",
    ]
    for i, chunk in enumerate(article_chunks(), start=1):
        out.append(f"<page><title>ONE OK ROCK {i}</title><ns>0</ns><id>{i}</id>")
        out.append(f'<revision><id>{i + 1000}</id><text xml:space="preserve">{esc(chunk)}</text>')
        out.append("</revision></page>")
    out.append("</mediawiki>")
    path.write_text("\n".join(out), encoding="utf-8")


def unlinked(wikitext: str) -> str:
    """The text with its wikilinks turned into plain labels: mentions to recommend."""
    return LINK.sub(lambda m: m.group(1), wikitext)


@pytest.fixture(scope="module")
def jawiki_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, BuildReport]:
    root = tmp_path_factory.mktemp("jawiki")
    dump = root / "jawiki-pages-articles.xml"
    write_dump(dump)
    report = build(
        dump,
        "jawiki",
        root / "datasets" / "jawiki",
        language_code="ja",
        min_link_count=1,
        keep_missing_targets=True,
        max_test_articles=4,
        thresholds=[0.0],
    )
    assert report.stats["anchors"] > 100
    # The held-out articles were run through the engine with the Japanese tokenizer.
    assert report.backtest_articles == 4
    assert report.backtest[0].recommended > 0
    return dump, root / "datasets", report


@pytest.fixture(scope="module")
def jawiki(jawiki_build: tuple[Path, Path, BuildReport]) -> Path:
    return jawiki_build[1]


def cli_build(dump: Path, out: Path, language: str) -> dict[str, Any]:
    result = subprocess.run(
        [
            *(sys.executable, "-m", "wikisuggest", "build", str(dump), "--wiki", "jawiki"),
            *("--out", str(out), "--language", language, "--min-link-count", "1"),
            *("--keep-missing-targets", "--no-backtest"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    saved: dict[str, Any] = json.loads((out / "jawiki.build-report.json").read_text())
    return saved


def test_cli_build_with_language_ja(
    jawiki_build: tuple[Path, Path, BuildReport], tmp_path: Path
) -> None:
    dump, _, report = jawiki_build
    ja = cli_build(dump, tmp_path / "ja", "ja")
    assert ja["checksums"] == report.checksums
    # The training rows come from the language's tokenizer: English tokens give other
    # (mention, candidate) rows, so another model.
    en = cli_build(dump, tmp_path / "en", "en")
    assert en["checksums"]["model"] != ja["checksums"]["model"]


def placed(result: wikisuggest.LinkRecommendationSet, wikitext: str) -> list[tuple[str, str]]:
    for link in result.links:
        start = link.wikitext_offset
        assert start is not None
        assert wikitext[start : start + len(link.link_text)] == link.link_text
    return [(link.link_text, link.link_target) for link in result.links]


# A section of the page (the band's 2017 history) with its links removed.
SECTION = 12


def test_engine_recommends_japanese_mentions(jawiki: Path) -> None:
    engine = wikisuggest.LinkEngine.open(jawiki / "jawiki", "jawiki")
    text = unlinked(article_chunks()[SECTION])
    ja = placed(
        engine.recommend(text, "Page", language_code="ja", threshold=0.0, max_recommendations=0),
        text,
    )
    # Mentions inside runs of Japanese text are found only by the SentencePiece pieces;
    # the whitespace tokenizer sees whole clauses as single words.
    en = placed(
        engine.recommend(text, "Page", language_code="en", threshold=0.0, max_recommendations=0),
        text,
    )
    assert len(ja) >= 5
    assert len(ja) > len(en)
    assert ("チェスター・ベニントン", "チェスター・ベニントン") in ja
    # `recommend_many` takes the same path.
    pages = [{"wikitext": text, "page_title": "Page", "language_code": "ja"}]
    [item] = list(engine.recommend_many(pages, threshold=0.0, max_recommendations=0))
    assert item.ok and item.result is not None and placed(item.result, text) == ja


def test_server_answers_for_a_sentencepiece_wiki(jawiki: Path, tmp_path: Path) -> None:
    engine = wikisuggest.LinkEngine.open(jawiki / "jawiki", "jawiki")
    text = unlinked(article_chunks()[SECTION])
    expected = placed(
        engine.recommend(text, "Page", language_code="ja", threshold=0.0, max_recommendations=0),
        text,
    )
    # The engine's default language is the wiki's.
    default = engine.recommend(text, "Page", threshold=0.0, max_recommendations=0)
    assert placed(default, text) == expected
    with ref.start(tmp_path, datasets=jawiki) as server:
        client = wikisuggest.Client(
            USER_AGENT, base_url=server.url, max_retries=0, auth=ref.PERSONAL_TOKEN
        )
        # The domain is the language code by default, as in production.
        result = client.link_recommendations_for_revision(
            "wikipedia",
            "ja",
            "Page",
            wikitext=text,
            revid=1,
            pageid=1,
            threshold=0.0,
            max_recommendations=0,
        )
    assert len(expected) >= 5
    assert placed(result, text) == expected
