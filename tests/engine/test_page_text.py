"""How the engine reads a page's text: in place for an ASCII ``str``, transcoded once to UTF-8
otherwise (whatever width CPython stores it in), without leaving a UTF-8 copy cached in the
caller's ``str``; a lone surrogate is the page's own ``InvalidParameter``, with its position."""

from __future__ import annotations

import sys

import pytest

from wikisuggest import InvalidParameter, LinkEngine
from wikisuggest.engine import Page, demo_articles


@pytest.fixture(scope="module")
def engine() -> LinkEngine:
    return LinkEngine.default()


def fresh(text: str) -> str:
    """A new ``str`` with no UTF-8 form cached, as a decoder or a reader makes it."""
    return text.encode("utf-8").decode("utf-8")


def test_a_str_read_by_the_engine_keeps_no_utf8_copy(engine: LinkEngine) -> None:
    """CPython counts a ``str``'s cached UTF-8 form in its size: reading the page must not
    add one (a page from a dump or a request is read once; the copy would only double its
    memory)."""
    article = demo_articles()["Aardvark"]
    page = fresh(article + " Ångström café naïve")
    assert not page.isascii()
    size = sys.getsizeof(page)
    first = engine.recommend(page, "Aardvark")
    assert sys.getsizeof(page) == size
    batch = engine.recommend_many([Page(page, "Aardvark")], workers=1)
    assert sys.getsizeof(page) == size
    assert batch[0].unwrap() == first
    # The same links as from the text made anew, and as from an ASCII page of the article.
    assert engine.recommend(fresh(page), "Aardvark") == first
    ascii_page = fresh(article.encode("ascii", "replace").decode("ascii"))
    assert ascii_page.isascii()
    assert engine.recommend(ascii_page, "Aardvark").links


@pytest.mark.parametrize("at", [0, 5, 1000])
def test_a_lone_surrogate_is_refused_at_its_position(engine: LinkEngine, at: int) -> None:
    article = demo_articles()["Aardvark"]
    page = article[:at] + "\udc80" + article[at:]
    with pytest.raises(InvalidParameter) as refused:
        engine.recommend(page, "Aardvark")
    assert refused.value.parameter == "wikitext"
    assert f"position {at}" in str(refused.value)
    results = engine.recommend_many([Page(page, "Aardvark"), Page(article, "Aardvark")])
    error = results[0].error
    assert isinstance(error, InvalidParameter) and f"position {at}" in str(error)
    assert results[1].ok


@pytest.mark.parametrize(
    "extra",
    ["café", "中文", "𝄞", "é中𝄞", "é, then more ASCII than a block of 64 code points holds"],
    ids=["one-byte", "two-byte", "four-byte", "mixed", "runs"],
)
def test_a_page_of_every_str_width_is_read_character_for_character(
    engine: LinkEngine, extra: str
) -> None:
    """CPython stores a ``str`` in one, two or four bytes per character; every width is read
    as its characters: each link's text stands at its offset, between its contexts, and the
    contexts hold the inserted characters as they were written."""
    article = demo_articles()["Aardvark"]
    page = fresh(article.replace(". ", f". {extra} "))
    result = engine.recommend(page, "Aardvark", threshold=0.0, max_recommendations=0)
    assert result.links
    contexts = ""
    for link in result.links:
        at = link.wikitext_offset
        assert at is not None and link.context_before is not None
        assert link.context_after is not None
        assert page[at : at + len(link.link_text)] == link.link_text
        assert page[:at].endswith(link.context_before)
        assert page[at + len(link.link_text) :].startswith(link.context_after)
        contexts += link.context_before + link.context_after
    assert all(c in contexts for c in extra if not c.isascii())
