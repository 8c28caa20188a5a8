"""The preview of a rule change on a small dump, its figures checked by hand.

The four articles and what the engine (the shipped enwiki sample, threshold 0.5) finds in
them, in production's order:

* Page one: mammal → Mammal, neck → Neck, stomach → Stomach, then in its History section
  clade → Clade, extinct → Extinct, bears → Chicago Bears, Pleistocene;
* Page two: Mammal, Dust, Fruit, Meat;
* Page three: Stomach, Heart, Chest;
* Page four: Mammal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import wikisuggest
from wikisuggest import LinkEngine, LinkRules
from wikisuggest.engine.dump import write_dump
from wikisuggest.engine.preview import RuleSummary, preview_rules

PAGES = [
    (
        "Page one",
        "The aardvark is a mammal with a long neck and a small stomach.\n== History ==\n"
        "The clade of extinct bears lived in the Pleistocene.\n",
    ),
    ("Page two", "A mammal lives in the dust and eats fruit and meat.\n"),
    ("Page three", "Its stomach is like a heart with a chest.\n"),
    ("Page four", "A mammal is here.\n"),
]


@pytest.fixture(scope="module")
def dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dump(tmp_path_factory.mktemp("preview") / "four.xml.bz2", PAGES)


def test_three_links_per_page_against_production(dump: Path) -> None:
    engine = LinkEngine.default()
    new = LinkRules(exclude_targets=["Mammal"], exclude_anchors=["STOMACH"])
    report = preview_rules(dump, engine, new, max_recommendations=3)
    # Before (production): 3 + 3 + 3 + 1 links. After: Page one keeps Neck and takes Clade and
    # Extinct into the freed slots; Page two takes Meat; Page three keeps Heart and Chest;
    # Page four has none left.
    assert (report.pages, report.links_before, report.links_after) == (4, 10, 8)
    assert (report.removed, report.added) == (5, 3)
    assert report.lost_last == ("Page four",) and report.gained_first == ()
    assert report.by_rule() == [
        RuleSummary("removed", "target", "Mammal", 3, 3),
        RuleSummary("removed", "anchor", "STOMACH", 2, 2),
        RuleSummary("added", "refill", "", 3, 2),
    ]
    added = [(c.page_title, c.link.link_target) for c in report.changes if c.change == "added"]
    assert added == [("Page one", "Clade"), ("Page one", "Extinct"), ("Page two", "Meat")]
    frame = report.to_frame()
    assert len(frame) == 8 and set(frame["change"]) == {"removed", "added"}
    assert report.summary_frame()["links"].tolist() == [3, 2, 3]
    table = report.format_table()
    assert "4 pages: 10 links before, 8 after (5 removed, 3 added)" in table
    assert "Page four" in table
    html = report._repr_html_()
    assert "Mammal" in html and "<script" not in html


def test_sections_and_released_rules(dump: Path) -> None:
    engine = LinkEngine.default()
    old = LinkRules(exclude_targets=["Mammal", "Dust"], exclude_anchors=["STOMACH"])
    new = LinkRules(
        exclude_targets=["Mammal"], exclude_anchors=["STOMACH"], exclude_sections=["History"]
    )
    report = preview_rules(dump, engine, new, rules_before=old, max_recommendations=0)
    # Before: Page one Neck + the 4 History links; Page two Fruit, Meat; Page three Heart,
    # Chest. After: the History section is not searched; Dust is no longer excluded.
    assert (report.links_before, report.links_after) == (9, 6)
    assert report.by_rule() == [
        RuleSummary("removed", "section", "History", 4, 1),
        RuleSummary("added", "released", "target: Dust", 1, 1),
    ]
    assert report.lost_last == () and report.gained_first == ()


def test_sample_and_the_command_line(dump: Path, tmp_path: Path) -> None:
    engine = LinkEngine.default()
    new = LinkRules(exclude_targets=["Mammal"])
    report = preview_rules(dump, engine, new, sample=2, max_recommendations=3)
    assert report.pages == 2 and report.removed == 2
    rules_file = new.save(tmp_path / "new.toml")
    done = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "rules", "preview", "--dump", str(dump),
         "--datasets", str(wikisuggest.engine.default_dataset_path()), "--wiki", "enwiki",
         "--rules", str(rules_file), "--max", "3", "--format", "json"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    summary = json.loads(done.stdout)
    assert (summary["links_before"], summary["links_after"], summary["removed"]) == (10, 9, 3)
    assert summary["lost_last"] == ["Page four"]
    with pytest.raises(wikisuggest.InvalidParameter):
        preview_rules(dump, engine, new, sample=0)
    for name in ("sample", "workers"):
        with pytest.raises(wikisuggest.InvalidParameter, match=f"{name}: must be at least 1"):
            preview_rules(dump, engine, new, **{name: -1})  # type: ignore[arg-type]


def test_a_released_link_displaces_the_last_one(dump: Path) -> None:
    engine = LinkEngine.default()
    old = LinkRules(exclude_targets=["Dust"])
    # Page two, 3 links: Mammal, Fruit, Meat under the old rules; production's Mammal, Dust,
    # Fruit without them: Dust is back and Meat no longer fits.
    report = preview_rules(dump, engine, None, rules_before=old, max_recommendations=3)
    assert report.by_rule() == [
        RuleSummary("removed", "displaced", "3", 1, 1),
        RuleSummary("added", "released", "target: Dust", 1, 1),
    ]
    (removed,) = [c for c in report.changes if c.change == "removed"]
    assert (removed.page_title, removed.link.link_target) == ("Page two", "Meat")


def test_a_page_the_dump_cannot_give_is_an_error_and_the_others_are_compared(
    tmp_path: Path,
) -> None:
    xml = write_dump(tmp_path / "four.xml", PAGES).read_bytes()
    # Page three gets an invalid UTF-8 byte in its text.
    third = xml.index(b"<text", xml.index(b"<title>Page three")) + 40
    broken = tmp_path / "broken.xml"
    broken.write_bytes(xml[:third] + b"\xff" + xml[third + 1 :])
    engine = LinkEngine.default()
    new = LinkRules(exclude_targets=["Mammal"])
    report = preview_rules(broken, engine, new, max_recommendations=3)
    whole = preview_rules(tmp_path / "four.xml", engine, new, max_recommendations=3)
    assert list(report.errors) == ["Page three"]
    assert report.errors["Page three"].startswith("WikitextError: ")
    assert report.pages == 3 and whole.pages == 4
    assert report.changes == tuple(c for c in whole.changes if c.page_title != "Page three")
