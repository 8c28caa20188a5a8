"""Production's datasets in one call, against a loopback server playing both published bases:
the engine on a fetched snapshot is the engine on the parity folder, and every fault of the
network and of the user (cuts, ignored ranges, corrupt bytes, slow bodies, withdrawn wikis,
two processes, offline mode, Ctrl-C) ends in a correct snapshot or a clear error."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.dataset_mirror import Fault, Mirror, dataset_files
from support.paths import PARITY

import wikisuggest
from wikisuggest import DatasetError, LinkEngine
from wikisuggest.datasets import cache, published

# The module (``wikisuggest.datasets.fetch`` is the function, which the package exports).
fetch = importlib.import_module("wikisuggest.datasets.fetch")

PARITY_DATASETS = PARITY / "datasets" / "enwiki"
USER_AGENT = "wikisuggest-tests/1.0 (https://example.org/wikisuggest-tests; tests@example.org)"
ANCHORS = "v2/enwiki/lr_enwiki_anchors.sql.gz"


@pytest.fixture
def mirror(monkeypatch: pytest.MonkeyPatch) -> Iterator[Mirror]:
    server = Mirror.standard().start()
    monkeypatch.setenv("ANALYTICS_BASE_URL", server.url("v2"))
    monkeypatch.setenv("ANALYTICS_BASE_URL_LEGACY", server.url("legacy"))
    monkeypatch.delenv("WIKISUGGEST_OFFLINE", raising=False)
    monkeypatch.delenv("WIKISUGGEST_CACHE_DIR", raising=False)
    # Short waits, so the faults' retries take milliseconds.
    monkeypatch.setattr(
        fetch, "settings", fetch.DownloadSettings(read_timeout=1.0, backoff_base=0.01)
    )
    yield server
    server.stop()


def articles(n: int = 6) -> list[dict[str, Any]]:
    lines = (PARITY / "articles" / "manifest.tsv").read_text("utf-8").splitlines()[1 : n + 1]
    out = []
    for line in lines:
        file, title, _wiki, _lang, pageid, revid = line.split("\t")
        out.append(
            {
                "wikitext": (PARITY / "articles" / file).read_text("utf-8"),
                "page_title": title,
                "pageid": int(pageid),
                "revid": int(revid),
            }
        )
    return out


def recommendations(engine: LinkEngine) -> list[Any]:
    return [engine.recommend(**a) for a in articles()]


def current(root: Path, wiki: str) -> cache.Snapshot:
    found = cache.WikiCache(root, wiki).current()
    assert found is not None
    return found


def file_gets(m: Mirror) -> list[str]:
    return [r.path for r in m.gets()]


def published_sums(m: Mirror, base: str, wiki: str) -> dict[str, str]:
    return {
        d: m.sha256(f"{base}/{wiki}/{published.dataset_file(wiki, d)}") for d in published.DATASETS
    }


def test_wiki_ids_are_read_as_users_write_them() -> None:
    for given, want in [
        ("frwiki", "frwiki"),
        ("fr", "frwiki"),
        ("FR", "frwiki"),
        ("fr.wikipedia.org", "frwiki"),
        ("https://fr.wikipedia.org/wiki/Paris", "frwiki"),
        ("zh-min-nan", "zh_min_nanwiki"),
        ("zh-min-nan.wikipedia.org", "zh_min_nanwiki"),
        ("be-tarask", "be_x_oldwiki"),
        ("simple", "simplewiki"),
        ("en.wikipedia", "enwiki"),
    ]:
        assert published.wiki_id(given) == want, given
    for bad in ["", "commons.wikimedia.org", "a b", "../etc", "wiki"]:
        with pytest.raises(wikisuggest.InvalidParameter):
            published.wiki_id(bad)


def test_the_cache_root_follows_each_platforms_conventions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("WIKISUGGEST_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_root() == tmp_path / "xdg" / "wikisuggest"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert cache.cache_root() == tmp_path / ".cache" / "wikisuggest"
    monkeypatch.setattr(sys, "platform", "darwin")
    assert cache.cache_root() == tmp_path / "Library" / "Caches" / "wikisuggest"
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert cache.cache_root() == tmp_path / "local" / "wikisuggest" / "Cache"
    monkeypatch.setenv("WIKISUGGEST_CACHE_DIR", str(tmp_path / "env"))
    assert cache.cache_root() == tmp_path / "env"
    assert cache.cache_root(tmp_path / "given") == tmp_path / "given"


def test_one_call_gives_productions_engine_checksums_included(
    mirror: Mirror, tmp_path: Path
) -> None:
    path = fetch.fetch("enwiki", cache_dir=tmp_path, user_agent=USER_AGENT)
    assert path.name == "enwiki.linkdata"
    with (
        LinkEngine.open(path, "enwiki") as fetched,
        LinkEngine.open(PARITY_DATASETS, "enwiki") as parity,
    ):
        got, want = recommendations(fetched), recommendations(parity)
        assert got == want
        assert sum(len(r.links) for r in got) > 0
        sums = got[0].meta.dataset_checksums
        assert sums is not None
        assert {d: getattr(sums, d) for d in published.DATASETS} == published_sums(
            mirror, "v2", "enwiki"
        )
        assert fetched.info() == fetched.info()

    # The one-call form: the same snapshot, no second download.
    before = len(mirror.requests)
    with LinkEngine.published("enwiki", cache_dir=tmp_path) as engine:
        assert recommendations(engine) == want
    assert len(mirror.requests) == before

    # Every file was fetched once, one at a time, as bytes, with the user's agent and no
    # credentials; the sources were deleted after conversion.
    gets = file_gets(mirror)
    assert sorted(gets) == sorted(f"v2/enwiki/{n}" for n in dataset_files("enwiki"))
    for r in mirror.requests:
        assert r.headers["user-agent"].startswith(USER_AGENT)
        assert "authorization" not in r.headers and "cookie" not in r.headers
    store = cache.WikiCache(tmp_path, "enwiki")
    assert [p.name for p in store.downloads.iterdir()] == []

    snapshot = store.current()
    assert snapshot is not None and snapshot.native == path
    m = snapshot.manifest
    assert m["wiki"] == "enwiki" and m["source"] == "v2"
    assert m["checksums"] == published_sums(mirror, "v2", "enwiki")
    for d in published.DATASETS:
        entry = m["files"][d]
        name = published.dataset_file("enwiki", d)
        assert entry["url"] == f"{mirror.url('v2')}enwiki/{name}"
        assert entry["size"] == len(mirror.files[f"v2/enwiki/{name}"])
        assert entry["etag"] and entry["last_modified"] == "Tue, 04 Mar 2025 10:00:00 GMT"
    assert m["native"]["sha256"] == cache.sha256_file(path)
    assert m["versions"]["wikisuggest"] == wikisuggest.__version__
    assert m["fetched_at"].endswith("+00:00")


def test_v2_wins_and_legacy_checksum_files_may_name_relative_paths(
    mirror: Mirror, tmp_path: Path
) -> None:
    index = fetch.published_index(cache_dir=tmp_path)
    assert [b.name for b in index.wikis["enwiki"]] == ["v2", "legacy"]
    assert "not a valid line!" not in index.wikis
    fetch.fetch("en", cache_dir=tmp_path)
    assert current(tmp_path, "enwiki").checksums == published_sums(mirror, "v2", "enwiki")
    assert published_sums(mirror, "legacy", "enwiki") != published_sums(mirror, "v2", "enwiki")

    assert b"../../data/" in mirror.files["legacy/frwiki/frwiki.linkmodel.json.checksum"]
    path = fetch.fetch("fr.wikipedia.org", cache_dir=tmp_path)
    with LinkEngine.open(path, "frwiki") as engine:
        result = engine.recommend(**articles(1)[0])
        assert result.meta is not None
        sums = result.meta.dataset_checksums
        assert (
            sums is not None and sums.model == published_sums(mirror, "legacy", "frwiki")["model"]
        )
    assert current(tmp_path, "frwiki").source == "legacy"


def test_nothing_is_downloaded_when_all_five_checksums_match(
    mirror: Mirror, tmp_path: Path
) -> None:
    first = fetch.fetch("enwiki", cache_dir=tmp_path)
    mirror.reset_log()
    assert fetch.fetch("enwiki", cache_dir=tmp_path, update=True) == first
    assert file_gets(mirror) == []
    assert not [r for r in mirror.requests if r.method == "HEAD"]
    assert sorted(r.path for r in mirror.gets(".checksum")) == sorted(
        f"v2/enwiki/{n}.checksum" for n in dataset_files("enwiki")
    )


def test_an_unknown_wiki_names_the_nearest_published_ids(mirror: Mirror, tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as caught:
        fetch.fetch("ennwiki", cache_dir=tmp_path)
    assert "enwiki" in str(caught.value) and caught.value.suggestions[0] == "enwiki"  # type: ignore[attr-defined]
    assert file_gets(mirror) == []


def test_a_wiki_withdrawn_upstream_keeps_its_cached_copy(mirror: Mirror, tmp_path: Path) -> None:
    path = fetch.fetch("frwiki", cache_dir=tmp_path)
    mirror.withdraw("legacy", "frwiki")
    with pytest.warns(UserWarning, match="no longer published"):
        assert fetch.fetch("frwiki", cache_dir=tmp_path, update=True) == path
    assert path.is_file()
    with pytest.raises(DatasetError, match="no published dataset"):
        fetch.fetch("frwiki", cache_dir=tmp_path / "elsewhere")


def test_a_cut_connection_is_resumed_where_it_stopped(mirror: Mirror, tmp_path: Path) -> None:
    mirror.arm(ANCHORS, Fault(cut_after=100_000))
    path = fetch.fetch("enwiki", cache_dir=tmp_path)
    gets = mirror.gets("lr_enwiki_anchors.sql.gz")
    assert len(gets) == 2
    assert gets[1].headers["range"] == "bytes=100000-"
    assert gets[1].headers["if-range"].startswith('"')
    assert gets[1].status == 206
    assert cache.sha256_file(path) == current(tmp_path, "enwiki").manifest["native"]["sha256"]


def test_a_200_to_a_range_request_starts_again_from_zero(mirror: Mirror, tmp_path: Path) -> None:
    mirror.arm(ANCHORS, Fault(cut_after=50_000))
    mirror.arm(ANCHORS, Fault(ignore_range=True))
    path = fetch.fetch("enwiki", cache_dir=tmp_path)
    gets = mirror.gets("lr_enwiki_anchors.sql.gz")
    assert [g.status for g in gets] == [200, 200]
    assert "range" in gets[1].headers
    with (
        LinkEngine.open(path, "enwiki") as engine,
        LinkEngine.open(PARITY_DATASETS, "enwiki") as parity,
    ):
        assert recommendations(engine) == recommendations(parity)


def test_corrupt_bytes_are_fetched_once_more_then_reported(mirror: Mirror, tmp_path: Path) -> None:
    mirror.arm(ANCHORS, Fault(corrupt_at=2000))
    fetch.fetch("enwiki", cache_dir=tmp_path)
    assert len(mirror.gets("lr_enwiki_anchors.sql.gz")) == 2

    other = tmp_path / "other"
    mirror.reset_log()
    mirror.arm(ANCHORS, Fault(corrupt_at=2000, times=2))
    with pytest.raises(DatasetError) as caught:
        fetch.fetch("enwiki", cache_dir=other)
    err: Any = caught.value
    assert err.url == mirror.url("v2") + "enwiki/lr_enwiki_anchors.sql.gz"
    assert err.expected == mirror.sha256(ANCHORS)
    assert err.actual != err.expected and err.actual in str(err) and err.expected in str(err)
    assert len(mirror.gets("lr_enwiki_anchors.sql.gz")) == 2
    store = cache.WikiCache(other, "enwiki")
    assert store.current() is None and store.all_snapshots() == []


def test_a_slow_body_finishes_and_a_stalled_one_is_resumed(mirror: Mirror, tmp_path: Path) -> None:
    mirror.arm(ANCHORS, Fault(chunk=32_768, delay=0.02))
    mirror.arm("v2/enwiki/lr_enwiki_w2vfiltered.sql.gz", Fault(stall_after=500_000, stall=3.0))
    path = fetch.fetch("enwiki", cache_dir=tmp_path)
    assert len(mirror.gets("lr_enwiki_anchors.sql.gz")) == 1
    stalled = mirror.gets("lr_enwiki_w2vfiltered.sql.gz")
    assert len(stalled) == 2 and stalled[1].headers["range"] != "bytes=0-"
    assert path.is_file()


def test_offline_mode_never_touches_the_network(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = fetch.fetch("enwiki", cache_dir=tmp_path)
    mirror.reset_log()
    monkeypatch.setenv("WIKISUGGEST_OFFLINE", "1")
    assert fetch.fetch("enwiki", cache_dir=tmp_path, update=True) == path
    with pytest.raises(DatasetError, match="offline"):
        fetch.fetch("frwiki", cache_dir=tmp_path)
    monkeypatch.delenv("WIKISUGGEST_OFFLINE")
    with pytest.raises(DatasetError, match="offline"):
        fetch.fetch("frwiki", cache_dir=tmp_path, offline=True)
    assert mirror.requests == []


def test_expect_pins_a_version(mirror: Mirror, tmp_path: Path) -> None:
    v2_model = mirror.sha256("v2/enwiki/enwiki.linkmodel.json")
    path = fetch.fetch("enwiki", cache_dir=tmp_path, expect={"model": v2_model})
    with pytest.raises(DatasetError, match="not the expected"):
        fetch.fetch("enwiki", cache_dir=tmp_path / "b", expect={"model": "0" * 64})
    # A pinned version that is cached is found without the network.
    mirror.reset_log()
    assert fetch.fetch("enwiki", cache_dir=tmp_path, expect={"model": v2_model.upper()}) == path
    assert mirror.requests == []
    with pytest.raises(wikisuggest.InvalidParameter):
        fetch.fetch("enwiki", cache_dir=tmp_path, expect={"vectors": v2_model})


def test_free_disk_space_is_checked_before_the_first_byte(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda _p: usage._replace(free=1000))
    with pytest.raises(DatasetError, match="free disk space"):
        fetch.fetch("enwiki", cache_dir=tmp_path)
    assert file_gets(mirror) == []
    heads = [r.path for r in mirror.requests if r.method == "HEAD"]
    assert len(heads) == 5


def test_kept_sources_mean_only_changed_files_are_fetched(mirror: Mirror, tmp_path: Path) -> None:
    first = fetch.fetch("enwiki", cache_dir=tmp_path, keep_sources=True)
    store = cache.WikiCache(tmp_path, "enwiki")
    assert len(list(store.sources.iterdir())) == 5
    with LinkEngine.open(first, "enwiki") as old_engine:
        # A retrained model is published: only it is downloaded.
        mirror.publish("v2", "enwiki", model_suffix=b"  \n")
        mirror.reset_log()
        second = fetch.fetch("enwiki", cache_dir=tmp_path, update=True, keep_sources=True)
        assert second != first
        assert file_gets(mirror) == ["v2/enwiki/enwiki.linkmodel.json"]
        # The engine on the previous snapshot is undisturbed by the swap.
        assert old_engine.recommend(**articles(1)[0]).links
    assert current(tmp_path, "enwiki").native == second
    assert len(store.all_snapshots()) == 2


def test_a_redirect_to_another_host_is_refused(mirror: Mirror, tmp_path: Path) -> None:
    mirror.arm(ANCHORS, Fault(location="http://127.0.0.2:9/elsewhere"))
    with pytest.raises(wikisuggest.TransportError, match="same host"):
        fetch.fetch("enwiki", cache_dir=tmp_path)


CHILD = """
import importlib, json, logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
fetch = importlib.import_module("wikisuggest.datasets.fetch")
fetch.settings = fetch.DownloadSettings(read_timeout=2.0, backoff_base=0.01)
path = fetch.fetch("enwiki", cache_dir=sys.argv[1])
print(json.dumps(str(path)))
"""


def child_env(m: Mirror) -> dict[str, str]:
    return {
        **os.environ,
        "ANALYTICS_BASE_URL": m.url("v2"),
        "ANALYTICS_BASE_URL_LEGACY": m.url("legacy"),
    }


def test_two_processes_fetching_at_once_download_once(mirror: Mirror, tmp_path: Path) -> None:
    # A slow file keeps the first process busy while the second starts.
    mirror.arm(ANCHORS, Fault(chunk=16_384, delay=0.1))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path)],
            env=child_env(mirror),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    paths = {json.loads(out) for out, _ in outputs}
    assert len(paths) == 1
    # One of them waited on the lock, then found the other's snapshot.
    assert sum("waiting for another process" in err for _, err in outputs) == 1
    gets = file_gets(mirror)
    assert sorted(gets) == sorted(f"v2/enwiki/{n}" for n in dataset_files("enwiki"))


def test_ctrl_c_leaves_a_resumable_partial_never_a_broken_snapshot(
    mirror: Mirror, tmp_path: Path
) -> None:
    mirror.arm(ANCHORS, Fault(chunk=8192, delay=0.05))
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        env=child_env(mirror),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = cache.WikiCache(tmp_path, "enwiki")
    partial = store.downloads / "lr_enwiki_anchors.sql.gz.incomplete"
    deadline = time.monotonic() + 60
    while not (partial.is_file() and partial.stat().st_size >= 40_000):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    kept = partial.stat().st_size
    assert kept >= 40_000
    assert store.current() is None
    assert not store.snapshots.exists() or not list(store.snapshots.iterdir())

    mirror.reset_log()
    path = fetch.fetch("enwiki", cache_dir=tmp_path)
    gets = mirror.gets("lr_enwiki_anchors.sql.gz")
    assert len(gets) == 1 and gets[0].headers["range"] == f"bytes={kept}-"
    with (
        LinkEngine.open(path, "enwiki") as engine,
        LinkEngine.open(PARITY_DATASETS, "enwiki") as parity,
    ):
        assert recommendations(engine) == recommendations(parity)


def test_bad_arguments_are_refused_before_anything_is_sent(mirror: Mirror, tmp_path: Path) -> None:
    cases: list[dict[str, Any]] = [
        {"source": "v3"},
        {"update": "yes"},
        {"expect": {"model": "abc"}},
        {"offline": 1},
    ]
    for kwargs in cases:
        with pytest.raises(wikisuggest.InvalidParameter):
            fetch.fetch("enwiki", cache_dir=tmp_path, **kwargs)
    assert mirror.requests == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(wikisuggest.ConfigurationError):
            fetch.fetch("enwiki", cache_dir=tmp_path, user_agent="no contact")


def test_an_interrupted_conversion_leaves_its_verified_downloads_for_the_next_call(
    mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = fetch.convert_dataset
    phases: list[str] = []

    def interrupted(src: str, wiki: str, out: str, progress: Any = None, **options: Any) -> str:
        def stop(done: int, total: int | None, phase: str) -> None:
            # Ctrl-C at the first report: progress is reported between waits, so a later
            # phase may already be over on a fast machine.
            phases.append(phase)
            raise KeyboardInterrupt

        return str(real(src, wiki, out, stop, **options))

    monkeypatch.setattr(fetch, "convert_dataset", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fetch.fetch("enwiki", cache_dir=tmp_path)
    assert "read" in phases
    store = cache.WikiCache(tmp_path, "enwiki")
    assert store.current() is None and not list(store.snapshots.iterdir())
    downloaded = sorted(
        p.name for p in store.downloads.iterdir() if not p.name.endswith(".checksum")
    )
    assert downloaded == sorted(dataset_files("enwiki"))

    monkeypatch.setattr(fetch, "convert_dataset", real)
    mirror.reset_log()
    path = fetch.fetch("enwiki", cache_dir=tmp_path)
    assert file_gets(mirror) == [] and path.is_file()
    assert [p.name for p in store.downloads.iterdir()] == []


def test_a_tampered_manifest_cannot_point_outside_its_snapshot(
    mirror: Mirror, tmp_path: Path
) -> None:
    path = fetch.fetch("enwiki", cache_dir=tmp_path)
    manifest_path = path.parent / cache.MANIFEST
    manifest = json.loads(manifest_path.read_text("utf-8"))
    manifest["native"]["file"] = "../../../outside.linkdata"
    (tmp_path / "outside.linkdata").write_bytes(path.read_bytes())
    manifest_path.write_text(json.dumps(manifest), "utf-8")
    with pytest.raises(DatasetError, match="offline"):
        fetch.fetch("enwiki", cache_dir=tmp_path, offline=True)
