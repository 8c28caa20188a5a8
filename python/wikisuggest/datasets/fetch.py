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
5. The files are downloaded one at a time, hashed as they arrive, resumed after a cut (within
   a budget of requests and bytes per file), and verified against the published checksums (a
   mismatch is fetched once more from zero, then raised as :class:`~wikisuggest.DatasetError`).
6. They are converted (in bounded memory, with work files bounded by the space reserved in
   step 4) into a new snapshot, which becomes current; the downloaded files are then deleted
   unless ``keep_sources=True``.

Steps 3 to 6 are :func:`wikisuggest.datasets.files.fetch_files`, the fetcher every wing shares.

Two processes fetching the same wiki take turns on a lock: the second finds the first one's
snapshot and downloads nothing. Ctrl-C leaves the partial download for the next call and never
a half-made snapshot.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._native import NativeDownloader, __version__, convert_dataset
from ..errors import DatasetError, InvalidParameter, WikisuggestError
from . import cache as _cache
from .files import (
    DEFAULT_USER_AGENT,
    DownloadSettings,
    FileSpec,
    Release,
    Report,
    Staged,
    downloader,
    fetch_files,
    offline_default,
    user_agent_default,
)
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
    "DEFAULT_USER_AGENT",
    "DownloadSettings",
    "Published",
    "PublishedWiki",
    "fetch",
    "published_index",
    "published_version",
    "published_wikis",
    "serving_folder",
]

log = logging.getLogger("wikisuggest.datasets")

#: How long a published index is trusted before it is read again.
INDEX_MAX_AGE = 3600.0
#: Largest index and checksum file accepted.
_INDEX_LIMIT = 1 << 20
_CHECKSUM_LIMIT = 4096
#: Conversion needs room for its work files and the native file: at their largest about five
#: times the compressed sources (``bench/convert.py``: 10.3 GB for 2.1 GB of enwiki-size
#: sources); a margin on top. The conversion's work files are held to what is reserved.
_CONVERSION_SPACE_FACTOR = 6.0
#: The least reserved for a conversion's work (small wikis: fixed costs dominate).
_CONVERSION_SPACE_FLOOR = 64 << 20

#: The settings every fetch of link datasets uses.
settings = DownloadSettings()


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
        if (
            not isinstance(value, str)
            or len(value) != 64
            or not set(value.lower()) <= set("0123456789abcdef")
        ):
            raise InvalidParameter(
                f"expect[{name!r}] must be a sha256 (64 hex digits)", parameter="expect"
            )
        out[name] = value.lower()
    return out


def _index_file(root: Path, base: BaseUrl) -> Path:
    digest = hashlib.sha256(base.url.encode("utf-8")).hexdigest()[:12]
    return root / "datasets" / "index" / f"{base.name}-{digest}.txt"


def _read_index(
    loader: NativeDownloader, root: Path, base: BaseUrl, fresh: bool
) -> list[str] | None:
    """A base's ``wikis.txt``: from the cache when younger than an hour (unless ``fresh``),
    else from the server (then cached). An unreachable server falls back to an older copy."""
    path = _index_file(root, base)
    try:
        age = time.time() - path.lstat().st_mtime
    except OSError:
        age = None
    cached = _cache.read_small(path, _INDEX_LIMIT) if age is not None else None
    if cached is not None and age is not None and 0 <= age < INDEX_MAX_AGE and not fresh:
        return parse_index(cached)
    try:
        got = loader.get(base.url + "wikis.txt", _INDEX_LIMIT)
    except WikisuggestError:
        if cached is None or age is None:
            raise
        log.warning("%swikis.txt cannot be read; using the copy from %.0f s ago", base.url, age)
        return parse_index(cached)
    if got is None:
        return None
    _cache.write_atomically(_cache.checked_folder(root, "datasets", "index") / path.name, got[0])
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
    loader = downloader(settings, user_agent)
    bases = base_urls(source)
    lists = {}
    for base in bases:
        found = _read_index(loader, root, base, fresh)
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

    def release(self) -> Release:
        """The five files with their checksums, as the shared fetcher takes them."""
        return Release(
            version="".join(f"{d}={self.checksums[d]}\n" for d in DATASETS),
            snapshot=_cache.snapshot_id(self.checksums),
            files=[
                FileSpec(
                    self.url(d),
                    dataset_file(self.wiki, d),
                    checksum=("sha256", self.checksums[d]),
                )
                for d in DATASETS
            ],
            origin=self.base.url,
            manifest={
                "wiki": self.wiki,
                "source": self.base.name,
                "base_url": self.base.url,
                "checksums": dict(self.checksums),
            },
        )


def _read_checksums(loader: NativeDownloader, wiki: str, base: BaseUrl) -> Published | None:
    """The five published checksums, or ``None`` when a file is missing (withdrawn)."""
    checksums = {}
    for dataset in DATASETS:
        url = f"{base.url}{wiki}/{dataset_file(wiki, dataset)}.checksum"
        got = loader.get(url, _CHECKSUM_LIMIT)
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
    return _read_checksums(downloader(settings, user_agent), wiki, base)


@dataclass(frozen=True)
class PublishedWiki:
    """A wiki with published link datasets: the base it is taken from (``v2``, ``legacy``
    or ``mirror``) and its URL, its model's ``Last-Modified`` date and the size of its five
    files in bytes (``None`` where the server does not say)."""

    wiki: str
    base: str
    base_url: str
    model_last_modified: str | None = None
    size: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "wiki": self.wiki,
            "base": self.base,
            "base_url": self.base_url,
            "model_last_modified": self.model_last_modified,
            "size": self.size,
        }


def _details_file(root: Path, base: BaseUrl) -> Path:
    return _index_file(root, base).with_name(_index_file(root, base).stem + ".details.json")


def _published_details(
    loader: NativeDownloader, root: Path, base: BaseUrl, wikis: list[str], fresh: bool
) -> dict[str, dict[str, Any]]:
    """The model date and total size of ``wikis`` on ``base``: asked for (``HEAD``, a few at
    a time) unless known from the last hour."""
    path = _details_file(root, base)
    known: dict[str, Any] = {} if fresh else (_cache.read_json(path) or {})
    now = time.time()
    stale = [
        w
        for w in wikis
        if not isinstance(known.get(w), dict)
        or not 0 <= now - float(known[w].get("at", 0)) < INDEX_MAX_AGE
    ]
    if stale:
        urls = [f"{base.url}{w}/{dataset_file(w, d)}" for w in stale for d in DATASETS]
        answers = loader.head_many(urls)
        for i, wiki in enumerate(stale):
            files = answers[i * len(DATASETS) : (i + 1) * len(DATASETS)]
            model = files[DATASETS.index("model")]
            sizes = [f.get("size") if isinstance(f, dict) else None for f in files]
            known[wiki] = {
                "at": now,
                "model_last_modified": model.get("last_modified")
                if isinstance(model, dict)
                else None,
                "size": sum(s for s in sizes if s is not None)
                if all(s is not None for s in sizes)
                else None,
            }
            asked = urls[i * len(DATASETS) : (i + 1) * len(DATASETS)]
            for url, answer in zip(asked, files, strict=True):
                if isinstance(answer, BaseException):
                    log.warning("%s: %s", url, answer)
        _cache.write_atomically(
            _cache.checked_folder(root, "datasets", "index") / path.name,
            json.dumps(known, sort_keys=True).encode("utf-8"),
        )
    return {w: known[w] for w in wikis}


def published_wikis(
    source: str = "auto",
    *,
    wikis: list[str] | None = None,
    details: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    user_agent: str | None = None,
    fresh: bool = False,
) -> list[PublishedWiki]:
    """Every wiki with published link datasets (or those of ``wikis``), each with the base
    it is taken from and, with ``details``, its model's date and its files' size: what
    :func:`fetch` can get. The indexes and details are kept an hour (``fresh=True`` asks
    again)."""
    for name, value in (("details", details), ("fresh", fresh)):
        if not isinstance(value, bool):
            raise InvalidParameter(f"{name} must be True or False", parameter=name)
    root = _cache.cache_root(cache_dir)
    index = published_index(source, cache_dir=root, user_agent=user_agent, fresh=fresh)
    names = sorted(index.wikis) if wikis is None else [wiki_id(w) for w in wikis]
    unknown = [w for w in names if index.base_of(w) is None]
    if unknown:
        raise index.unknown(unknown[0])
    out = []
    loader = downloader(settings, user_agent) if details else None
    for base in index.bases:
        mine = [w for w in names if index.base_of(w) == base]
        if not mine:
            continue
        known = _published_details(loader, root, base, mine, fresh) if loader is not None else {}
        for wiki in mine:
            got = known.get(wiki, {})
            out.append(
                PublishedWiki(
                    wiki,
                    base.name,
                    base.url,
                    model_last_modified=got.get("model_last_modified"),
                    size=got.get("size"),
                )
            )
    return sorted(out, key=lambda p: p.wiki)


def _native_format(native: Path) -> int:
    with open(native, "rb") as f:
        head = f.read(12)
    return int.from_bytes(head[8:12], "little")


def _convert(wiki: str, staged: Staged, staging: Path, report: Report) -> dict[str, Any]:
    """Converts the verified files into the snapshot folder ``staging``: the manifest's
    fields of the native file."""
    for name, item in staged.files.items():
        # The converter verifies every file against a `.checksum` beside it.
        kind, value = item["checksum"]
        if kind == "sha256":
            _cache.write_atomically(
                staged.folder / f"{name}.checksum", f"{value}  {name}\n".encode("ascii")
            )
    bar = report.phase_bar(f"converting {wiki}")
    try:
        native = Path(
            convert_dataset(
                str(staged.folder),
                wiki,
                str(staging),
                bar.update if bar else None,
                work_budget=staged.work_space or None,
            )
        )
    finally:
        if bar:
            bar.close()
    files: dict[str, dict[str, Any]] = {}
    for dataset in DATASETS:
        name = dataset_file(wiki, dataset)
        item = staged.files[name]
        files[dataset] = {
            "name": name,
            "url": item["url"],
            "sha256": item["checksum"][1],
            **{k: item[k] for k in ("size", "etag", "last_modified", "resumed_from") if k in item},
        }
    return {
        "files": files,
        "native": {
            "file": native.name,
            "size": native.stat().st_size,
            "sha256": _cache.sha256_file(native),
        },
        "versions": {"wikisuggest": __version__, "native_format": _native_format(native)},
        "outputs": [native.name],
    }


def _unpublished(wiki: str, cached: _cache.Snapshot, why: str) -> _cache.Snapshot:
    message = (
        f"{wiki} is {why} upstream; keeping the cached snapshot {cached.id} "
        f"(fetched {cached.manifest.get('fetched_at', '?')})"
    )
    log.warning("%s", message)
    warnings.warn(message, UserWarning, stacklevel=5)
    return cached


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
    ``source``: ``"auto"`` (v2, else legacy), ``"v2"``, ``"legacy"`` or a mirror's URL
    (the bases' URLs: ``ANALYTICS_BASE_URL`` and ``ANALYTICS_BASE_URL_LEGACY``).
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
    offline = offline_default(offline)
    pinned = _expect(expect)
    for name, value in (("update", update), ("progress", progress), ("keep_sources", keep_sources)):
        if not isinstance(value, bool):
            raise InvalidParameter(f"{name} must be True or False", parameter=name)
    base_urls(source)  # checks `source` before anything else happens
    user_agent_default(user_agent)
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
    _cache.make_root(root)
    if found is None and store.current() is None:
        # An unknown wiki is refused before anything of it is made in the cache.
        index = published_index(source, cache_dir=root, user_agent=user_agent)
        if index.base_of(wiki) is None:
            raise index.unknown(wiki)

    def release(loader: NativeDownloader) -> Release | _cache.Snapshot | None:
        found = cached()
        index = published_index(
            source, cache_dir=root, user_agent=user_agent, fresh=update and found is not None
        )
        base = index.base_of(wiki)
        if base is None:
            current = store.current()
            if current is not None:
                return _unpublished(wiki, current, "no longer published")
            raise index.unknown(wiki)
        published = _read_checksums(loader, wiki, base)
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
                    return found
                raise DatasetError(
                    f"the {name} published for {wiki} has sha256 {published.checksums[name]}, "
                    f"not the expected {want}, and no cached snapshot has it",
                    wiki=wiki,
                    expected=want,
                    actual=published.checksums[name],
                )
        return published.release()

    snapshot = fetch_files(
        store,
        release,
        lambda staged, staging, report: _convert(wiki, staged, staging, report),
        update=update,
        offline=False,
        progress=progress,
        user_agent=user_agent,
        keep_sources=keep_sources,
        settings=settings,
        space_factor=_CONVERSION_SPACE_FACTOR,
        space_floor=_CONVERSION_SPACE_FLOOR,
        cached=cached,
    )
    return snapshot.native


def serving_folder(wikis: list[str], **fetch_options: Any) -> Path:
    """A datasets folder for :class:`wikisuggest.Server` (one sub-folder per wiki) holding the
    published datasets of ``wikis``, each fetched (or taken from the cache) as :func:`fetch`
    does with ``fetch_options``."""
    natives = {wiki_id(w): fetch(w, **fetch_options) for w in wikis}
    return _cache.serving_folder(_cache.cache_root(fetch_options.get("cache_dir")), natives)
