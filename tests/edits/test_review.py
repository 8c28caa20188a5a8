"""The notebook views, drawn by a real browser: phrases highlighted, page content inert."""

from __future__ import annotations

import html
import os
from pathlib import Path

import pytest
from support import browser

import wikisuggest
from wikisuggest import BatchItem, BatchResults, LinkRecommendation, LinkRecommendationSet
from wikisuggest._html import HIGHLIGHT
from wikisuggest.engine import demo_articles

HIGHLIGHT_RGB = (int(HIGHLIGHT[1:3], 16), int(HIGHLIGHT[3:5], 16), int(HIGHLIGHT[5:7], 16))
#: What the injected code would paint the page with, had it run.
ATTACK_RGB = (255, 0, 0)
ATTACK = "document.title='owned';document.body.style.background='#ff0000'"
PAYLOADS = [
    f"<script>{ATTACK}</script>",
    f'<img src="missing.png" onerror="{ATTACK}">',
    f'"><svg onload="{ATTACK}">',
]

needs_browser = pytest.mark.skipif(
    browser.chromium() is None and not os.environ.get("WIKISUGGEST_REQUIRE_SYSTEM_TOOLS"),
    reason="chromium is installed by scripts/test (scripts/test-system-packages)",
)


def _hostile_page() -> tuple[str, LinkRecommendationSet]:
    """Wikitext whose text around the phrases, targets and title carry script payloads."""
    text = (
        f"{PAYLOADS[0]} The aardvark is a mammal. {PAYLOADS[1]} It eats ants and termites. "
        f"{PAYLOADS[2]} It lives in Africa."
    )
    links = []
    for index, (phrase, target) in enumerate(
        [("mammal", "Mammal"), ("ants", f"Ant{PAYLOADS[1]}"), ("Africa", "Africa")]
    ):
        offset = text.index(phrase)
        links.append(
            LinkRecommendation(
                link_text=phrase,
                link_target=target,
                score=0.9 - index / 10,
                wikitext_offset=offset,
                context_before=text[max(0, offset - 40) : offset],
                context_after=text[offset + len(phrase) : offset + len(phrase) + 40],
                link_index=index,
                match_index=0,
            )
        )
    result = LinkRecommendationSet(
        links=tuple(links), links_count=3, page_title=f"Aardvark{PAYLOADS[0]}", revid=7
    )
    return text, result


def test_html_escapes_everything_from_the_page() -> None:
    text, result = _hostile_page()
    applied = wikisuggest.apply_links(text, result)
    batch = BatchResults([BatchItem(0, "Aardvark", result, None)])
    for view in (result._repr_html_(), applied._repr_html_(), batch._repr_html_()):
        for payload in PAYLOADS:
            assert payload not in view
            assert html.escape(payload, quote=True) in view or "&lt;" in view
        assert "<script" not in view and "<img" not in view and "<svg" not in view
        assert f'<mark style="background:{HIGHLIGHT}' in view


def test_views_list_every_link_and_skip_reason() -> None:
    text, result = _hostile_page()
    applied = wikisuggest.apply_links(text, result)
    # The target with markup in it is refused, so the view shows it as skipped.
    assert [s.reason for s in applied.skipped] == [wikisuggest.SkipReason.INVALID]
    view = applied._repr_html_()
    assert "2 applied, 1 skipped" in view and "invalid" in view
    assert "<code>[[mammal]]</code>" in view
    assert view.count("<mark") == 3
    assert result._repr_html_().count("<mark") == 3


@needs_browser
def test_browser_draws_highlights_and_runs_nothing_from_the_page(tmp_path: Path) -> None:
    text, result = _hostile_page()
    applied = wikisuggest.apply_links(text, result)
    doc = tmp_path / "review.html"
    doc.write_text(browser.page(result._repr_html_() + applied._repr_html_()), "utf-8")

    final = browser.dom(doc)
    assert f"<title>{browser.PAGE_TITLE}</title>" in final
    assert "owned" not in final.split("</title>")[0]
    assert "<script" not in final and "<img" not in final and "<svg" not in final

    image = browser.screenshot(doc, tmp_path / "review.png")
    assert not image.where(ATTACK_RGB, tolerance=8), "an injected script painted the page"

    # Control: had a payload gone through unescaped, this browser would have run it.
    raw = tmp_path / "raw.html"
    raw.write_text(browser.page(f"<p>{PAYLOADS[1]}</p>"), "utf-8")
    assert "<title>owned</title>" in browser.dom(raw)
    marked = image.where(HIGHLIGHT_RGB)
    # One highlighted phrase per row: 3 suggested, 2 applied (the third is shown as skipped).
    assert browser.bands(marked) == 5
    assert image.rgb(0, 0) == (255, 255, 255)

    # Control: the same page with its marks unstyled draws no highlight at all, so the
    # pixels above come from the marks.
    plain = tmp_path / "plain.html"
    plain.write_text(doc.read_text("utf-8").replace(HIGHLIGHT, "#ffffff"), "utf-8")
    assert not browser.screenshot(plain, tmp_path / "plain.png").where(HIGHLIGHT_RGB)


@needs_browser
def test_browser_draws_a_real_article_review(tmp_path: Path) -> None:
    engine = wikisuggest.LinkEngine.default()
    title, wikitext = sorted(demo_articles().items())[0]
    result = engine.recommend(wikitext, title, max_recommendations=4)
    assert len(result.links) >= 2
    applied = wikisuggest.apply_links(wikitext, result)
    doc = tmp_path / "article.html"
    doc.write_text(browser.page(applied._repr_html_()), "utf-8")
    image = browser.screenshot(doc, tmp_path / "article.png", height=500)
    assert browser.bands(image.where(HIGHLIGHT_RGB)) == len(applied.applied)


def test_the_review_shows_what_will_be_linked() -> None:
    """A bidirectional override would show one target and link another: such a target is
    refused, and the view spells its invisible characters out; a placed link shows the title
    MediaWiki will link to."""
    text = "The cats and the dogs sleep."
    links = [
        wikisuggest.LinkRecommendation("cats", "Cat\u202egoD", wikitext_offset=4),
        wikisuggest.LinkRecommendation("dogs", "domestic_dog", wikitext_offset=17),
    ]
    applied = wikisuggest.apply_links(text, links)
    view = applied.to_html()
    assert view == applied._repr_html_()
    assert "\u202e" not in view and "\\u202e" in view
    assert [a.title for a in applied.applied] == ["Domestic dog"]
    assert ">Domestic dog<" in view and "[[Domestic dog|dogs]]" in view
