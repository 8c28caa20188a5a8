"""Production's datasets for any published wiki, in one call: :func:`fetch`.

>>> from wikisuggest.datasets import fetch
>>> path = fetch("frwiki")  # doctest: +SKIP
>>> engine = wikisuggest.LinkEngine.open(path, "frwiki")  # doctest: +SKIP

What a call does, in order (see :mod:`wikisuggest.datasets.cache` for the folders):

1. Without ``update=True``, a cached snapshot is returned as it is, without the network.
2. The published indexes are read (kept an hour) and the wiki's base chosen (v2 wins).
3. The five ``.checksum`` files are read. If a snapshot of that version is cached, it becomes
   current and nothing is downloaded.
4. The sizes of the files to download are asked for (``HEAD``), printed, and the free disk
   space is checked, before the first byte.
5. The files are downloaded one at a time, hashed as they arrive, resumed after a cut, and
   verified against the published checksums (a mismatch is fetched once more from zero, then
   raised as :class:`~wikisuggest.DatasetError`).
6. They are converted (in bounded memory) into a new snapshot, which becomes current; the
   downloaded files are then deleted unless ``keep_sources=True``.

Two processes fetching the same wiki take turns on a lock: the second finds the first one's
snapshot and downloads nothing. Ctrl-C leaves the partial download for the next call and never
a half-made snapshot.
"""

from __future__ import annotations

import datetime
import hashlib
import logging
import os
import re
import shutil
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _progress
from .._native import NativeDownloader, __version__, convert_dataset
from ..errors import DatasetError, InvalidParameter, WikisuggestError
from . import cache as _cache
from .published import (
    DATASETS,
    BaseUrl,
    PublishedIndex,
    base_urls,
    dataset_file,
    parse_checksum,
    parse_index,
    wiki_id,
)

__all__ = [
    "DownloadSettings",
    "Published",
    "fetch",
    "published_index",
    "published_version",
    "serving_folder",
]

log = logging.getLogger("wikisuggest.datasets")

#: Sent when no User-Agent is given (``user_agent=`` or ``WIKISUGGEST_USER_AGENT``).
DEFAULT_USER_AGENT = f"wikisuggest/{__version__} (https://github.com/wikisuggest/wikisuggest)"

#: How long a published index is trusted before it is read again.
INDEX_MAX_AGE = 3600.0
#: Largest index and checksum file accepted.
_INDEX_LIMIT = 1 << 20
_CHECKSUM_LIMIT = 4096
#: Largest published file accepted when the server does not give its size.
_MAX_FILE_SIZE = 1 << 40
#: Conversion needs room for its work files and the native file: at their largest about five
#: times the compressed sources (``bench/convert.py``: 10.3 GB for 2.1 GB of enwiki-size
#: sources); a margin on top.
_CONVERSION_SPACE_FACTOR = 6.0

_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass
class DownloadSettings:
    """Timeouts and retries of the downloads (the defaults suit the published servers)."""

    connect_timeout: float = 10.0
    #: Longest silence of a transfer before it is resumed.
    read_timeout: float = 30.0
    max_retries: int = 5
    backoff_base: float = 0.5
    max_retry_after: float = 120.0


#: The settings every fetch uses.
settings = DownloadSettings()


def _offline(offline: bool | None) -> bool:
    if offline is not None:
        if not isinstance(offline, bool):
            raise InvalidParameter("offline must be True, False or None", parameter="offline")
        return offline
    return os.environ.get("WIKISUGGEST_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _expect(expect: Mapping[str, str] | None) -> dict[str, str]:
    if expect is None:
        return {}
    if not isinstance(expect, Mapping):
        raise InvalidParameter(
            "expect must map dataset names to sha256 values, e.g. {'model': '3f2a…'}",
            parameter="expect",
        )
    out = {}
    for name, value in expect.items():
        if name not in DATASETS:
            raise InvalidParameter(
                f"expect names {name!r}; the datasets are {', '.join(DATASETS)}",
                parameter="expect",
            )
        if not isinstance(value, str) or not _HEX64.fullmatch(value.lower()):
            raise InvalidParameter(
                f"expect[{name!r}] must be a sha256 (64 hex digits)", parameter="expect"
            )
        out[name] = value.lower()
    return out


def _user_agent(user_agent: str | None) -> str:
    if user_agent is not None:
        return user_agent
    return os.environ.get("WIKISUGGEST_USER_AGENT") or DEFAULT_USER_AGENT


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


class _Report:
    """Messages (printed between the bars with ``progress``, else logged) and the bars."""

    def __init__(self, progress: bool) -> None:
        self.progress = progress

    def say(self, message: str) -> None:
        if self.progress:
            _progress.say(message)
        else:
            log.info("%s", message)

    def bytes_bar(self, desc: str) -> _progress.ByteProgress | None:
        return _progress.ByteProgress(desc) if self.progress else None

    def phase_bar(self, desc: str) -> _progress.PhaseProgress | None:
        return _progress.PhaseProgress(desc) if self.progress else None


def _downloader(user_agent: str | None) -> NativeDownloader:
    s = settings
    return NativeDownloader(
        _user_agent(user_agent),
        s.connect_timeout,
        s.read_timeout,
        s.max_retries,
        s.backoff_base,
        s.max_retry_after,
    )


def _index_file(root: Path, base: BaseUrl) -> Path:
    digest = hashlib.sha256(base.url.encode("utf-8")).hexdigest()[:12]
    return root / "datasets" / "index" / f"{base.name}-{digest}.txt"


def _read_index(
    downloader: NativeDownloader, root: Path, base: BaseUrl, fresh: bool
) -> list[str] | None:
    """A base's ``wikis.txt``: from the cache when younger than an hour (unless ``fresh``),
    else from the server (then cached). An unreachable server falls back to an older copy."""
    path = _index_file(root, base)
    try:
        age = time.time() - path.stat().st_mtime
    except OSError:
        age = None
    if age is not None and 0 <= age < INDEX_MAX_AGE and not fresh:
        return parse_index(path.read_bytes())
    try:
        got = downloader.get(base.url + "wikis.txt", _INDEX_LIMIT)
    except WikisuggestError:
        if age is None:
            raise
        log.warning("%swikis.txt cannot be read; using the copy from %.0f s ago", base.url, age)
        return parse_index(path.read_bytes())
    if got is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    _cache.write_atomically(path, got[0])
    return parse_index(got[0])


def published_index(
    source: str = "auto",
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    user_agent: str | None = None,
    fresh: bool = False,
) -> PublishedIndex:
    """The union of the published indexes of ``source``'s bases (each kept an hour)."""
    root = _cache.cache_root(cache_dir)
    downloader = _downloader(user_agent)
    bases = base_urls(source)
    lists = {}
    for base in bases:
        found = _read_index(downloader, root, base, fresh)
        if found is None:
            log.warning("%s has no wikis.txt", base.url)
        lists[base.name] = found or []
    return PublishedIndex.from_lists(bases, lists)


@dataclass
class Published:
    """What a base publishes for one wiki right now: its checksums and where its files are."""

    wiki: str
    base: BaseUrl
    checksums: dict[str, str]
    remote: dict[str, dict[str, Any]] = field(default_factory=dict)

    def url(self, dataset: str) -> str:
        return f"{self.base.url}{self.wiki}/{dataset_file(self.wiki, dataset)}"


def _read_checksums(downloader: NativeDownloader, wiki: str, base: BaseUrl) -> Published | None:
    """The five published checksums, or ``None`` when a file is missing (withdrawn)."""
    checksums = {}
    for dataset in DATASETS:
        url = f"{base.url}{wiki}/{dataset_file(wiki, dataset)}.checksum"
        got = downloader.get(url, _CHECKSUM_LIMIT)
        if got is None:
            log.warning("%s is missing", url)
            return None
        checksums[dataset] = parse_checksum(got[0], url)
    return Published(wiki, base, checksums)


def published_version(
    wiki: str,
    *,
    source: str = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
    user_agent: str | None = None,
) -> Published | None:
    """The version published for ``wiki`` now (its five checksums and base), or ``None``
    if no base publishes it."""
    wiki = wiki_id(wiki)
    index = published_index(source, cache_dir=cache_dir, user_agent=user_agent)
    base = index.base_of(wiki)
    if base is None:
        return None
    return _read_checksums(_downloader(user_agent), wiki, base)


def _check_space(folder: Path, need: int, what: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    if free < need:
        raise DatasetError(
            f"not enough free disk space in {folder} for {what}: about {_size(need)} needed, "
            f"{_size(free)} free (choose another cache folder with cache_dir= or "
            "WIKISUGGEST_CACHE_DIR)",
            path=str(folder),
        )


def _reusable(path: Path, sha256: str) -> bool:
    """Whether ``path`` holds the file with this checksum (a verified download not yet
    converted, or a kept source)."""
    return path.is_file() and _cache.sha256_file(path) == sha256


def _stage_sources(
    store: _cache.WikiCache,
    published: Published,
    downloader: NativeDownloader,
    report: _Report,
) -> dict[str, dict[str, Any]]:
    """Puts the five verified files in ``store.downloads`` (downloading what no earlier
    attempt or kept source has) and returns, per dataset, where each came from."""
    wiki = published.wiki
    folder = store.downloads
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, dict[str, Any]] = {}
    missing = []
    for dataset in DATASETS:
        name = dataset_file(wiki, dataset)
        sha = published.checksums[dataset]
        entry: dict[str, Any] = {"name": name, "url": published.url(dataset), "sha256": sha}
        files[dataset] = entry
        target = folder / name
        kept = store.sources / name
        if _reusable(target, sha):
            entry["reused"] = "download"
        elif _reusable(kept, sha):
            _link_or_copy(kept, target)
            entry["reused"] = "kept source"
        else:
            target.unlink(missing_ok=True)
            missing.append(dataset)

    # Sizes first, and room for them and the conversion, before the first byte.
    for dataset in missing:
        remote = downloader.head(files[dataset]["url"])
        if remote is None:
            raise DatasetError(
                f"{files[dataset]['url']} is listed by its checksum but cannot be found",
                url=files[dataset]["url"],
            )
        files[dataset].update(remote)
    partial = {d: _partial_size(folder / files[d]["name"]) for d in missing}
    to_download = sum((files[d].get("size") or 0) - partial[d] for d in missing)
    sources = sum(
        files[d].get("size") or (folder / files[d]["name"]).stat().st_size
        for d in DATASETS
        if d in missing or (folder / files[d]["name"]).is_file()
    )
    if missing:
        sizes = ", ".join(
            f"{d} {_size(files[d]['size'])}" if files[d].get("size") is not None else f"{d} ?"
            for d in missing
        )
        report.say(f"{wiki}: {_size(to_download)} to download from {published.base.url} ({sizes})")
    _check_space(
        store.dir,
        int(to_download + sources * _CONVERSION_SPACE_FACTOR),
        f"{wiki}'s datasets",
    )

    for dataset in missing:
        entry = files[dataset]
        bar = report.bytes_bar(entry["name"])
        try:
            done = downloader.download(
                entry["url"],
                str(folder / entry["name"]),
                entry["sha256"],
                int(entry.get("size") or _MAX_FILE_SIZE),
                bar.update if bar else None,
            )
        finally:
            if bar:
                bar.close()
        entry.update(done["remote"])
        entry["size"] = done["size"]
        if done["resumed_from"]:
            entry["resumed_from"] = done["resumed_from"]
    for dataset in DATASETS:
        entry = files[dataset]
        path = folder / entry["name"]
        entry.setdefault("size", path.stat().st_size)
        # The converter verifies every file against a `.checksum` beside it.
        (folder / f"{entry['name']}.checksum").write_text(
            f"{entry['sha256']}  {entry['name']}\n", "ascii"
        )
    return files


def _partial_size(dest: Path) -> int:
    try:
        return (dest.parent / f"{dest.name}.incomplete").stat().st_size
    except OSError:
        return 0


def _link_or_copy(src: Path, dst: Path) -> None:
    dst.unlink(missing_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _convert(
    store: _cache.WikiCache,
    published: Published,
    files: dict[str, dict[str, Any]],
    report: _Report,
    keep_sources: bool,
) -> _cache.Snapshot:
    """Converts the verified files into a new snapshot and removes (or keeps) them."""
    wiki = published.wiki
    staging = store.staging()
    try:
        bar = report.phase_bar(f"converting {wiki}")
        try:
            native = Path(
                convert_dataset(
                    str(store.downloads), wiki, str(staging), bar.update if bar else None
                )
            )
        finally:
            if bar:
                bar.close()
        manifest = {
            "format": _cache.MANIFEST_FORMAT,
            "wiki": wiki,
            "source": published.base.name,
            "base_url": published.base.url,
            "fetched_at": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"
            ),
            "checksums": dict(published.checksums),
            "files": {d: {k: v for k, v in files[d].items() if k != "reused"} for d in DATASETS},
            "native": {
                "file": native.name,
                "size": native.stat().st_size,
                "sha256": _cache.sha256_file(native),
            },
            "versions": {"wikisuggest": __version__, "native_format": _native_format(native)},
            "sources_kept": keep_sources,
        }
        snapshot = store.add_snapshot(staging, manifest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    for dataset in DATASETS:
        name = files[dataset]["name"]
        path = store.downloads / name
        if keep_sources:
            store.sources.mkdir(parents=True, exist_ok=True)
            os.replace(path, store.sources / name)
        else:
            path.unlink(missing_ok=True)
        (store.downloads / f"{name}.checksum").unlink(missing_ok=True)
    if keep_sources:
        # Only the latest version's files are kept.
        wanted = {files[d]["name"] for d in DATASETS}
        for p in store.sources.iterdir():
            if p.name not in wanted:
                p.unlink(missing_ok=True)
    return snapshot


def _native_format(native: Path) -> int:
    with open(native, "rb") as f:
        head = f.read(12)
    return int.from_bytes(head[8:12], "little")


def _unpublished(wiki: str, cached: _cache.Snapshot, why: str) -> Path:
    message = (
        f"{wiki} is {why} upstream; keeping the cached snapshot {cached.id} "
        f"(fetched {cached.manifest.get('fetched_at', '?')})"
    )
    log.warning("%s", message)
    warnings.warn(message, UserWarning, stacklevel=3)
    return cached.native


def fetch(
    wiki: str,
    *,
    source: str = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
    update: bool = False,
    offline: bool | None = None,
    expect: Mapping[str, str] | None = None,
    progress: bool = False,
    user_agent: str | None = None,
    keep_sources: bool = False,
) -> Path:
    """Production's datasets for ``wiki``, fetched, verified and converted once, then cached:
    returns the native file, ready for :meth:`LinkEngine.open <wikisuggest.LinkEngine.open>`
    (or use :meth:`LinkEngine.published <wikisuggest.LinkEngine.published>`).

    ``wiki`` as users write it: ``"frwiki"``, ``"fr"``, ``"fr.wikipedia.org"``.
    ``source``: ``"auto"`` (v2, else legacy), ``"v2"``, ``"legacy"`` or a mirror's URL.
    ``cache_dir``: the cache root (default: ``WIKISUGGEST_CACHE_DIR`` or the platform's).
    ``update``: check what is published and fetch a newer version (without it, a cached
    snapshot is returned without touching the network).
    ``offline``: never touch the network (default: ``WIKISUGGEST_OFFLINE=1``).
    ``expect``: sha256 values that the datasets must have, e.g. ``{"model": "…"}``: a cached
    snapshot that has them, or the published version if it has them, else
    :class:`~wikisuggest.DatasetError`.
    ``progress``: print sizes and show progress bars (needs tqdm).
    ``user_agent``: sent with every request (default: ``WIKISUGGEST_USER_AGENT``, else
    wikisuggest's own). No credentials are ever sent.
    ``keep_sources``: keep the published files after conversion (the next version then
    downloads only the files that changed).
    """
    wiki = wiki_id(wiki)
    offline = _offline(offline)
    pinned = _expect(expect)
    for name, value in (("update", update), ("progress", progress), ("keep_sources", keep_sources)):
        if not isinstance(value, bool):
            raise InvalidParameter(f"{name} must be True or False", parameter=name)
    base_urls(source)  # checks `source` before anything else happens
    root = _cache.cache_root(cache_dir)
    store = _cache.WikiCache(root, wiki)

    def cached() -> _cache.Snapshot | None:
        return store.matching(pinned) if pinned else store.current()

    found = cached()
    if offline:
        if found is None:
            wanted = " with " + ", ".join(f"{k}={v}" for k, v in pinned.items()) if pinned else ""
            raise DatasetError(
                f"offline, and no cached dataset of {wiki}{wanted} in {store.dir}; fetch it "
                f"once with network access (wikisuggest datasets fetch {wiki})",
                wiki=wiki,
            )
        return found.native
    if found is not None and not update:
        return found.native

    report = _Report(progress)
    with store.lock():
        store.remove_stale()
        # Another process may have fetched it while this one waited for the lock.
        found = cached()
        if found is not None and not update:
            return found.native
        downloader = _downloader(user_agent)
        try:
            index = published_index(
                source, cache_dir=root, user_agent=user_agent, fresh=update and found is not None
            )
            base = index.base_of(wiki)
            if base is None:
                current = store.current()
                if current is not None:
                    return _unpublished(wiki, current, "no longer published")
                raise index.unknown(wiki)
            published = _read_checksums(downloader, wiki, base)
        except (WikisuggestError, OSError) as err:
            if found is not None and not isinstance(err, DatasetError):
                log.warning("cannot check %s upstream (%s); keeping the cached copy", wiki, err)
                return found.native
            raise
        if published is None:
            current = store.current()
            if current is not None:
                return _unpublished(wiki, current, "only partly published (a checksum is missing)")
            raise DatasetError(
                f"{base.url}{wiki}/ lacks some of its files' checksums", wiki=wiki, url=base.url
            )
        for name, want in pinned.items():
            if published.checksums[name] != want:
                if found is not None:
                    log.info(
                        "%s: the published %s is not the pinned one; keeping %s",
                        wiki,
                        name,
                        found.id,
                    )
                    return found.native
                raise DatasetError(
                    f"the {name} published for {wiki} has sha256 {published.checksums[name]}, "
                    f"not the expected {want}, and no cached snapshot has it",
                    wiki=wiki,
                    expected=want,
                    actual=published.checksums[name],
                )
        existing = store.snapshot(_cache.snapshot_id(published.checksums))
        if existing is not None:
            if store.current() != existing:
                store.set_current(existing)
            return existing.native
        files = _stage_sources(store, published, downloader, report)
        snapshot = _convert(store, published, files, report, keep_sources)
        store.set_current(snapshot)
        report.say(f"{wiki}: snapshot {snapshot.id} ready at {snapshot.native}")
        return snapshot.native


def serving_folder(wikis: list[str], **fetch_options: Any) -> Path:
    """A datasets folder for :class:`wikisuggest.Server` (one sub-folder per wiki) holding the
    published datasets of ``wikis``, each fetched (or taken from the cache) as :func:`fetch`
    does with ``fetch_options``."""
    natives = {wiki_id(w): fetch(w, **fetch_options) for w in wikis}
    return _cache.serving_folder(_cache.cache_root(fetch_options.get("cache_dir")), natives)
