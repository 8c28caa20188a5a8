"""One page title, one normalisation: the local engine, the reference server and the client
(which sends the title as given, for the server to normalise) agree with production's
``normalise_title`` (research-mwaddlink: percent-decode, ``str.strip``, first code point
``str.upper``-ed, ``_`` as a space, cut at ``#``) on every edge title, CPython's Unicode
semantics included. A title holding a lone surrogate cannot be sent or run: every front end
refuses it with ``InvalidParameter``."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator

import pytest
from support import reference_server as ref
from support.clients import USER_AGENT

import wikisuggest

WIKITEXT = "A page about a [[cat]]."

EDGE_TITLES = [
    "\x1fCat",  # a control character CPython's str.strip drops and Rust's trim keeps
    "Cat\x1f",
    "\x1c\x1d\x1eCat",
    "\u00a0Cat\u3000",  # no-break space, ideographic space
    "\u2028Cat\u2029",  # line and paragraph separators
    "\u200bCat",  # zero-width space: not white space, kept
    "\u0085Cat",  # next line (C1)
    "  Cat  ",
    "_Cat_",
    "cat_and_dog",
    "élan",
    "ßtraße",  # upper("ß") is "SS": the title grows
    "ﬁsh",  # upper("ﬁ") is "FI"
    "ǆemal",  # titlecase digraph: upper gives "Ǆ"
    "ﬀ",
    "ŉ",  # upper gives two code points
    "Cat#History",
    "#Fragment only",
    "Cat%20Dog",  # percent-decoded first
    "%C3%A9t%C3%A9",
    "AC/DC",
    "",
]

REFUSED_TITLES = ["Cat\ud800", "\udfffDog"]


def production_normalise_title(title: str) -> str:
    """research-mwaddlink's ``normalise_title`` in CPython, the definition the others port."""
    title = urllib.parse.unquote(title).strip()
    if title:
        title = title[0].upper() + title[1:]
    return title.replace("_", " ").split("#")[0]


@pytest.fixture(scope="module")
def engine() -> wikisuggest.LinkEngine:
    return wikisuggest.LinkEngine.open(ref.DATASETS / "enwiki", "enwiki")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wikisuggest.Server]:
    with ref.start(tmp_path_factory.mktemp("titles")) as running:
        yield running


def served_title(server: wikisuggest.Server, title: str) -> str | None:
    client = wikisuggest.Client(
        USER_AGENT, base_url=server.url, max_retries=0, auth=ref.PERSONAL_TOKEN
    )
    result = client.link_recommendations_for_revision(
        "wikipedia", "en", title, wikitext=WIKITEXT, revid=1, pageid=2
    )
    return result.page_title


@pytest.mark.parametrize("title", EDGE_TITLES, ids=repr)
def test_engine_normalises_as_production(engine: wikisuggest.LinkEngine, title: str) -> None:
    assert engine.recommend(WIKITEXT, title).page_title == production_normalise_title(title)


@pytest.mark.parametrize(
    "title",
    # An empty title is no path segment: the route refuses it.
    [t for t in EDGE_TITLES if t],
    ids=repr,
)
def test_server_and_client_normalise_as_the_engine(
    engine: wikisuggest.LinkEngine, server: wikisuggest.Server, title: str
) -> None:
    assert served_title(server, title) == engine.recommend(WIKITEXT, title).page_title


@pytest.mark.parametrize("title", REFUSED_TITLES, ids=repr)
def test_lone_surrogates_are_refused_by_every_front_end(
    engine: wikisuggest.LinkEngine, server: wikisuggest.Server, title: str
) -> None:
    with pytest.raises(wikisuggest.InvalidParameter):
        engine.recommend(WIKITEXT, title)
    with pytest.raises(wikisuggest.InvalidParameter):
        served_title(server, title)
    (item,) = engine.recommend_many([(WIKITEXT, title)])
    assert isinstance(item.error, wikisuggest.InvalidParameter)
