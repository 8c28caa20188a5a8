"""``wikisuggest translation``: a catalog built from dump files on disk, gap tables written as
Parquet, and the cache's commands without the network."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
from support.dump_formats import DUMPS, integer, sql_rows, text

from wikisuggest import TranslationEngine
from wikisuggest.translation.sample import default_catalog_path


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wikisuggest", "translation", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_build_then_gaps_as_parquet(tmp_path: Path) -> None:
    sources = [
        str(DUMPS / "simplewiki" / "20260601"),
        str(DUMPS / "other" / "cirrus_search_index" / "20260607"),
    ]
    out = tmp_path / "simplewiki"
    built = run("build", "simplewiki", *sources, "-o", str(out), "--quiet")
    assert built.returncode == 0, built.stderr
    counts = json.loads(built.stdout)
    assert counts["articles"] == len(TranslationEngine.open(out))
    assert set(TranslationEngine.open(out).parts) == {"sql", "cirrus"}
    gaps = tmp_path / "gaps.parquet"
    done = run("gaps", "simplewiki", "en", "--catalog", str(out), "-o", str(gaps))
    assert done.returncode == 0, done.stderr
    table = pq.read_table(gaps)
    assert table.column("title").to_pylist() == (
        TranslationEngine.open(out).missing("en").column("title").to_pylist()
    )
    # Independently: the articles (not redirects or disambiguation pages) without an `en` link.
    run_folder = DUMPS / "simplewiki" / "20260601"
    articles = {
        integer(r[0])
        for r in sql_rows(run_folder / "simplewiki-20260601-page.sql.gz", "page")
        if integer(r[1]) == 0 and integer(r[3]) == 0
    }
    articles -= {
        integer(r[0])
        for r in sql_rows(run_folder / "simplewiki-20260601-page_props.sql.gz", "page_props")
        if text(r[1]) == "disambiguation"
    }
    linked = {
        integer(r[0])
        for r in sql_rows(run_folder / "simplewiki-20260601-langlinks.sql.gz", "langlinks")
        if text(r[1]) == "en"
    }
    assert sorted(table.column("page_id").to_pylist()) == sorted(articles - linked)


def test_a_wiki_not_in_the_cache_is_an_error_offline(tmp_path: Path) -> None:
    env = {"WIKISUGGEST_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = run("path", "enwiki", env=env)
    assert done.returncode == 2
    assert "offline" in done.stderr
    listed = run("list", "--format", "json", env=env)
    assert listed.returncode == 0 and json.loads(listed.stdout) == []


def test_the_shipped_catalog_is_what_the_builder_makes_of_the_test_dumps(tmp_path: Path) -> None:
    """``TranslationEngine.default()``'s catalog is rebuilt, byte for byte, by
    ``scripts/build-sample-catalog``'s command; page collections come from Meta-Wiki's and
    Wikidata's dumps, and the dumps' runs and day are read from their names."""
    out = tmp_path / "enwiki"
    built = run(
        "build",
        "enwiki",
        *(str(DUMPS / name) for name in ("enwiki", "other", "metawiki", "wikidatawiki")),
        "--day",
        "2026-06-14",
        "-o",
        str(out),
        "--quiet",
    )
    assert built.returncode == 0, built.stderr
    shipped = default_catalog_path()
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in shipped.iterdir())
    for name in (p.name for p in shipped.iterdir() if p.suffix == ".parquet"):
        assert (out / name).read_bytes() == (shipped / name).read_bytes(), name
    manifest = json.loads((out / "catalog.json").read_text("utf-8"))
    expected = json.loads((shipped / "catalog.json").read_text("utf-8"))
    for when in ("built_at", "built_by"):
        manifest.pop(when), expected.pop(when)
    assert manifest == expected
    assert manifest["provenance"]["collections_run"] == "20260601"
    assert manifest["provenance"]["pageviews_day"] == "2026-06-14"
    several = run("build", "enwiki", str(DUMPS), "-o", str(tmp_path / "again"))
    assert several.returncode != 0 and "--day" in several.stderr
