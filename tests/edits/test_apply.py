"""Recommendations turned into wikitext: placement by offset and context, typed skips, and the
engine's own results applied to real articles."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import PARITY

import wikisuggest
from wikisuggest import LinkEngine, LinkRecommendation, LinkRecommendationSet, SkipReason
from wikisuggest._native import NativePlainText
from wikisuggest.engine import demo_articles

ARTICLES = PARITY / "articles"


def _rec(text: str, target: str, **fields: object) -> LinkRecommendation:
    return LinkRecommendation(link_text=text, link_target=target, **fields)  # type: ignore[arg-type]


def _parity_pages() -> list[tuple[str, str]]:
    rows = (ARTICLES / "manifest.tsv").read_text("utf-8").splitlines()[1:]
    pages = []
    for row in rows:
        file, title = row.split("\t")[:2]
        pages.append((title, (ARTICLES / file).read_text("utf-8")))
    return pages


def linked_targets(wikitext: str) -> set[str]:
    """The titles the page links to (white space collapsed, first letter upper case)."""
    titles = set()
    for target in NativePlainText(wikitext).link_targets():
        title = " ".join(target.replace("_", " ").split("#", 1)[0].split())
        titles.add(title[:1].upper() + title[1:])
    return titles


def _check_applied_result(engine: LinkEngine, title: str, wikitext: str) -> tuple[int, int]:
    result = engine.recommend(wikitext, title, max_recommendations=0)
    applied = wikisuggest.apply_links(wikitext, result)
    # Only link markup was added: removing each inserted link gives the original text back.
    rebuilt = applied.wikitext
    for item in sorted(applied.applied, key=lambda a: -a.new_offset):
        assert rebuilt[item.new_offset :].startswith(item.markup)
        assert wikitext[item.offset :].startswith(item.link.link_text)
        rebuilt = (
            rebuilt[: item.new_offset]
            + item.link.link_text
            + rebuilt[item.new_offset + len(item.markup) :]
        )
    assert rebuilt == wikitext
    # The text did not change since the recommendation: nothing is lost for that reason.
    # (The engine can suggest a target the page links already when a later link with the same
    # label hid the first one from it; the page then keeps its one link.)
    existing = linked_targets(wikitext)
    for skipped in applied.skipped:
        if skipped.reason is SkipReason.ALREADY_LINKED:
            assert skipped.link.link_target in existing, (title, skipped)
        else:
            allowed = {SkipReason.INSIDE_WORD, SkipReason.OVERLAPS, SkipReason.IN_MARKUP}
            assert skipped.reason in allowed, (title, skipped)
    again = engine.recommend(applied.wikitext, title, max_recommendations=0)
    linked = {item.link.link_text.lower() for item in applied.applied}
    targets = {item.link.link_target for item in applied.applied}
    for link in again.links:
        assert link.link_text.lower() not in linked, (title, link)
        assert link.link_target not in targets, (title, link)
    return len(applied.applied), len(result.links)


def test_every_link_of_real_results_applies_and_is_not_suggested_again() -> None:
    engine = LinkEngine.open(PARITY / "datasets" / "enwiki", "enwiki")
    placed = total = 0
    for title, wikitext in _parity_pages():
        done, found = _check_applied_result(engine, title, wikitext)
        placed += done
        total += found
    assert total > 300
    # Skips are the exception: links inside longer words and overlapping suggestions.
    assert placed >= 0.8 * total, (placed, total)


def test_shipped_sample_articles_apply_and_are_not_suggested_again() -> None:
    engine = LinkEngine.default()
    placed = 0
    for title, wikitext in demo_articles().items():
        placed += _check_applied_result(engine, title, wikitext)[0]
    assert placed > 0


def test_offset_fast_path_and_markup_forms() -> None:
    text = "Aardvarks are mammals. The aardvark eats ants. iPhone"
    links = [
        _rec(
            "mammals", "Mammal", wikitext_offset=14, context_before="varks are ", context_after="."
        ),
        _rec(
            "aardvark", "Aardvark", wikitext_offset=27, context_before="The ", context_after=" eats"
        ),
        _rec("iPhone", "IPhone", wikitext_offset=47, context_before=". ", context_after=""),
    ]
    applied = wikisuggest.apply_links(text, links)
    assert applied.wikitext == (
        "Aardvarks are [[Mammal|mammals]]. The [[aardvark]] eats ants. [[iPhone]]"
    )
    assert [a.offset for a in applied.applied] == [14, 27, 47]
    assert [a.new_offset for a in applied.applied] == [14, 38, 62]
    assert applied.skipped == ()


def test_offsets_are_code_points() -> None:
    text = "🦔🦔 The hedgehog is small."
    offset = text.index("hedgehog")
    assert offset == 7  # two astral characters count one each
    link = _rec("hedgehog", "Hedgehog", wikitext_offset=offset, context_before="🦔🦔 The ")
    assert wikisuggest.apply_links(text, [link]).wikitext == "🦔🦔 The [[hedgehog]] is small."


def test_text_moved_is_found_by_context_but_never_placed_elsewhere() -> None:
    old = "A cat sat. The dog barked at the cat."
    link = _rec(
        "dog", "Dog", wikitext_offset=15, context_before="at. The ", context_after=" barked"
    )
    moved = "Intro paragraph added.\n" + old
    assert wikisuggest.apply_links(moved, [link]).wikitext == (
        "Intro paragraph added.\nA cat sat. The [[dog]] barked at the cat."
    )
    # The sentence was rewritten: "dog" still occurs, but not in that context.
    changed = "A cat sat. A dog ran off."
    result = wikisuggest.apply_links(changed, [link])
    assert result.wikitext == changed
    assert [s.reason for s in result.skipped] == [SkipReason.TEXT_CHANGED]


def test_match_index_decides_between_equal_contexts() -> None:
    text = "the bank of the river; the bank of the river"
    second = _rec("bank", "Bank", context_before="the ", context_after=" of", match_index=1)
    out = wikisuggest.apply_links(text, [second])
    assert out.wikitext == "the bank of the river; the [[bank]] of the river"
    unsure = _rec("bank", "Bank", context_before="the ", context_after=" of")
    out = wikisuggest.apply_links(text, [unsure])
    assert out.wikitext == text
    assert out.skipped[0].reason is SkipReason.AMBIGUOUS


def test_match_index_counts_only_plain_text() -> None:
    # The first "bank" is inside a template and the second inside a link: neither counts.
    text = "{{bank}} [[Bankside|bank]] the bank here, the bank there"
    link = _rec("bank", "Bank", context_before="the ", match_index=1)
    out = wikisuggest.apply_links(text, [link])
    assert out.wikitext == "{{bank}} [[Bankside|bank]] the bank here, the [[bank]] there"


def test_already_linked_and_markup_places_are_skipped() -> None:
    text = "See [[Lion|the lion]] and the lion. A {{tiger}} and a <ref>tiger</ref>."
    inside_link = _rec("lion", "Lion", wikitext_offset=15, context_before="Lion|the ")
    in_template = _rec("tiger", "Tiger", wikitext_offset=40, context_before="A {{")
    out = wikisuggest.apply_links(text, [inside_link, in_template])
    assert out.wikitext == text
    assert [s.reason for s in out.skipped] == [SkipReason.ALREADY_LINKED, SkipReason.IN_MARKUP]
    # The page already links to the target elsewhere.
    other = _rec("the lion", "Lion", wikitext_offset=26, context_before="and ")
    assert wikisuggest.apply_links(text, [other]).skipped[0].reason is SkipReason.ALREADY_LINKED


def test_overlaps_duplicates_and_words() -> None:
    text = "The red house stands in the category of houses."
    out = wikisuggest.apply_links(
        text,
        [
            _rec("red house", "Red house", wikitext_offset=4),
            _rec("house", "House", wikitext_offset=8),
            _rec("cat", "Cat", wikitext_offset=28),
            _rec("house", "House", wikitext_offset=40),
        ],
    )
    assert out.wikitext == "The [[red house]] stands in the category of houses."
    assert [s.reason for s in out.skipped] == [
        SkipReason.OVERLAPS,
        SkipReason.INSIDE_WORD,
        SkipReason.INSIDE_WORD,
    ]


def test_invalid_recommendations_never_become_markup() -> None:
    text = "A plain sentence about cats."
    links = [
        _rec("cats", "Cat]]{{Delete}}[[x", wikitext_offset=23),
        _rec("", "Cat", wikitext_offset=0),
        # A link to a category or a file would categorise the page or embed the file.
        _rec("cats", "Category:Cats", wikitext_offset=23),
        _rec("cats", " file : Cat.jpg", wikitext_offset=23),
    ]
    out = wikisuggest.apply_links(text, links)
    assert out.wikitext == text
    assert {s.reason for s in out.skipped} == {SkipReason.INVALID}


def test_accept_predicate_or_indexes() -> None:
    text = "one two three"
    links = LinkRecommendationSet(
        links=(
            _rec("one", "One", wikitext_offset=0, link_index=0, score=0.9),
            _rec("two", "Two", wikitext_offset=4, link_index=1, score=0.4),
            _rec("three", "Three", wikitext_offset=8, link_index=2, score=0.7),
        ),
        page_title="Numbers",
        revid=42,
    )
    assert wikisuggest.apply_links(text, links, accept={0, 2}).wikitext == "[[one]] two [[three]]"
    by_score = wikisuggest.apply_links(text, links, accept=lambda link: (link.score or 0) > 0.5)
    assert by_score.wikitext == "[[one]] two [[three]]"
    assert by_score.revid == 42 and by_score.page_title == "Numbers"
    assert "+[[one]] two [[three]]" in by_score.diff()
    with pytest.raises(TypeError):
        wikisuggest.apply_links(text, [{"link_text": "one"}])  # type: ignore[list-item]


def test_cli_apply_prints_text_or_diff(tmp_path: Path) -> None:
    engine = LinkEngine.default()
    title, wikitext = sorted(demo_articles().items())[0]
    result = engine.recommend(wikitext, title)
    assert result.links
    page = tmp_path / "page.wikitext"
    page.write_text(wikitext, "utf-8")
    saved = tmp_path / "result.json"
    saved.write_text(json.dumps(result.to_dict()), "utf-8")
    command = [sys.executable, "-m", "wikisuggest", "apply", str(page), str(saved)]
    out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout == wikisuggest.apply_links(wikitext, result).wikitext
    diff = subprocess.run(
        [*command, "--diff", "--accept", "0"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    first = result.links[0]
    assert diff.stdout.startswith(f"--- a/{title}\n+++ b/{title}\n")
    added = [line for line in diff.stdout.splitlines() if line.startswith("+") and "[[" in line]
    assert any(
        wikisuggest.edits.apply.link_markup(first.link_text, first.link_target) in a for a in added
    )
    bad = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "apply", str(page), str(page)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "wikisuggest apply" in bad.stderr
