"""The dataset builder end to end: a dump in, the five datasets out, an engine that works.

A synthetic dump (`support.builder_data`) checks the rules and the files exactly; the real
enwiki excerpt shipped in gensim's wheel, when present, is built and backtested too.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.builder_data import read_sql_gz, synthetic_dump

numpy = pytest.importorskip("numpy")
pytest.importorskip("xgboost")

import wikisuggest  # noqa: E402
from wikisuggest.datasets.build import build, format_report  # noqa: E402


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("build")
    dump = root / "testwiki-pages-articles.xml"
    synthetic_dump(dump)
    report = build(dump, "testwiki", root / "a", min_link_count=1)
    return dump, root, report


def test_tables_in_published_format(built) -> None:  # type: ignore[no-untyped-def]
    _, root, report = built
    out = root / "a"
    for name in ["anchors", "redirects", "pageids", "w2vfiltered"]:
        path = out / f"lr_testwiki_{name}.sql.gz"
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert (out / f"{path.name}.checksum").read_text() == f"{digest}  {path.name}\n"
        assert report.checksums[name] == digest
        # Fixed gzip header: no modification time, the inner file name.
        head = path.read_bytes()[:10]
        assert head[3] & 0x08 and head[4:8] == b"\0\0\0\0"
    redirects = read_sql_gz(out / "lr_testwiki_redirects.sql.gz", "lr_testwiki_redirects")
    assert redirects == [(1, "Fox", "Red fox"), (2, "Thames", "River Thames")]
    pageids = read_sql_gz(out / "lr_testwiki_pageids.sql.gz", "lr_testwiki_pageids")
    assert [r[0] for r in pageids] == list(range(1, len(pageids) + 1))
    assert [r[1] for r in pageids] == sorted(r[1] for r in pageids)
    assert dict((k, v) for _, k, v in pageids)["Red fox"] == 1
    anchors = {
        k: v for _, k, v in read_sql_gz(out / "lr_testwiki_anchors.sql.gz", "lr_testwiki_anchors")
    }
    # Mentions through the redirect count for the article; numbers never become anchors.
    assert list(anchors["red fox"]) == ["Red fox"]
    assert "fox" not in anchors or anchors["fox"] == {"Red fox": anchors["fox"]["Red fox"]}
    assert not any(k.isdigit() for k in anchors)
    # "night" is linked in ~5 % of its mentions: below the 0.065 link probability.
    assert "night" not in anchors
    assert "grey wolf" in anchors
    vectors = read_sql_gz(out / "lr_testwiki_w2vfiltered.sql.gz", "lr_testwiki_w2vfiltered")
    assert all(v.dtype == numpy.dtype("<f4") and v.shape == (50,) for _, _, v in vectors)
    model = json.loads((out / "testwiki.linkmodel.json").read_bytes())
    assert model["learner"]["learner_model_param"]["num_feature"] == "7"


def test_build_is_deterministic(built) -> None:  # type: ignore[no-untyped-def]
    dump, root, report = built
    again = build(dump, "testwiki", root / "b", min_link_count=1)
    assert again.checksums == report.checksums
    for path in sorted((root / "a").iterdir()):
        if path.suffix != ".json" or path.name.endswith("linkmodel.json"):
            assert path.read_bytes() == (root / "b" / path.name).read_bytes(), path.name


def test_backtest_on_held_out_articles(built) -> None:  # type: ignore[no-untyped-def]
    _, _, report = built
    print("\n" + format_report(report))
    assert report.backtest_articles > 10
    assert [p.threshold for p in report.backtest] == pytest.approx([i / 10 for i in range(10)])
    everything, strict = report.backtest_at(0.0), report.backtest_at(0.5)
    assert everything.expected == strict.expected > 0
    assert everything.recommended >= strict.recommended > 0
    # The rarely linked words are recommended at threshold 0 but filtered at 0.5.
    assert strict.precision > everything.precision
    assert strict.precision >= 0.75
    assert strict.recall >= 0.2


def test_strict_backtest_leaves_held_out_articles_out(built, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dump, _, report = built
    strict = build(dump, "testwiki", tmp_path, min_link_count=1, strict_backtest=True)
    print("\n" + format_report(strict))
    # The published datasets do not depend on how the backtest was run.
    assert strict.checksums == report.checksums
    assert strict.backtest_articles == report.backtest_articles
    # Fewer links to learn from: never better recall than the production-style backtest.
    point = strict.backtest_at(0.5)
    assert point.recall <= report.backtest_at(0.5).recall
    assert point.precision >= 0.75
    assert point.recall >= 0.2


def test_word_vector_file_embeds_titles(built, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dump, _, _ = built
    rng = random.Random(5)
    words = ["red", "fox", "grey", "wolf", "river", "thames", "london", "brown", "bear"]
    vectors = tmp_path / "words.vec"
    lines = [f"{len(words)} 4"]  # fastText header line, skipped
    lines += [w + " " + " ".join(f"{rng.uniform(-1, 1):.4f}" for _ in range(4)) for w in words]
    vectors.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = build(dump, "testwiki", tmp_path / "out", min_link_count=1, vectors=vectors)
    assert report.embedding == "words.vec"
    rows = read_sql_gz(
        tmp_path / "out" / "lr_testwiki_w2vfiltered.sql.gz", "lr_testwiki_w2vfiltered"
    )
    by_title = {title: v for _, title, v in rows}
    # Only titles with a known word get a vector: the mean of their words' vectors.
    assert sorted(by_title) == ["Brown bear", "Grey wolf", "London", "Red fox", "River Thames"]
    table = dict(line.split(" ", 1) for line in lines[1:])
    expected = (
        numpy.array(table["red"].split(), "<f4") + numpy.array(table["fox"].split(), "<f4")
    ) / 2
    assert numpy.allclose(by_title["Red fox"], expected)


def test_cli_builds_and_reports(tmp_path: Path, built) -> None:  # type: ignore[no-untyped-def]
    dump, _, report = built
    result = subprocess.run(
        [
            *(sys.executable, "-m", "wikisuggest", "build", str(dump), "--wiki", "testwiki"),
            *("--out", str(tmp_path), "--min-link-count", "1"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "backtest on" in result.stdout
    saved = json.loads((tmp_path / "testwiki.build-report.json").read_text())
    assert saved["checksums"] == report.checksums
    assert (tmp_path / "testwiki.linkdata").is_file()


def _gensim_wheel() -> str | None:
    fixtures = os.environ.get("WIKISUGGEST_FIXTURES", "target/reference-fixtures")
    pattern = os.environ.get("WIKISUGGEST_GENSIM_WHEEL", f"{fixtures}/downloads/gensim-4.4.0-*.whl")
    found = sorted(glob.glob(pattern))
    return found[0] if found else None


SAMPLE = (
    "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)
SAMPLE_SHA256 = "a53f4648dec40467ebdcbc7a1307eddb51fe6e28e9309f6ebde81ba0d04bea2d"


@pytest.mark.skipif(_gensim_wheel() is None, reason="gensim 4.4.0 wheel not downloaded")
def test_real_enwiki_sample(tmp_path: Path) -> None:
    import zipfile

    wheel = _gensim_wheel()
    assert wheel is not None
    data = zipfile.ZipFile(wheel).read(SAMPLE)
    assert hashlib.sha256(data).hexdigest() == SAMPLE_SHA256
    dump = tmp_path / "enwiki-sample.xml.bz2"
    dump.write_bytes(data)
    report = build(
        dump,
        "enwiki",
        tmp_path / "out",
        min_link_count=1,
        keep_missing_targets=True,
        max_test_articles=8,
        thresholds=[0.0, 0.5, 0.9],
    )
    print("\n" + format_report(report))
    assert report.stats["articles"] == 106
    assert report.stats["redirects"] == 99
    assert report.stats["anchors"] > 10_000
    assert report.backtest_articles == 8
    low, mid, high = report.backtest
    assert low.recommended >= mid.recommended >= high.recommended > 0
    assert mid.precision >= 0.5 and mid.recall >= 0.2


def test_training_in_batches_is_the_in_memory_model() -> None:
    """Training streams the rows to XGBoost in batches, quantised as they come: the model
    is the one XGBClassifier.fit trains from the whole matrix in memory (its hist trees
    build a QuantileDMatrix from the array), whatever the batch size."""
    import xgboost

    from wikisuggest.datasets.build import train_model

    rng = numpy.random.default_rng(5)
    n = 30_000
    x = numpy.zeros((n, 7), dtype="<f4")
    x[:, 0] = rng.integers(1, 5, n)
    x[:, 1] = numpy.floor(rng.pareto(1.2, n) * 3) + 1
    x[:, 2] = rng.integers(1, 300, n)
    x[:, 3] = rng.normal(0, 20, n)
    x[:, 4] = rng.uniform(-1, 1, n)
    x[:, 5] = rng.uniform(0, 1, n)
    y = ((x[:, 4] + x[:, 5] + rng.normal(0, 0.5, n)) > 1.2).astype(numpy.uint8)
    one, figures = train_model(x.tobytes(), y.tobytes(), seed=7, batch_rows=n)
    many, _ = train_model(x.tobytes(), y.tobytes(), seed=7, batch_rows=4_096)
    assert many == one

    # The same split, trained from the whole array as XGBClassifier.fit does.
    order = numpy.random.default_rng(7).permutation(n)
    train, test = order[: round(n * 0.67)], order[round(n * 0.67) :]
    params = {"objective": "binary:logistic", "seed": 7, "nthread": 1}
    whole = xgboost.QuantileDMatrix(x[train], label=y[train], max_bin=256, nthread=1)
    booster = xgboost.train(params, whole, num_boost_round=100)
    assert bytes(booster.save_raw("json")) == bytes(
        xgboost.Booster(model_file=bytearray(one)).save_raw("json")
    )
    assert figures["train_rows"] == len(train)
    scores = booster.predict(xgboost.DMatrix(x[test]))
    expected_auc = _auc(y[test], scores)
    assert figures["roc_auc"] == pytest.approx(expected_auc, abs=1e-12)


def _auc(y: Any, p: Any) -> float:
    """ROC AUC by counting pairs (small inputs only)."""
    pos, neg = p[y == 1], p[y == 0]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(wins / (len(pos) * len(neg)))


def test_a_dump_of_another_wiki_is_refused(tmp_path: Path) -> None:
    # A dataset built from frwiki's pages under the id enwiki would be silently wrong.
    dump = tmp_path / "frwiki.xml"
    dump.write_text(
        "<mediawiki><siteinfo><dbname>frwiki</dbname></siteinfo>"
        "<page><title>Paris</title><ns>0</ns><id>1</id><revision><id>2</id>"
        "<text>Paris est la [[capitale]].</text></revision></page></mediawiki>",
        "utf-8",
    )
    with pytest.raises(wikisuggest.InvalidParameter, match="a dump of frwiki, not of enwiki"):
        build(dump, "enwiki", tmp_path / "out", vectors="linkgraph")
    assert not (tmp_path / "out" / "enwiki.linkdata").exists()
