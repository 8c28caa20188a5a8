"""Never-link rules against pages built to be slow: the page-exclusion scan that template and
category rules need (what a community configuration gives) is linear in the page and runs
inside the page's time budget, in one page's recommendation and in whole-dump runs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import wikisuggest
from wikisuggest import LinkEngine, LinkRules
from wikisuggest.engine.rules import Exclusion

NOWIKI = "<nowiki>a</nowiki>"
#: Page rules as a community configuration writes them.
RULES = LinkRules(
    exclude_templates=["Under construction", "Disambiguation"],
    exclude_categories=["Living people"],
)
#: What a loaded machine may add to a budget (the old scan took 113 s on the 8 MB page).
SLACK = 5.0


def test_one_page_of_tags_stays_inside_its_budget() -> None:
    engine = LinkEngine.default()
    page = NOWIKI * (8_000_000 // len(NOWIKI))
    started = time.monotonic()
    result = engine.recommend(page, "Nowiki", time_budget=1.0, rules=RULES)
    assert time.monotonic() - started < 1.0 + SLACK
    assert result.links == ()
    # Without a budget the scan alone is linear: the whole page is read and found excluded
    # by a template at its very end.
    excluded = page + "{{under construction}}"
    started = time.monotonic()
    explained = engine.explain(excluded, "Nowiki", rules=RULES)
    assert explained.page_excluded == Exclusion("template", "Under construction")
    assert time.monotonic() - started < 60


def test_a_whole_dump_run_turns_a_slow_page_into_its_error_row(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    from wikisuggest.engine.dump import recommend_dump, write_dump

    dump = write_dump(
        tmp_path / "dump.xml",
        [("Nowiki", NOWIKI * (8_000_000 // len(NOWIKI))), ("Stub", "{{Under construction}}")],
    )
    started = time.monotonic()
    summary = recommend_dump(
        dump,
        wikisuggest.engine.default_dataset_path(),
        "enwiki",
        tmp_path / "out",
        rules=RULES,
        time_budget=0.05,
    )
    assert time.monotonic() - started < 30
    assert summary.complete and (summary.pages, summary.errors) == (2, 1)
    rows = pq.read_table(tmp_path / "out").to_pylist()
    errors = {row["page_title"]: row["error"] for row in rows if row["error"]}
    assert list(errors) == ["Nowiki"]
    assert "time budget of 0.05 s" in errors["Nowiki"]
