"""The dataset fetcher and its cache against the faults of a hostile pass, each in its
reproducer's shape on the loopback mirror: a mirror that cuts every transfer and answers every
resume with another range, a HEAD without Content-Length, a row bomb with a matching
checksum, links planted in a shared cache, a typo'd wiki, bad cache folders, and the generic
"files into a cache entry" fetcher other wings reuse."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib
import io
import os
import pickle
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.dataset_mirror import Fault, Mirror, checksum_line

import wikisuggest
from wikisuggest import DatasetError, LinkEngine, LinkRules
from wikisuggest.datasets import cache, files, published
from wikisuggest.engine.dump import recommend_dump, write_dump

fetch = importlib.import_module("wikisuggest.datasets.fetch")

USER_AGENT = "wikisuggest-tests/1.0 (https://example.org/wikisuggest-tests; tests@example.org)"
W2V = "v2/enwiki/lr_enwiki_w2vfiltered.sql.gz"
ANCHORS = "v2/enwiki/lr_enwiki_anchors.sql.gz"
REDIRECTS = "v2/enwiki/lr_enwiki_redirects.sql.gz"


@pytest.fixture
def mirror(monkeypatch: pytest.MonkeyPatch) -> Iterator[Mirror]:
    server = Mirror.standard().start()
    monkeypatch.setenv("ANALYTICS_BASE_URL", server.url("v2"))
    monkeypatch.setenv("ANALYTICS_BASE_URL_LEGACY", server.url("legacy"))
    monkeypatch.delenv("WIKISUGGEST_OFFLINE", raising=False)
    monkeypatch.delenv("WIKISUGGEST_CACHE_DIR", raising=False)
    monkeypatch.setattr(
        fetch, "settings", fetch.DownloadSettings(read_timeout=1.0, backoff_base=0.01)
    )
    yield server
    server.stop()


def sent(m: Mirror, path: str) -> tuple[int, int]:
    """Requests for ``path`` and body bytes sent for them."""
    with m.lock:
        mine = [r for r in m.requests if r.path == path and r.method == "GET"]
        return len(mine), sum(r.sent for r in mine)


# -- retries and budgets ----------------------------------------------------------------


def test_a_mirror_that_cuts_every_transfer_and_answers_other_ranges_is_given_up(
    mirror: Mirror, tmp_path: Path
) -> None:
    # The reproducer: the 4.4 MB file is cut after 1 MB every time, and every resume is
    # answered with a 206 starting half way to the byte asked for. Restarting from zero is
    # not progress: the fetch ends with a typed error, in a few requests and bytes.
    size = len(mirror.files[W2V])
    mirror.arm(W2V, Fault(times=100_000, cut_after=1_000_000, other_range=True))
    started = time.monotonic()
    with pytest.raises(wikisuggest.TransportError) as caught:
        fetch.fetch("enwiki", cache_dir=tmp_path)
    assert time.monotonic() - started < 60
    assert str(caught.value.url).endswith("lr_enwiki_w2vfiltered.sql.gz")
    requests, body = sent(mirror, W2V)
    assert requests <= fetch.settings.max_retries + 2, requests
    assert body <= 3 * size, body
    # The partial is kept for a later run; nothing else was made.
    store = cache.WikiCache(tmp_path, "enwiki")
    assert store.current() is None and store.all_snapshots() == []


def test_a_budget_of_requests_and_bytes_ends_any_mirror(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Even with retries without end, the budget per file ends it: a typed error that says
    # how many requests and bytes it took.
    monkeypatch.setattr(
        fetch,
        "settings",
        fetch.DownloadSettings(
            read_timeout=1.0, backoff_base=0.001, backoff_max=0.002, max_retries=10**6
        ),
    )
    size = len(mirror.files[W2V])
    mirror.arm(W2V, Fault(times=100_000, cut_after=1_000_000, other_range=True))
    with pytest.raises(wikisuggest.TransportError, match="gave up downloading") as caught:
        fetch.fetch("enwiki", cache_dir=tmp_path)
    err: Any = caught.value
    assert err.attempts <= fetch.settings.max_attempts
    # The budget (three times the size, and 1 MiB) and the piece that crossed it.
    assert err.received <= 3 * size + (2 << 20)
    # What the mirror pushed beyond that is the other-range answers, each dropped at its
    # head (at most the 1 MB a cut answer carries, in the socket's buffers).
    requests, body = sent(mirror, W2V)
    assert requests <= err.attempts and body <= err.received + requests * 1_000_000

    # A file that trickles a few bytes per request: the request budget ends it.
    monkeypatch.setattr(
        fetch,
        "settings",
        fetch.DownloadSettings(
            read_timeout=1.0,
            backoff_base=0.001,
            backoff_max=0.002,
            max_retries=10**6,
            max_attempts=8,
        ),
    )
    mirror.faults.clear()
    mirror.arm(ANCHORS, Fault(times=100_000, cut_after=1_000))
    mirror.reset_log()
    with pytest.raises(wikisuggest.TransportError, match="after 8 requests"):
        fetch.fetch("enwiki", cache_dir=tmp_path / "b")
    assert sent(mirror, ANCHORS)[0] == 8


def test_a_head_without_content_length_takes_the_size_limit_path(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No size from HEAD (nor from GET): the download runs under the size limit, the space
    # check is made again once the size is known, and the fetch succeeds.
    mirror.unsized.add(ANCHORS)
    path = fetch.fetch("enwiki", cache_dir=tmp_path)
    heads = [r for r in mirror.requests if r.method == "HEAD" and r.path == ANCHORS]
    assert heads and "content-length" not in heads[0].headers
    manifest = cache.WikiCache(tmp_path, "enwiki").current()
    assert manifest is not None and manifest.native == path
    assert manifest.manifest["files"]["anchors"]["size"] == len(mirror.files[ANCHORS])

    # The size limit holds for such a file: a body past it is refused, typed.
    mirror.publish("v2", "enwiki", model_suffix=b" ")
    monkeypatch.setattr(
        fetch, "settings", fetch.DownloadSettings(read_timeout=1.0, max_file_size=1000)
    )
    with pytest.raises(wikisuggest.ResponseTooLarge):
        fetch.fetch("enwiki", cache_dir=tmp_path / "small")


def _sql_escape(data: bytes) -> bytes:
    table = {0: b"\\0", 10: b"\\n", 13: b"\\r", 26: b"\\Z", 39: b"\\'", 92: b"\\\\"}
    return b"".join(table.get(b, bytes([b])) for b in data)


def redirects_bomb(wiki: str, rows: int) -> bytes:
    """A valid redirects table of ``rows`` distinct redirects to one article, gzip-packed
    into a few MB: it expands to far more work than its size."""
    value = _sql_escape(pickle.dumps("Anarchism", protocol=4))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=1, mtime=0) as f:
        f.write(f"-- Dumping data for table `lr_{wiki}_redirects`\n".encode())
        for start in range(0, rows, 20_000):
            tuples = b",".join(
                b"(%d,'%x','%s')" % (i + 1, i, value)
                for i in range(start, min(rows, start + 20_000))
            )
            f.write(b"INSERT INTO `lr_" + wiki.encode() + b"_redirects` VALUES " + tuples + b";\n")
    return out.getvalue()


def _tree_size(folder: Path) -> int:
    total = 0
    for base, _dirs, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(base, name)).st_size
    return total


def test_a_row_bomb_with_a_matching_checksum_is_held_to_the_space_reserved(
    mirror: Mirror, tmp_path: Path
) -> None:
    # 1.5 M redirects in 8 MB: about 140 MB of work files unchecked.
    bomb = redirects_bomb("enwiki", 1_500_000)
    assert len(bomb) < 12 << 20
    mirror.files[REDIRECTS] = bomb
    mirror.files[REDIRECTS + ".checksum"] = checksum_line("lr_enwiki_redirects.sql.gz", bomb)
    sources = sum(
        len(mirror.files[f"v2/enwiki/{published.dataset_file('enwiki', d)}"])
        for d in published.DATASETS
    )
    reserved = max(int(sources * fetch._CONVERSION_SPACE_FACTOR), fetch._CONVERSION_SPACE_FLOOR)
    store = cache.WikiCache(tmp_path, "enwiki")
    peak = [0]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_size(store.snapshots))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        with pytest.raises(DatasetError, match="reserved") as caught:
            fetch.fetch("enwiki", cache_dir=tmp_path)
    finally:
        done.set()
        watcher.join()
    assert "passes" in str(caught.value) or "pass" in str(caught.value)
    # Work files and output stayed within what the space check reserved (a buffer more at
    # most), and are gone; the verified downloads stay for a later attempt.
    assert 0 < peak[0] <= reserved + (4 << 20), (peak[0], reserved)
    assert _tree_size(store.snapshots) == 0
    assert store.current() is None
    assert (store.downloads / "lr_enwiki_redirects.sql.gz").is_file()


# -- the cache writes and deletes only its own files ---------------------------------------


def test_planted_links_in_the_downloads_are_not_followed(mirror: Mirror, tmp_path: Path) -> None:
    root = tmp_path / "cache"
    outside = tmp_path / "outside"
    outside.mkdir()
    victims = {name: outside / name for name in ("a", "b", "c")}
    for v in victims.values():
        v.write_bytes(b"precious")
    downloads = root / "datasets" / "enwiki" / "downloads"
    downloads.mkdir(parents=True)
    # The partial, its record and the converter's checksum file, each a link out.
    (downloads / "lr_enwiki_anchors.sql.gz.incomplete").symlink_to(victims["a"])
    (downloads / "lr_enwiki_pageids.sql.gz.incomplete.json").symlink_to(victims["b"])
    (downloads / "lr_enwiki_redirects.sql.gz.checksum").symlink_to(victims["c"])
    with pytest.raises(DatasetError, match="symbolic link"):
        fetch.fetch("enwiki", cache_dir=root)
    assert all(v.read_bytes() == b"precious" for v in victims.values())
    # Removed by the user, the fetch goes through; the other links were replaced, not
    # written through.
    (downloads / "lr_enwiki_anchors.sql.gz.incomplete").unlink()
    path = fetch.fetch("enwiki", cache_dir=root)
    assert path.is_file()
    assert all(v.read_bytes() == b"precious" for v in victims.values())


def test_a_linked_cache_folder_is_refused(mirror: Mirror, tmp_path: Path) -> None:
    root = tmp_path / "cache"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    (root / "datasets" / "enwiki").mkdir(parents=True)
    (root / "datasets" / "enwiki" / "downloads").symlink_to(outside)
    with pytest.raises(DatasetError, match="symbolic link"):
        fetch.fetch("enwiki", cache_dir=root)
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]


def test_kept_sources_delete_only_the_cache_s_files_and_never_stop_half_way(
    mirror: Mirror, tmp_path: Path
) -> None:
    store = cache.WikiCache(tmp_path, "enwiki")
    store.sources.mkdir(parents=True)
    (store.sources / "notes.txt").write_text("mine")
    (store.sources / "lr_enwiki_anchors.sql.gz.d").mkdir()
    (store.sources / "a-folder").mkdir()
    old = store.sources / "lr_enwiki_old.sql.gz"
    old.write_text("not a name the cache wrote")
    path = fetch.fetch("enwiki", cache_dir=tmp_path, keep_sources=True)
    # The snapshot became current; the user's files and folders are untouched.
    current = store.current()
    assert current is not None and current.native == path
    assert (store.sources / "notes.txt").read_text() == "mine"
    assert (store.sources / "a-folder").is_dir() and old.is_file()
    kept = {p.name for p in store.sources.iterdir()}
    assert {published.dataset_file("enwiki", d) for d in published.DATASETS} <= kept

    # A newer version: the previous version's kept files go, the user's stay.
    mirror.publish("v2", "enwiki", model_suffix=b"\n")
    fetch.fetch("enwiki", cache_dir=tmp_path, keep_sources=True, update=True)
    assert (store.sources / "notes.txt").is_file() and (store.sources / "a-folder").is_dir()


def test_current_opens_as_a_dataset_folder_everywhere(mirror: Mirror, tmp_path: Path) -> None:
    path = fetch.fetch("enwiki", cache_dir=tmp_path)
    current = tmp_path / "datasets" / "enwiki" / "current"
    assert current.is_symlink() and (current / path.name).samefile(path)
    with LinkEngine.open(current, "enwiki") as engine, LinkEngine.open(path, "enwiki") as other:
        page = "Anarchism is a political philosophy. Autism and the cat and the ants."
        assert engine.recommend(page, "Page", threshold=0.0) == other.recommend(
            page, "Page", threshold=0.0
        )
    # The server, recommend_dump and the command line take it as a dataset folder.
    with wikisuggest.Server(port=0, datasets=current) as server:
        assert server.wikis == ("enwiki",)
    dump = write_dump(tmp_path / "pages.xml", [("Aardvark", page)])
    summary = recommend_dump(dump, current, "enwiki", tmp_path / "links.parquet")
    assert summary.pages == 1
    rules = LinkRules(exclude_targets=["Mammal"]).save(tmp_path / "rules.toml")
    done = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "rules", "preview", "--dump", str(dump),
         "--datasets", str(current), "--wiki", "enwiki", "--rules", str(rules),
         "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

    # A newer version moves it, by rename; the old snapshot's file is untouched.
    mirror.publish("v2", "enwiki", model_suffix=b"\n")
    newer = fetch.fetch("enwiki", cache_dir=tmp_path, update=True)
    assert newer != path and (current / newer.name).samefile(newer) and path.is_file()


def test_a_failed_fetch_of_an_unknown_wiki_leaves_nothing_behind(
    mirror: Mirror, tmp_path: Path
) -> None:
    with pytest.raises(DatasetError, match="did you mean enwiki"):
        fetch.fetch("enwikii", cache_dir=tmp_path)
    assert not (tmp_path / "datasets" / "enwikiiwiki").exists()
    assert cache.known_wikis(tmp_path) == []


def test_bad_cache_folders_are_typed_errors(mirror: Mirror, tmp_path: Path) -> None:
    with pytest.raises(wikisuggest.InvalidParameter, match="cache_dir"):
        LinkEngine.published("enwiki", cache_dir=123)
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    with pytest.raises(DatasetError, match="cache folder"):
        fetch.fetch("enwiki", cache_dir=blocked / "cache")
    assert mirror.requests == []


# -- the shared fetcher, for other wings ----------------------------------------------------


def test_files_into_a_cache_entry_with_sha1_and_sizes(mirror: Mirror, tmp_path: Path) -> None:
    # What another wing hands the fetcher: URLs, sizes and checksums of any kind, into an
    # entry of its own area; it gets the lock, resume, checksums, manifest and current.
    base = mirror.url("v2") + "enwiki/"
    names = ["lr_enwiki_redirects.sql.gz", "enwiki.linkmodel.json"]
    data = {n: mirror.files[f"v2/enwiki/{n}"] for n in names}
    specs = [
        files.FileSpec(base + n, size=len(d), checksum=("sha1", hashlib.sha1(d).hexdigest()))
        for n, d in data.items()
    ]
    entry = cache.CacheEntry(tmp_path, "translation", "enwiki")
    made: list[str] = []

    def make(staged: files.Staged, folder: Path, _report: Any) -> dict[str, Any]:
        total = sum((staged.folder / n).stat().st_size for n in staged.files)
        (folder / "catalog.txt").write_text(str(total))
        made.append(folder.name)
        return {"outputs": ["catalog.txt"], "total": total}

    def release(_loader: Any) -> files.Release:
        return files.Release("2025-03-01", specs)

    mirror.arm("v2/enwiki/enwiki.linkmodel.json", Fault(cut_after=100_000))
    snapshot = files.fetch_files(entry, release, make, user_agent=USER_AGENT)
    assert snapshot.manifest["total"] == sum(map(len, data.values()))
    assert snapshot.manifest["downloads"]["enwiki.linkmodel.json"]["checksum"][0] == "sha1"
    assert (tmp_path / "translation" / "enwiki" / "current" / "catalog.txt").is_file()
    assert entry.current() == snapshot
    gets = [r for r in mirror.requests if r.path == "v2/enwiki/enwiki.linkmodel.json"]
    assert len(gets) == 2 and gets[1].headers["range"] == "bytes=100000-"

    # Cached: no request, no second make; offline works.
    mirror.reset_log()
    assert files.fetch_files(entry, release, make) == snapshot
    assert files.fetch_files(entry, release, make, offline=True) == snapshot
    assert mirror.requests == [] and len(made) == 1

    # A wrong checksum is fetched again once, then refused.
    bad = [files.FileSpec(base + names[0], checksum=("sha1", "0" * 40))]
    with pytest.raises(DatasetError, match=r"sha1 [0-9a-f]{40}, not the published"):
        files.fetch_files(
            cache.CacheEntry(tmp_path, "translation", "frwiki"),
            lambda _l: files.Release("x", bad),
            make,
        )
    with pytest.raises(wikisuggest.InvalidParameter):
        files.FileSpec(base + names[0], checksum=("md4", "0" * 32))
    with pytest.raises(wikisuggest.InvalidParameter):
        files.FileSpec(base + "../escape", name="../escape")


def _rate(bar: Any) -> float:
    """The rate a tqdm bar shows, in its units per second."""
    shown = str(bar)
    found = re.search(r"([0-9.]+)([kMGTPEZY]?)(?:B|title|anchor|key|it)/s", shown)
    assert found, shown
    scale = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
    return float(found.group(1)) * scale.get(found.group(2), 1e21)


def test_progress_rates_count_this_run_s_work_only() -> None:
    pytest.importorskip("tqdm")
    from wikisuggest import _progress

    # A phase whose first report comes when a terabyte is done already (as after a fast
    # phase, or a resumed download): the rate is of what is done while the bar shows.
    phases = _progress.PhaseProgress("converting enwiki")
    phases.update(10**12, 2 * 10**12, "write")
    time.sleep(0.2)
    phases.update(10**12 + 1_000, 2 * 10**12, "write")
    assert _rate(phases.bar) < 1e6
    assert "B/s" in str(phases.bar)
    phases.update(5, 10, "titles")
    assert "title" in str(phases.bar)
    phases.close()

    download = _progress.ByteProgress("lr_enwiki_anchors.sql.gz")
    download.update(500_000_000, 10**9)
    time.sleep(0.2)
    download.update(500_010_000, 10**9)
    assert _rate(download.bar) < 1e6
    download.close()
