"""Never-link rules from Python: the rule set and its files, every engine path carrying
``rules=``, whole-dump runs and the server's per-wiki rules, and what the engine reports as
removed. (The exact effect of each rule on production's outputs is checked in Rust on the
parity articles: crates/wikisuggest-engine/tests/rules.rs.)"""

from __future__ import annotations

import asyncio
import json
import pickle
import unicodedata
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support.paths import REPO

import wikisuggest
from wikisuggest import InvalidParameter, LinkEngine, LinkRules
from wikisuggest.engine import Page
from wikisuggest.engine.rules import Exclusion

ROOT = REPO
PARITY = ROOT / "tests" / "data" / "parity"
SCHEMA = ROOT / "python" / "wikisuggest" / "data" / "link-rules.schema.json"


def _articles() -> list[tuple[str, str]]:
    rows = (PARITY / "articles" / "manifest.tsv").read_text("utf-8").splitlines()[1:]
    out = []
    for row in rows[:12]:
        file, title = row.split("\t")[:2]
        out.append((title, (PARITY / "articles" / file).read_text("utf-8")))
    return out


@pytest.fixture(scope="module")
def engine() -> LinkEngine:
    return LinkEngine.open(PARITY / "datasets" / "enwiki", "enwiki")


@pytest.fixture(scope="module")
def articles() -> list[tuple[str, str]]:
    return _articles()


def _targets(result: wikisuggest.LinkRecommendationSet) -> list[str]:
    return [link.link_target for link in result.links]


def _without(result: wikisuggest.LinkRecommendationSet, gone: set[str]) -> list[tuple[Any, ...]]:
    return [
        (link.link_text, link.link_target, link.wikitext_offset, link.match_index, link.score)
        for link in result.links
        if link.link_target not in gone
    ]


def _fields(result: wikisuggest.LinkRecommendationSet) -> list[tuple[Any, ...]]:
    return _without(result, set())


def test_rule_sets_are_checked() -> None:
    with pytest.raises(InvalidParameter):
        LinkRules(exclude_targets=[""])
    with pytest.raises(InvalidParameter):
        LinkRules(exclude_classes=["Q5"])  # no table
    with pytest.raises(InvalidParameter):
        LinkRules(exclude_classes=["dates"], classes={})
    with pytest.raises(InvalidParameter):
        LinkRules(min_score=2)
    with pytest.raises(InvalidParameter):
        LinkRules(exclude_anchors="the city", no_duplicate_links=1)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter):
        LinkRules.from_dict({"exclude_target": ["A"]})
    with pytest.raises(InvalidParameter):
        LinkRules(classes={"Paris": ["city"]}, exclude_classes=["Q5"])
    rules = LinkRules(exclude_anchors=["the city"])
    assert rules.to_dict() == {"exclude_anchors": ["the city"]}
    assert "exclude_anchors=1" in repr(rules)


def test_a_bare_string_is_refused_where_a_list_is_meant(tmp_path: Path) -> None:
    # As the file reader refuses `exclude_targets = "Mammal"`, so does the constructor: a
    # string would otherwise become a one-title rule, or one rule per letter.
    for name in ("exclude_targets", "exclude_anchors", "exclude_templates", "exclude_classes"):
        with pytest.raises(InvalidParameter, match=rf"{name} must be a list.*\[.Mammal.\]"):
            LinkRules(**{name: "Mammal"})  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter, match="classes must be a list"):
        LinkRules(classes={"Neck": "Q5"}, exclude_classes=["Q5"])
    with pytest.raises(InvalidParameter, match="exclude_targets"):
        LinkRules.from_dict({"exclude_targets": "Mammal"})
    with pytest.raises(InvalidParameter, match="templates"):
        LinkRules(exclude_templates=["Stub"]).page_exclusion("x", templates="Stub")
    # The files' reader names the key and its line.
    (tmp_path / "r.toml").write_text("version = 1\n\nexclude_targets = 'Mammal'\n", "utf-8")
    with pytest.raises(InvalidParameter, match=r"r\.toml: line 3: exclude_targets: invalid type"):
        LinkRules.load(tmp_path / "r.toml")
    (tmp_path / "r.json").write_text('{\n "exclude_anchors": ["a"],\n "exclude_targets": "M"\n}')
    with pytest.raises(InvalidParameter, match=r"r\.json: line 3: exclude_targets: invalid type"):
        LinkRules.load(tmp_path / "r.json")


def test_rule_files_that_are_not_a_rule_set(tmp_path: Path) -> None:
    # Invalid UTF-8: a typed error naming the file and the line, not a bare OSError.
    (tmp_path / "latin1.toml").write_bytes(b"exclude_targets = ['Caf\xe9']\n")
    with pytest.raises(InvalidParameter, match=r"latin1\.toml: line 1: .*UTF-8.*0xe9"):
        LinkRules.load(tmp_path / "latin1.toml")
    # A JSON array is not read field by field as a rule set.
    (tmp_path / "array.json").write_text('[1, ["Mammal"], ["the city"]]', "utf-8")
    with pytest.raises(InvalidParameter, match=r"array\.json: .*one object"):
        LinkRules.load(tmp_path / "array.json")
    (tmp_path / "two.json").write_text('{"exclude_targets": ["A"]} {}', "utf-8")
    with pytest.raises(InvalidParameter, match=r"two\.json: line 1: trailing"):
        LinkRules.load(tmp_path / "two.json")


def test_files_round_trip_and_pickle(tmp_path: Path) -> None:
    (tmp_path / "p31.tsv").write_text("title\titem\tp31\nNeck\tQ9633\tQ5107|Q1\n", "utf-8")
    (tmp_path / "rules.toml").write_text(
        "# ours\nversion = 1\nexclude_targets = ['Mammal']\nexclude_anchors = ['The City']\n"
        "exclude_classes = ['production-enwiki']\nclasses = 'p31.tsv'\nmin_score = 0.6\n"
        "no_duplicate_links = true\n",
        "utf-8",
    )
    rules = LinkRules.load(tmp_path / "rules.toml")
    spec = rules.to_dict()
    assert spec["classes"] == {"Neck": ["Q5107"]}
    assert spec["min_score"] == 0.6 and spec["no_duplicate_links"] is True
    for name in ("again.json", "again.toml"):
        assert LinkRules.load(rules.save(tmp_path / name)) == rules
    assert json.loads((tmp_path / "again.json").read_text("utf-8"))["exclude_targets"] == ["Mammal"]
    assert pickle.loads(pickle.dumps(rules)) == rules
    assert LinkRules.from_dict(spec) == rules
    (tmp_path / "bad.toml").write_text("exclude_targets = 'Mammal'\n", "utf-8")
    with pytest.raises(InvalidParameter, match=r"bad\.toml"):
        LinkRules.load(tmp_path / "bad.toml")
    with pytest.raises(FileNotFoundError):
        LinkRules.load(tmp_path / "missing.toml")


def test_the_schema_describes_what_the_engine_reads(tmp_path: Path) -> None:
    # jsonschema_rs comes with schemathesis, which the server's tests use.
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    schema = json.loads(SCHEMA.read_text("utf-8"))
    validator = jsonschema_rs.validator_for(schema)
    full = {
        "exclude_targets": ["A"],
        "exclude_anchors": ["b"],
        "exclude_anchors_exact": ["C"],
        "exclude_classes": ["production", "Q5"],
        "classes": {"A": ["Q5"]},
        "exclude_sections": ["References"],
        "exclude_templates": ["Stub"],
        "exclude_categories": ["Living people"],
        "template_namespaces": ["Vorlage"],
        "category_namespaces": ["Kategorie"],
        "no_duplicate_links": True,
        "min_score": 0.5,
        "max_links": 10,
        "max_links_shown": 3,
        "min_links": 2,
    }
    assert set(schema["properties"]) == {*full, "version"}
    validator.validate({**full, "version": 1})
    spec = LinkRules.from_dict(full).to_dict()
    assert set(spec) == set(full)
    validator.validate(spec)
    for bad in ({"exclude_target": ["A"]}, {"exclude_classes": ["dates"]}, {"min_score": 2}):
        assert not validator.is_valid(bad)
        with pytest.raises(InvalidParameter):
            LinkRules.from_dict(bad)


def test_every_engine_path_carries_the_rules(
    engine: LinkEngine, articles: list[tuple[str, str]]
) -> None:
    plain = [
        engine.recommend(text, title, threshold=0.0, max_recommendations=0)
        for title, text in articles
    ]
    gone = {t for result in plain for t in _targets(result)[::3]}
    rules = LinkRules(exclude_targets=sorted(gone))
    options: dict[str, Any] = {"threshold": 0.0, "max_recommendations": 0, "rules": rules}
    want = [_without(result, gone) for result in plain]
    one = [_fields(engine.recommend(text, title, **options)) for title, text in articles]
    assert one == want
    pages = [Page(text, title) for title, text in articles]
    many = engine.recommend_many(pages, workers=2, **options)
    assert [_fields(item.result) for item in many] == want  # type: ignore[arg-type]
    streamed = [_fields(item.result) for item in engine.recommend_iter(pages, **options)]  # type: ignore[arg-type]
    assert streamed == want

    async def both() -> list[Any]:
        return [
            await engine.recommend_async(text, title, **options) for title, text in articles[:3]
        ]

    assert [_fields(r) for r in asyncio.run(both())] == want[:3]
    explained = [item.result for item in engine.explain_iter(pages, **options)]
    for result, original, ex in zip(plain, want, explained, strict=True):
        assert ex is not None and _fields(ex.result) == original
        assert {e.link.link_target for e in ex.excluded} == set(_targets(result)) & gone
        assert all(e.rule == "target" for e in ex.excluded)
    # The same rules given as a rule file's path.
    assert _fields(
        engine.recommend(articles[0][1], articles[0][0], **{**options, "rules": None})
    ) == _fields(plain[0])


def test_rules_through_a_path_and_limits(engine: LinkEngine, tmp_path: Path) -> None:
    text = "The aardvark is a mammal with a long neck and a small stomach."
    path = LinkRules(exclude_targets=["Mammal"], exclude_anchors=["NECK"]).save(tmp_path / "r.toml")
    result = engine.explain(text, "Aardvark", threshold=0.0, rules=path)
    assert "Mammal" not in _targets(result.result) and "Neck" not in _targets(result.result)
    assert {(e.link.link_target, e.rule, e.value) for e in result.excluded} >= {
        ("Mammal", "target", "Mammal"),
        ("Neck", "anchor", "NECK"),
    }
    shown = engine.recommend(text, "Aardvark", threshold=0.0, rules=LinkRules(max_links_shown=1))
    best = max(
        engine.recommend(text, "Aardvark", threshold=0.0).links, key=lambda link: link.score or 0
    )
    kept = [(link.link_target, link.link_index) for link in shown.links]
    assert kept == [(best.link_target, 0)]
    page = engine.explain(
        "{{Under construction}} A mammal.",
        "T",
        rules=LinkRules(exclude_templates=["Under_construction"]),
    )
    assert page.page_excluded == wikisuggest.Exclusion("template", "Under construction")
    assert not page.result.links
    with pytest.raises(InvalidParameter):
        engine.recommend(text, "Aardvark", rules=42)  # type: ignore[arg-type]


def test_recommend_dump_with_rules(engine: LinkEngine, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from wikisuggest.engine.dump import recommend_dump, write_dump

    articles = _articles()[:4]
    dump = write_dump(tmp_path / "d.xml.bz2", articles)
    plain = recommend_dump(dump, PARITY / "datasets" / "enwiki", "enwiki", tmp_path / "plain")
    assert plain.complete
    table = pq.read_table(tmp_path / "plain").to_pydict()
    gone = set(table["link_target"][::4])
    rules = LinkRules(exclude_targets=sorted(gone))
    ruled = recommend_dump(
        dump, PARITY / "datasets" / "enwiki", "enwiki", tmp_path / "ruled", rules=rules
    )
    rows = pq.read_table(tmp_path / "ruled").to_pydict()
    assert ruled.links > 0 and not gone & set(rows["link_target"])
    # A run resumed with other rules is another run: refused.
    with pytest.raises(InvalidParameter):
        recommend_dump(dump, PARITY / "datasets" / "enwiki", "enwiki", tmp_path / "ruled",
                       rules=LinkRules(exclude_targets=["Mammal"]))  # fmt: skip


def test_the_server_applies_each_wikis_rules(tmp_path: Path) -> None:
    title, text = _articles()[0]
    engine = LinkEngine.open(PARITY / "datasets" / "enwiki", "enwiki")
    plain = engine.recommend(text, title)
    gone = set(_targets(plain)[:3])
    path = LinkRules(exclude_targets=sorted(gone)).save(tmp_path / "enwiki.toml")
    want = engine.recommend(text, title, rules=path)
    assert not gone & set(_targets(want)) and len(want.links) == len(plain.links)

    def get(url: str) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{url}/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/"
            + urllib.parse.quote(title.replace(" ", "_")),
            headers={"User-Agent": "wikisuggest-tests/1.0 (tests@example.org)"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)  # type: ignore[no-any-return]

    pages = PARITY / "articles" / "enwiki"
    with wikisuggest.Server(
        datasets=PARITY / "datasets", pages=pages, rules={"enwiki": path}
    ) as server:
        got = get(server.url)
    assert [link["link_target"] for link in got["links"]] == _targets(want)
    with pytest.raises(wikisuggest.WikisuggestError, match="no dataset"):
        wikisuggest.Server(datasets=PARITY / "datasets", rules={"dewiki": path})
    (tmp_path / "bad.toml").write_text("exclude_targets = 3\n", "utf-8")
    with pytest.raises(wikisuggest.WikisuggestError, match=r"bad\.toml"):
        wikisuggest.Server(datasets=PARITY / "datasets", rules={"enwiki": tmp_path / "bad.toml"})


def test_the_rules_commands(tmp_path: Path) -> None:
    import subprocess
    import sys

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "wikisuggest", "rules", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    path = LinkRules(exclude_targets=["Mammal"], no_duplicate_links=True).save(tmp_path / "r.json")
    assert json.loads(run("check", str(path))) == {
        "exclude_targets": ["Mammal"],
        "no_duplicate_links": True,
    }
    config = tmp_path / "GrowthExperimentsSuggestedEdits.json"
    config.write_text(
        json.dumps(
            {"link_recommendation": {"excludedSections": ["Notes"], "minimumLinkScore": 0.7}}
        ),
        "utf-8",
    )
    out = tmp_path / "community.toml"
    run("community", "--file", str(config), "--out", str(out))
    spec = LinkRules.load(out).to_dict()
    assert spec["exclude_sections"] == ["Notes"] and spec["min_score"] == 0.7
    assert (spec["max_links"], spec["max_links_shown"], spec["min_links"]) == (10, 3, 2)
    bad = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "rules", "check", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "unknown field" in bad.stderr


def test_titles_are_compared_as_mediawiki_stores_them(tmp_path: Path) -> None:
    # Doubled spaces and underscores, a decomposed accent (NFD), a direction mark: the
    # title MediaWiki would store, not a rule that silently matches nothing.
    written = unicodedata.normalize("NFD", "a  Coruña") + "\u200e"
    assert written != "A Coruña"
    rules = LinkRules(exclude_targets=[written, "Chicago__Bears"])
    assert rules.link_exclusion("the city", "A Coruña") == Exclusion("target", written)
    assert rules.link_exclusion("bears", "Chicago Bears") == Exclusion("target", "Chicago__Bears")
    table = tmp_path / "p31.tsv"
    table.write_text(f"title\tp31\n{unicodedata.normalize('NFD', 'Möhne  river')}\tQ4022\n")
    rules = LinkRules(exclude_classes=["Q4022"], classes=table)
    assert rules.link_exclusion("river", "Möhne river") == Exclusion("class", "Q4022")
    # And in a pass: the sample's link to Mammal goes under a rule written in lower case
    # with trailing underscores.
    engine = LinkEngine.default()
    text = "The aardvark is a mammal."
    rules = LinkRules(exclude_targets=["mammal__"])
    explained = engine.explain(text, "Aardvark", threshold=0.0, rules=rules)
    assert [(e.link.link_target, e.rule) for e in explained.excluded] == [("Mammal", "target")]
