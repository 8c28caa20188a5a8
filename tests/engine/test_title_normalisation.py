"""One page title, one normalisation, one check: the local engine, the reference server and
the client (which sends the title as given, for the server to normalise) agree with
production's ``normalise_title`` (research-mwaddlink: percent-decode, ``str.strip``, first code
point ``str.upper``-ed, ``_`` as a space, cut at ``#``) on every edge title, CPython's Unicode
semantics included; and each refuses, with the same rule, a title whose normalised form
MediaWiki would refuse (empty, a character no title holds, a control character, over 255
bytes). A title holding a lone surrogate cannot be sent or run: every front end refuses it
with ``InvalidParameter``."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
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
    "Cat%20Dog",  # percent-decoded first
    "%C3%A9t%C3%A9",
    "AC/DC",
    # A control character before white space: Python strips both, the client must not turn
    # the space into an underscore the server would keep.
    "\x1c Dog",
    "\x1c\u00a0Dog",
    "\x1c\u2028Dog",
    "\x1c\u0085Dog",
    "Dog \x1f",
    "\x1d_Dog",
]

#: Titles whose normalised form MediaWiki would refuse: every front end refuses them.
INVALID_TITLES = [
    "",
    "#Fragment only",
    "  \x1c ",
    "Cat|Dog",
    "Cat\x1fDog",
    "%5B%5BCat%5D%5D",  # percent-decoded first: [[Cat]]
    "Caf%C3",  # percent-decoded to a replacement character
    "a" * 256,
    "é" * 128,  # 128 characters, 256 bytes
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


def served_status(server: wikisuggest.Server, title: str) -> tuple[int, dict[str, object]]:
    """The server's own answer for ``title``, sent as one path segment without the client's
    checks."""
    url = (
        f"{server.url}/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/"
        + urllib.parse.quote(title, safe="")
    )
    body = json.dumps({"wikitext": WIKITEXT, "revid": 1, "pageid": 2}).encode()
    request = urllib.request.Request(
        url,
        data=body,
        headers={
            "Authorization": f"Bearer {ref.PERSONAL_TOKEN}",
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


@pytest.mark.parametrize("title", EDGE_TITLES, ids=repr)
def test_engine_normalises_as_production(engine: wikisuggest.LinkEngine, title: str) -> None:
    assert engine.recommend(WIKITEXT, title).page_title == production_normalise_title(title)


@pytest.mark.parametrize("title", EDGE_TITLES, ids=repr)
def test_server_and_client_normalise_as_the_engine(
    engine: wikisuggest.LinkEngine, server: wikisuggest.Server, title: str
) -> None:
    assert served_title(server, title) == engine.recommend(WIKITEXT, title).page_title


@pytest.mark.parametrize("title", INVALID_TITLES, ids=lambda t: repr(t)[:24])
def test_every_front_end_refuses_what_mediawiki_refuses(
    engine: wikisuggest.LinkEngine, server: wikisuggest.Server, title: str
) -> None:
    with pytest.raises(wikisuggest.InvalidParameter) as by_engine:
        engine.recommend(WIKITEXT, title)
    assert by_engine.value.parameter == "page_title"
    (item,) = engine.recommend_many([(WIKITEXT, title)])
    assert isinstance(item.error, wikisuggest.InvalidParameter)
    with pytest.raises(wikisuggest.InvalidParameter) as by_client:
        served_title(server, title)
    assert by_client.value.parameter == "page_title"
    if title:  # an empty title is no path segment: the route is not found
        status, body = served_status(server, title)
        assert status == 400, body
        assert "not a MediaWiki title" in str(body)


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
