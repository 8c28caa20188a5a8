"""``wikisuggest datasets …`` end to end against the loopback mirror of the published bases:
fetch, path, list (age, newer published), verify, prune, and diff against a current dump."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.builder_data import read_sql_gz, synthetic_dump
from support.clients import USER_AGENT
from support.dataset_mirror import Mirror, dataset_files
from support.paths import PARITY

import wikisuggest
from wikisuggest import LinkEngine

DATASETS = PARITY / "datasets" / "enwiki"
ARTICLES = PARITY / "articles" / "enwiki"


@pytest.fixture
def mirror() -> Iterator[Mirror]:
    server = Mirror.standard().start()
    yield server
    server.stop()


def cli(m: Mirror, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "ANALYTICS_BASE_URL": m.url("v2"),
        "ANALYTICS_BASE_URL_LEGACY": m.url("legacy"),
        "WIKISUGGEST_CACHE_DIR": str(root),
    }
    env.pop("WIKISUGGEST_OFFLINE", None)
    return subprocess.run(
        [sys.executable, "-m", "wikisuggest", "datasets", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_fetch_path_list_verify_prune(mirror: Mirror, tmp_path: Path) -> None:
    done = cli(mirror, tmp_path, "fetch", "enwiki", "fr")
    assert done.returncode == 0, done.stderr
    en, fr = (Path(line) for line in done.stdout.split())
    assert en.name == "enwiki.linkdata" and fr.name == "frwiki.linkdata"
    # Sizes are said before the downloads start.
    assert re.search(r"enwiki: [0-9.]+ MB to download from .*/v2/", done.stderr), done.stderr

    again = cli(mirror, tmp_path, "fetch", "enwiki", "--update")
    assert again.returncode == 0 and Path(again.stdout.strip()) == en
    assert "to download" not in again.stderr

    path = cli(mirror, tmp_path, "path", "en.wikipedia.org")
    assert (path.returncode, path.stdout.strip()) == (0, str(en))
    missing = cli(mirror, tmp_path, "path", "dewiki")
    assert missing.returncode == 2 and "datasets fetch dewiki" in missing.stderr

    listed = json.loads(cli(mirror, tmp_path, "list", "--format", "json").stdout)
    rows = {r["wiki"]: r for r in listed}
    assert rows["enwiki"]["source"] == "v2" and rows["frwiki"]["source"] == "legacy"
    assert rows["enwiki"]["newer_published"] == "no"
    assert rows["enwiki"]["model_age"].startswith("2025-03-04 (")
    assert rows["enwiki"]["path"] == str(en)

    # A retrained model upstream: list says so; the fetch with --update makes a second
    # snapshot, and prune removes the first.
    mirror.publish("v2", "enwiki", model_suffix=b"\n\n")
    listed = json.loads(cli(mirror, tmp_path, "list", "--format", "json").stdout)
    assert {r["wiki"]: r for r in listed}["enwiki"]["newer_published"] == "yes"
    offline = json.loads(cli(mirror, tmp_path, "list", "--offline", "--format", "json").stdout)
    assert {r["wiki"]: r for r in offline}["enwiki"]["newer_published"] is None
    newer = Path(cli(mirror, tmp_path, "fetch", "enwiki", "--update").stdout.strip())
    assert newer != en and en.is_file()

    assert cli(mirror, tmp_path, "verify").returncode == 0
    prune = cli(mirror, tmp_path, "prune", "--dry-run")
    assert prune.returncode == 0 and str(en.parent) in prune.stdout and en.is_file()
    prune = cli(mirror, tmp_path, "prune")
    assert prune.returncode == 0 and not en.exists() and newer.is_file() and fr.is_file()

    # A damaged native file is found by verify.
    data = bytearray(newer.read_bytes())
    data[len(data) // 2] ^= 0xFF
    newer.write_bytes(bytes(data))
    bad = cli(mirror, tmp_path, "verify", "enwiki")
    assert bad.returncode == 2 and "damaged" in bad.stderr


def test_list_published_shows_what_can_be_fetched(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a fresh cache, `list` says what it lists; `list --published` what can be fetched.
    empty = cli(mirror, tmp_path, "list", "--format", "json")
    assert json.loads(empty.stdout) == [] and "--published" in empty.stderr
    done = cli(mirror, tmp_path, "list", "--published", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = {r["wiki"]: r for r in json.loads(done.stdout)}
    assert sorted(rows) == ["enwiki", "frwiki", "simplewiki"]
    assert (rows["enwiki"]["base"], rows["frwiki"]["base"]) == ("v2", "legacy")
    en_files = [f"v2/enwiki/{n}" for n in dataset_files("enwiki")]
    assert rows["enwiki"]["size"] == sum(len(mirror.files[f]) for f in en_files)
    assert rows["enwiki"]["model_last_modified"] == "Tue, 04 Mar 2025 10:00:00 GMT"
    assert rows["enwiki"]["model_age"].startswith("2025-03-04 (")
    # Nothing was downloaded, and the details are kept an hour.
    assert mirror.gets() == []
    mirror.reset_log()
    table = cli(mirror, tmp_path, "list", "--published", "--format", "table", "fr")
    assert "frwiki" in table.stdout and "legacy" in table.stdout and "enwiki" not in table.stdout
    assert [r for r in mirror.requests if r.method == "HEAD"] == []
    assert cli(mirror, tmp_path, "list", "--published", "--offline").returncode == 2
    # The same from Python.
    monkeypatch.setenv("ANALYTICS_BASE_URL", mirror.url("v2"))
    monkeypatch.setenv("ANALYTICS_BASE_URL_LEGACY", mirror.url("legacy"))
    found = wikisuggest.datasets.published_wikis(cache_dir=tmp_path, wikis=["simple"])
    assert [(p.wiki, p.base) for p in found] == [("simplewiki", "v2")]


def test_verify_reports_manifests_that_say_nothing(mirror: Mirror, tmp_path: Path) -> None:
    en = Path(cli(mirror, tmp_path, "fetch", "enwiki").stdout.strip())
    manifest = en.parent / "manifest.json"
    data = json.loads(manifest.read_text("utf-8"))
    del data["native"]["sha256"]
    manifest.write_text(json.dumps(data), "utf-8")
    bad = cli(mirror, tmp_path, "verify")
    assert bad.returncode == 2 and "native.sha256" in bad.stderr, bad.stderr
    manifest.write_text("", "utf-8")
    bad = cli(mirror, tmp_path, "verify", "enwiki")
    assert bad.returncode == 2 and "manifest is missing, empty" in bad.stderr, bad.stderr


def test_prune_removes_what_is_not_a_snapshot_and_only_the_cache_s_names(
    mirror: Mirror, tmp_path: Path
) -> None:
    en = Path(cli(mirror, tmp_path, "fetch", "enwiki").stdout.strip())
    datasets = tmp_path / "datasets"
    # What older versions left: a typo's folder with only a lock, an incomplete snapshot.
    (datasets / "enwikiiwiki" / "downloads").mkdir(parents=True)
    (datasets / "enwikiiwiki" / "lock").write_bytes(b"")
    incomplete = en.parent.parent / "0123456789abcdef"
    incomplete.mkdir()
    (incomplete / "enwiki.linkdata.tmp").write_bytes(b"half")
    # Downloads of the cache's names and of others', and a folder among them.
    downloads = en.parent.parent.parent / "downloads"
    downloads.mkdir(exist_ok=True)
    (downloads / "lr_enwiki_anchors.sql.gz.incomplete").write_bytes(b"partial")
    (downloads / "notes.txt").write_text("mine")
    (downloads / "lr_enwiki_model.d").mkdir()
    (downloads / "lr_enwiki_pageids.sql.gz").mkdir()
    done = cli(mirror, tmp_path, "prune", "--partial")
    assert done.returncode == 0, done.stderr
    assert not (datasets / "enwikiiwiki").exists() and not incomplete.exists()
    assert not (downloads / "lr_enwiki_anchors.sql.gz.incomplete").exists()
    assert (downloads / "notes.txt").read_text() == "mine"
    assert (downloads / "lr_enwiki_model.d").is_dir()
    assert (downloads / "lr_enwiki_pageids.sql.gz").is_dir()
    assert "notes.txt (not written by the cache)" in done.stderr
    assert en.is_file()

    # A downloads folder that is a link is not entered.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lr_enwiki_anchors.sql.gz").write_text("not the cache's")
    for p in downloads.iterdir():
        if p.is_dir():
            p.rmdir()
        else:
            p.unlink()
    downloads.rmdir()
    downloads.symlink_to(outside)
    done = cli(mirror, tmp_path, "prune", "--partial")
    assert (outside / "lr_enwiki_anchors.sql.gz").is_file()
    assert "symbolic link" in done.stderr and done.returncode == 0


def test_bad_cache_folders_and_another_wiki_s_dump(mirror: Mirror, tmp_path: Path) -> None:
    env = {**os.environ, "ANALYTICS_BASE_URL": mirror.url("v2")}
    env.pop("WIKISUGGEST_OFFLINE", None)
    done = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "datasets", "fetch", "enwiki",
         "--cache-dir", "/proc/nope"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "DatasetError" in done.stderr and "/proc/nope" in done.stderr, done.stderr
    assert "FileNotFoundError" not in done.stderr

    # A dump of frwiki compared with enwiki's published dataset: refused before any request.
    dump = tmp_path / "frwiki.xml"
    dump.write_text(
        "<mediawiki><siteinfo><dbname>frwiki</dbname></siteinfo>"
        "<page><title>Paris</title><ns>0</ns><id>1</id><revision><id>2</id>"
        "<text>Paris est la capitale.</text></revision></page></mediawiki>",
        "utf-8",
    )
    mirror.reset_log()
    done = cli(mirror, tmp_path / "cache", "diff", "enwiki", "--dump", str(dump))
    assert done.returncode == 2
    assert "a dump of frwiki, not of enwiki" in done.stderr, done.stderr
    assert mirror.requests == []


def test_diff_reports_what_the_published_dataset_misses(mirror: Mirror, tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    pytest.importorskip("xgboost")

    dump = tmp_path / "current.xml"
    synthetic_dump(dump, articles=80)
    done = cli(
        mirror, tmp_path / "cache", "diff", "enwiki", "--dump", str(dump), "--format", "json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)

    # The expected counts, computed from the published files and the dump's own text.
    anchors = read_sql_gz(DATASETS / "lr_enwiki_anchors.sql.gz", "lr_enwiki_anchors")
    targets = {t for _, _, cands in anchors for t in cands}
    pageids = read_sql_gz(DATASETS / "lr_enwiki_pageids.sql.gz", "lr_enwiki_pageids")
    published_pages = {k for _, k, _ in pageids}
    text = dump.read_text("utf-8")
    pages = re.findall(r"<title>([^<]+)</title>.*?<text[^>]*>([^<]*)</text>", text, re.S)
    assert len(pages) > 80
    redirects = {t for t, body in pages if body.startswith("#REDIRECT")}
    articles = {t for t, _ in pages} - redirects
    assert report["targets"] == len(targets)
    assert report["redirected_targets"] == len(targets & redirects)
    assert report["deleted_targets"] == len(targets - articles - redirects)
    assert report["articles"] == len(articles)
    assert report["new_articles"] == len(articles - published_pages)
    assert set(report["examples"]["new_articles"]) <= articles - published_pages

    # Both backtests ran on the same held-out articles, so they expect the same links.
    assert report["backtest_articles"] > 0
    published, fresh = report["published"], report["fresh"]
    assert published["expected"] == fresh["expected"] > 0
    for b in (published, fresh):
        assert 0 <= b["precision"] <= 1 and 0 <= b["recall"] <= 1
        assert b["meets_guide"] == (b["precision"] >= 0.75 and b["recall"] >= 0.20)
    assert report["guide"] == {"threshold": 0.5, "precision": 0.75, "recall": 0.2}
    assert isinstance(report["retrain"], bool)

    table = cli(
        mirror, tmp_path / "cache", "diff", "enwiki", "--dump", str(dump), "--format", "table"
    )
    assert "verdict:" in table.stdout and "published" in table.stdout


def test_serve_fetches_its_wikis_at_start_up(mirror: Mirror, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "ANALYTICS_BASE_URL": mirror.url("v2"),
        "ANALYTICS_BASE_URL_LEGACY": mirror.url("legacy"),
        "WIKISUGGEST_CACHE_DIR": str(tmp_path),
    }
    command = [
        *(sys.executable, "-m", "wikisuggest", "serve", "--port", "0"),
        *("--fetch", "enwiki", "--pages", str(ARTICLES)),
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline().strip()
            assert line.startswith("Serving on http://127.0.0.1:"), line
            assert process.stdout.readline().strip() == "Link datasets: enwiki"
            client = wikisuggest.Client(USER_AGENT, base_url=line.split()[2])
            result = client.link_recommendations("wikipedia", "en", "Aardvark")
            with LinkEngine.open(DATASETS, "enwiki") as engine:
                text = (ARTICLES / "Aardvark.wikitext").read_text("utf-8")
                local = engine.recommend(text, "Aardvark")
            assert result.links
            assert [link.link_target for link in result.links] == [
                link.link_target for link in local.links
            ]
            assert result.meta is not None and local.meta is not None
            assert result.meta.dataset_checksums == local.meta.dataset_checksums
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
    assert len(mirror.gets("lr_enwiki_anchors.sql.gz")) == 1
