"""Filling the P31 table from a wiki's Action API and Wikidata's, against a loopback stand-in
of both: batches, the table as its own cache, resuming after a failure, and the filled table
driving class rules in the engine."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import wikisuggest
from wikisuggest import LinkEngine, LinkRules, Wiki
from wikisuggest.edits.wikidata import fill_classes

USER_AGENT = "wikisuggest-tests/1.0 (https://example.org/tests; tests@example.org)"

#: The stand-in wiki: title → Wikidata item (titles not here have none).
ITEMS = {f"Page {i}": f"Q{1000 + i}" for i in range(120)}
ITEMS.update({"Neck": "Q9633", "Stomach": "Q103224", "Mammal": "Q7377"})
#: The stand-in Wikidata: item → P31.
P31 = {
    item: ["Q5"] if n % 2 else ["Q4167410", "Q13406463"] for n, item in enumerate(ITEMS.values())
}
P31.update({"Q9633": ["Q712378"], "Q103224": ["Q712378"], "Q7377": ["Q16521"]})


class StandIn:
    """Both APIs on one port: ``/wiki/api.php`` and ``/wikidata/api.php``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, str]] = []
        self.fail_after: int | None = None
        #: What a hostile wiki and Wikidata answer instead (title → item, item → P31 values).
        self.items = dict(ITEMS)
        self.p31: dict[str, list[Any]] = dict(P31)
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                params = dict(urllib.parse.parse_qsl(url.query))
                stand_in.requests.append({"path": url.path, **params})
                if stand_in.fail_after is not None and len(stand_in.requests) > stand_in.fail_after:
                    self.send_response(503)
                    self.end_headers()
                    return
                assert (
                    params.get("format") == "json" and "wikisuggest" in self.headers["User-Agent"]
                )
                body = stand_in.answer(url.path, params)
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, path: str, params: dict[str, str]) -> dict[str, Any]:
        if path == "/wiki/api.php":
            assert params["prop"] == "pageprops" and params["ppprop"] == "wikibase_item"
            titles = params["titles"].split("|")
            assert len(titles) <= 50
            pages, normalized = [], []
            for title in titles:
                name = title.replace("_", " ")
                if name != title:
                    normalized.append({"from": title, "to": name})
                page: dict[str, Any] = {"title": name}
                if name in self.items:
                    page["pageprops"] = {"wikibase_item": self.items[name]}
                else:
                    page["missing"] = True
                pages.append(page)
            return {"query": {"normalized": normalized, "pages": pages}}
        assert path == "/wikidata/api.php" and params["action"] == "wbgetentities"
        ids = params["ids"].split("|")
        assert len(ids) <= 50 and params["props"] == "claims"
        entities = {}
        for item in ids:
            claims = [
                {"mainsnak": {"datavalue": {"value": {"id": q}}}, "rank": "normal"}
                for q in self.p31[item]
            ]
            claims.append(
                {"mainsnak": {"datavalue": {"value": {"id": "Q999"}}}, "rank": "deprecated"}
            )
            entities[item] = {"id": item, "claims": {"P31": claims}}
        return {"entities": entities}


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    server = StandIn()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


def _wikis(stand_in: StandIn) -> tuple[Wiki, Wiki]:
    return (
        Wiki(f"{stand_in.url}/wiki/api.php", USER_AGENT, max_retries=0),
        Wiki(f"{stand_in.url}/wikidata/api.php", USER_AGENT, max_retries=0),
    )


def test_fill_in_batches_and_resume(stand_in: StandIn, tmp_path: Path) -> None:
    titles = [f"Page {i}" for i in range(120)] + ["No_item here"]
    table = tmp_path / "p31.tsv"
    wiki, wikidata = _wikis(stand_in)
    # The wiki fails on the fourth request: the batches before it are kept.
    stand_in.fail_after = 3
    with pytest.raises(wikisuggest.WikisuggestError):
        fill_classes(titles, wiki, wikidata, table)
    kept = table.read_text("utf-8").splitlines()
    assert kept[0] == "title\titem\tp31" and len(kept) == 1 + 50
    stand_in.fail_after = None
    stand_in.requests.clear()
    done = fill_classes(titles, wiki, wikidata, table)
    assert (done.titles, done.looked_up, done.with_item) == (121, 71, 70)
    asked = [t for r in stand_in.requests if "titles" in r for t in r["titles"].split("|")]
    assert asked == titles[50:], "resumed after the last kept batch"
    assert done.requests == len(stand_in.requests) == 4
    rows = {
        line.split("\t")[0]: line.split("\t")[1:]
        for line in table.read_text("utf-8").splitlines()[1:]
    }
    assert rows["Page 1"] == ["Q1001", "Q5"]
    assert rows["Page 0"] == ["Q1000", "Q4167410|Q13406463"]
    assert rows["No_item here"] == ["", ""]
    # A full table asks nothing.
    stand_in.requests.clear()
    again = fill_classes(titles, wiki, wikidata, table)
    assert (again.looked_up, again.requests, stand_in.requests) == (0, 0, [])


def test_a_line_cut_short_is_asked_again(stand_in: StandIn, tmp_path: Path) -> None:
    table = tmp_path / "p31.tsv"
    table.write_text("title\titem\tp31\nPage 1\tQ1001\tQ5\nPage 2\tQ10", "utf-8")
    wiki, wikidata = _wikis(stand_in)
    done = fill_classes(["Page 1", "Page 2"], wiki, wikidata, table)
    assert done.looked_up == 1
    assert table.read_text("utf-8").splitlines()[-1] == "Page 2\tQ1002\tQ4167410|Q13406463"


def test_the_filled_table_drives_class_rules(stand_in: StandIn, tmp_path: Path) -> None:
    engine = LinkEngine.default()
    targets = engine.link_targets()
    assert {"Neck", "Stomach", "Mammal"} <= set(targets) and targets == sorted(targets)
    wiki, wikidata = _wikis(stand_in)
    table = tmp_path / "p31.tsv"
    fill_classes(["Neck", "Stomach", "Mammal"], wiki, wikidata, table)
    rules = LinkRules(exclude_classes=["Q712378"], classes=table)  # Q712378: organ
    text = "The aardvark is a mammal with a long neck and a small stomach."
    explained = engine.explain(text, "Aardvark", threshold=0.0, rules=rules)
    removed = {(e.link.link_target, e.rule, e.value) for e in explained.excluded}
    assert removed == {("Neck", "class", "Q712378"), ("Stomach", "class", "Q712378")}
    assert "Mammal" in [link.link_target for link in explained.result.links]
    with pytest.raises(wikisuggest.InvalidParameter):
        fill_classes(["A"], wiki, wikidata, table, batch=51)


def test_a_hostile_answer_cannot_add_rows_or_break_the_table(
    stand_in: StandIn, tmp_path: Path
) -> None:
    engine = LinkEngine.default()
    text = "The aardvark is a mammal with a long neck and a small stomach."
    wiki, wikidata = _wikis(stand_in)
    table = tmp_path / "p31.tsv"
    fill_classes(["Stomach"], wiki, wikidata, table)
    # Wikidata answers a P31 value that holds a row of its own choosing: Mammal as a human.
    stand_in.p31["Q9633"] = ["Q712378\nMammal\tQ7377\tQ5"]
    with pytest.raises(wikisuggest.DecodeError, match="not a Wikidata item id"):
        fill_classes(["Neck", "Mammal"], wiki, wikidata, table)
    # An item id that is not one: the wiki's answer, then a value that is not text.
    stand_in.p31["Q9633"] = P31["Q9633"]
    for hostile in ("Q1\tQ5", "Q01", "", {"id": "Q5"}):
        stand_in.items["Neck"] = hostile  # type: ignore[assignment]
        with pytest.raises(wikisuggest.DecodeError, match="item of 'Neck'"):
            fill_classes(["Neck", "Mammal"], wiki, wikidata, table)
    # Nothing of those batches was written, and the table reads as before.
    assert table.read_text("utf-8") == "title\titem\tp31\nStomach\tQ103224\tQ712378\n"
    rules = LinkRules(exclude_classes=["Q5"], classes=table)
    links = engine.recommend(text, "Aardvark", threshold=0.0, rules=rules).links
    assert "Mammal" in [link.link_target for link in links]
    # An honest answer afterwards fills the rest.
    stand_in.items["Neck"] = ITEMS["Neck"]
    done = fill_classes(["Neck", "Mammal"], wiki, wikidata, table)
    assert (done.looked_up, done.with_item) == (2, 2)
    rules = LinkRules(exclude_classes=["Q712378"], classes=table)
    assert len(rules.to_dict()["classes"]) == 2


def test_answers_of_the_wrong_shape_are_typed_errors(stand_in: StandIn, tmp_path: Path) -> None:
    wiki, wikidata = _wikis(stand_in)
    table = tmp_path / "p31.tsv"
    # Claims that are not objects, a mainsnak that is a list: skipped, as the API never
    # sends them; a query that is a list: an error.
    stand_in.p31["Q9633"] = []
    original = stand_in.answer

    def odd(path: str, params: dict[str, str]) -> dict[str, Any]:
        body = original(path, params)
        if path.endswith("/wikidata/api.php"):
            body["entities"]["Q9633"]["claims"]["P31"] = ["Q5", {"mainsnak": []}, 7]
            body["entities"]["Q66"] = {"claims": {"P31": []}}  # not asked for
        return body

    stand_in.answer = odd  # type: ignore[method-assign]
    done = fill_classes(["Neck"], wiki, wikidata, table)
    assert done.with_item == 1
    assert table.read_text("utf-8").splitlines()[1:] == ["Neck\tQ9633\t"]
    stand_in.answer = lambda path, params: {"query": []}  # type: ignore[method-assign]
    with pytest.raises(wikisuggest.DecodeError, match="query result"):
        fill_classes(["Mammal"], wiki, wikidata, table)


def test_titles_that_cannot_be_written_are_refused_first(stand_in: StandIn, tmp_path: Path) -> None:
    wiki, wikidata = _wikis(stand_in)
    table = tmp_path / "p31.tsv"
    for title in ("Neck\tQ1", "Neck\nMammal", "Neck\r", "#Neck", " Neck", ""):
        with pytest.raises(wikisuggest.InvalidParameter):
            fill_classes(["Mammal", title], wiki, wikidata, table)
    assert stand_in.requests == [] and not table.exists()
