"""Files from a server into a cache entry, with the fetcher's guarantees, for any wing: the
link datasets (:func:`wikisuggest.datasets.fetch`) and whatever else is built from published
files.

:func:`fetch_files` is the one call: given a cache entry, a function that says what is
published now (a :class:`Release`: a version and its files, each with its URL, size and
checksum) and a function that makes a snapshot from the downloaded files, it returns the
current :class:`~wikisuggest.datasets.cache.Snapshot`:

- without ``update=True`` a cached snapshot is returned as it is, without the network;
  ``offline=True`` (or ``WIKISUGGEST_OFFLINE=1``) never touches it;
- two processes take turns on the entry's lock, and the second finds the first's snapshot;
- the sizes are asked for (``HEAD``) and the free disk space checked before the first byte,
  for the downloads and for the work the snapshot needs (``space_factor``);
- each file is downloaded once, hashed as it arrives, resumed after a cut (also by a later
  process), within a budget of requests and bytes, and verified against its checksum
  (``sha256`` or ``sha1``; a mismatch is fetched once more from zero);
- the snapshot appears complete, by rename, with a manifest of where each file came from,
  and becomes ``current``; the downloads are then deleted, or kept for the next version
  (``keep_sources=True``: only changed files are downloaded again);
- progress bars with ``progress=True`` (needs tqdm); Ctrl-C leaves the partial downloads for
  the next call and never a half-made snapshot.

:func:`download_files` is the download step alone, for a caller that runs its own flow
inside the entry's lock.
"""

from __future__ import annotations

import datetime
import logging
import os
import shutil
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .. import _args, _progress
from .._native import NativeDownloader, __version__
from ..errors import DatasetError, InvalidParameter, WikisuggestError
from . import cache as _cache

__all__ = [
    "DEFAULT_USER_AGENT",
    "DownloadSettings",
    "FileSpec",
    "Release",
    "Staged",
    "download_files",
    "fetch_files",
]

log = logging.getLogger("wikisuggest.datasets")

#: Sent when no User-Agent is given (``user_agent=`` or ``WIKISUGGEST_USER_AGENT``).
DEFAULT_USER_AGENT = f"wikisuggest/{__version__} (https://github.com/wikisuggest/wikisuggest)"

_CHECKSUM_DIGITS = {"sha256": 64, "sha1": 40}
_HEX = set("0123456789abcdef")


@dataclass
class DownloadSettings:
    """Timeouts, retries and budgets of the downloads (the defaults suit the published
    servers)."""

    connect_timeout: float = 10.0
    #: Longest silence of a transfer before it is resumed.
    read_timeout: float = 30.0
    #: Failed attempts in a row (without getting further into the file) before giving up.
    max_retries: int = 5
    backoff_base: float = 0.5
    #: Longest wait between two attempts (the back-off doubles up to it).
    backoff_max: float = 30.0
    max_retry_after: float = 120.0
    #: Requests for one file at most, first, resumed or restarted.
    max_attempts: int = 100
    #: Bytes received for one file at most, as a multiple of its size.
    bytes_factor: int = 3
    #: Largest file accepted when the server does not give its size.
    max_file_size: int = 1 << 40


@dataclass(frozen=True)
class FileSpec:
    """One published file: its ``url``, the ``name`` it gets in the cache entry (default:
    the URL's last segment), its ``size`` when known (a larger body is refused) and its
    ``checksum`` as ``(kind, hex)`` with kind ``"sha256"`` or ``"sha1"``."""

    url: str
    name: str = ""
    size: int | None = None
    checksum: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or urlsplit(self.url).scheme not in ("http", "https"):
            raise InvalidParameter(f"url must be an http(s) URL, got {self.url!r}", parameter="url")
        name = self.name or urlsplit(self.url).path.rsplit("/", 1)[-1]
        object.__setattr__(self, "name", _cache.plain_name("name", name))
        if self.size is not None and (
            not isinstance(self.size, int) or isinstance(self.size, bool) or self.size < 0
        ):
            raise InvalidParameter("size must be a non-negative int or None", parameter="size")
        if self.checksum is not None:
            kind, value = self.checksum
            kind = str(kind).lower()
            value = str(value).lower()
            if kind not in _CHECKSUM_DIGITS:
                raise InvalidParameter(
                    f"checksum kinds are sha256 and sha1, not {kind!r}", parameter="checksum"
                )
            if len(value) != _CHECKSUM_DIGITS[kind] or not set(value) <= _HEX:
                raise InvalidParameter(
                    f"checksum {value!r} is not a {kind} ({_CHECKSUM_DIGITS[kind]} hex digits)",
                    parameter="checksum",
                )
            object.__setattr__(self, "checksum", (kind, value))


@dataclass(frozen=True)
class Release:
    """What a server publishes now for a cache entry: ``version`` (any text that changes
    when the files do; the snapshot's id is derived from it unless ``snapshot`` is given),
    its ``files``, ``manifest`` fields to record, and the ``origin`` named in messages
    (default: the first file's server)."""

    version: str
    files: Sequence[FileSpec]
    manifest: Mapping[str, Any] = field(default_factory=dict)
    snapshot: str | None = None
    origin: str = ""

    def snapshot_id(self) -> str:
        return self.snapshot or _cache.version_id(self.version)


@dataclass
class Staged:
    """The verified files in the entry's ``downloads`` folder, ready to be made into a
    snapshot: per file name, where it came from (``url``, ``size``, ``checksum``,
    ``etag``, ``last_modified``, ``reused``), and the work space reserved for the snapshot
    (bytes: a bound for its work files)."""

    folder: Path
    files: dict[str, dict[str, Any]]
    work_space: int

    @property
    def size(self) -> int:
        return sum(int(f["size"]) for f in self.files.values())


def offline_default(offline: bool | None) -> bool:
    """``offline``, else ``WIKISUGGEST_OFFLINE`` (``1``, ``true``, ``yes`` or ``on``)."""
    if offline is not None:
        if not isinstance(offline, bool):
            raise InvalidParameter("offline must be True, False or None", parameter="offline")
        return offline
    return os.environ.get("WIKISUGGEST_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def user_agent_default(user_agent: str | None) -> str:
    """``user_agent``, else ``WIKISUGGEST_USER_AGENT``, else wikisuggest's own."""
    return _args.user_agent(user_agent) or DEFAULT_USER_AGENT


def downloader(settings: DownloadSettings, user_agent: str | None) -> NativeDownloader:
    """A downloader with these settings (one connection pool)."""
    s = settings
    return NativeDownloader(
        user_agent_default(user_agent),
        s.connect_timeout,
        s.read_timeout,
        s.max_retries,
        s.backoff_base,
        s.backoff_max,
        s.max_retry_after,
        s.max_attempts,
        s.bytes_factor,
    )


def size_text(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


class Report:
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


def check_space(folder: Path, need: int, what: str) -> None:
    """Refuses to start when ``folder``'s disk has less than ``need`` bytes free."""
    free = shutil.disk_usage(folder).free
    if free < need:
        raise DatasetError(
            f"not enough free disk space in {folder} for {what}: about {size_text(need)} "
            f"needed, {size_text(free)} free (choose another cache folder with cache_dir= or "
            "WIKISUGGEST_CACHE_DIR)",
            path=str(folder),
        )


def _regular(path: Path) -> bool:
    """Whether ``path`` itself (not what a link points to) is a regular file."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _reusable(path: Path, spec: FileSpec) -> bool:
    """Whether ``path`` holds the file ``spec`` describes: a verified download not yet
    used, or a kept source (a file without a checksum is never reused)."""
    if spec.checksum is None or not _regular(path):
        return False
    if spec.size is not None and path.lstat().st_size != spec.size:
        return False
    kind, value = spec.checksum
    if kind == "sha256":
        return _cache.sha256_file(path) == value
    import hashlib

    digest = hashlib.new(kind)
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest() == value


def _link_or_copy(src: Path, dst: Path) -> None:
    if _regular(dst) or dst.is_symlink():
        os.unlink(dst)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst, follow_symlinks=False)


def _size_if_regular(path: Path) -> int:
    return path.lstat().st_size if _regular(path) else 0


def _partial_size(dest: Path) -> int:
    partial = dest.parent / f"{dest.name}.incomplete"
    return partial.lstat().st_size if _regular(partial) else 0


def download_files(
    entry: _cache.CacheEntry,
    files: Sequence[FileSpec],
    loader: NativeDownloader,
    report: Report,
    *,
    what: str = "",
    origin: str = "",
    settings: DownloadSettings | None = None,
    space_factor: float = 0.0,
    space_floor: int = 0,
) -> Staged:
    """Puts each file of ``files``, verified, in ``entry.downloads`` (downloading what no
    earlier attempt or kept source has), after checking that the disk has room for the
    downloads and ``space_factor`` times the files' size (at least ``space_floor`` bytes)
    of work. Call it with the entry's lock held."""
    settings = settings or DownloadSettings()
    names = [f.name for f in files]
    if len(set(names)) != len(names):
        raise InvalidParameter("two files have the same name", parameter="files")
    folder = entry.folder("downloads")
    entry.record_names(names)
    what = what or entry.name
    out: dict[str, dict[str, Any]] = {}
    missing: list[FileSpec] = []
    for spec in files:
        item: dict[str, Any] = {"url": spec.url}
        if spec.checksum is not None:
            item["checksum"] = list(spec.checksum)
        if spec.size is not None:
            item["size"] = spec.size
        out[spec.name] = item
        target = folder / spec.name
        kept = entry.sources / spec.name
        if _reusable(target, spec):
            item["reused"] = "download"
        elif not _cache.is_link(entry.sources) and _reusable(kept, spec):
            _link_or_copy(kept, target)
            item["reused"] = "kept source"
        else:
            if target.is_symlink() or _regular(target):
                os.unlink(target)
            missing.append(spec)

    # Sizes first, and room for them and the work, before the first byte.
    for spec in missing:
        if spec.size is not None:
            continue
        remote = loader.head(spec.url)
        if remote is None:
            raise DatasetError(f"{spec.url} is published but cannot be found", url=spec.url)
        out[spec.name].update({k: v for k, v in remote.items() if v is not None})
    unknown = [s.name for s in missing if out[s.name].get("size") is None]
    partial = {s.name: _partial_size(folder / s.name) for s in missing}
    to_download = sum(max(0, (out[s.name].get("size") or 0) - partial[s.name]) for s in missing)

    def sizes() -> int:
        """The files' sizes as far as known (one the server did not give counts 0 until
        its download says it)."""
        return sum(out[s.name].get("size") or _size_if_regular(folder / s.name) for s in files)

    def work() -> int:
        return max(int(sizes() * space_factor), space_floor) if space_factor or space_floor else 0

    if missing:
        shown = ", ".join(
            f"{s.name} {size_text(out[s.name]['size'])}"
            if out[s.name].get("size") is not None
            else f"{s.name} (size not given)"
            for s in missing
        )
        if not origin:
            first = urlsplit(missing[0].url)
            origin = f"{first.scheme}://{first.netloc}"
        report.say(f"{what}: {size_text(to_download)} to download from {origin} ({shown})")
    check_space(entry.dir, to_download + work(), f"{what}'s files")

    for spec in missing:
        item = out[spec.name]
        bar = report.bytes_bar(spec.name)
        try:
            done = loader.download(
                spec.url,
                str(folder / spec.name),
                spec.checksum,
                int(item.get("size") or settings.max_file_size),
                bar.update if bar else None,
            )
        finally:
            if bar:
                bar.close()
        item.update({k: v for k, v in done["remote"].items() if v is not None})
        item["size"] = done["size"]
        item["checksum"] = list(done["checksum"])
        if done["resumed_from"]:
            item["resumed_from"] = done["resumed_from"]
    for spec in files:
        out[spec.name].setdefault("size", (folder / spec.name).lstat().st_size)
    work_space = work()
    if unknown:
        # The sizes the server did not give are known now: check again for the work.
        check_space(entry.dir, work_space, f"{what}'s work files")
    return Staged(folder, out, work_space)


def finish_downloads(entry: _cache.CacheEntry, staged: Staged, keep_sources: bool) -> None:
    """After the snapshot is current: the downloads are deleted, or moved to ``sources``
    (where the kept files of older versions are then deleted). Nothing here stops half way:
    a file that cannot be moved or deleted is logged and left."""
    names = set(staged.files)
    sources = None
    if keep_sources:
        try:
            sources = entry.folder("sources")
        except DatasetError as err:
            log.warning("%s; the downloaded files are deleted instead of kept", err)
    for name in sorted(names):
        path = staged.folder / name
        try:
            if sources is not None and _regular(path):
                os.replace(path, sources / name)
            elif _regular(path) or path.is_symlink():
                os.unlink(path)
        except OSError as err:
            log.warning("could not %s %s: %s", "keep" if sources else "delete", path, err)
        for suffix in _cache.DOWNLOAD_SUFFIXES:
            extra = staged.folder / f"{name}{suffix}"
            if _regular(extra) or extra.is_symlink():
                try:
                    os.unlink(extra)
                except OSError as err:
                    log.warning("could not delete %s: %s", extra, err)
    if sources is not None:
        # Only the latest version's files are kept.
        left = entry.keep_only_sources(names)
        for path, why in left.left:
            if path.name not in names:
                log.info("left %s in the kept sources (%s)", path, why)


def _check_flags(**flags: object) -> None:
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise InvalidParameter(f"{name} must be True or False", parameter=name)


def fetch_files(
    entry: _cache.CacheEntry,
    release: Callable[[NativeDownloader], Release | _cache.Snapshot | None],
    make: Callable[[Staged, Path, Report], Mapping[str, Any]],
    *,
    offline: bool | None = None,
    update: bool = False,
    progress: bool = False,
    user_agent: str | None = None,
    keep_sources: bool = False,
    settings: DownloadSettings | None = None,
    space_factor: float = 0.0,
    space_floor: int = 0,
    cached: Callable[[], _cache.Snapshot | None] | None = None,
) -> _cache.Snapshot:
    """The current snapshot of ``entry``, fetched if needed (see the module docs).

    ``release(downloader)`` says what is published now (``None``: nothing is; a cached
    snapshot: keep that one); it may use the downloader for small files (an index, a
    status file: ``downloader.get(url, limit)``). ``make(staged, folder, report)`` makes
    the snapshot's files in the empty ``folder`` from the verified files in
    ``staged.folder`` and returns the manifest's fields, with ``"outputs"``: the names of
    the files it made. ``cached`` chooses which
    cached snapshot answers without the network (default: the current one)."""
    offline = offline_default(offline)
    _check_flags(update=update, progress=progress, keep_sources=keep_sources)
    settings = settings or DownloadSettings()
    user_agent_default(user_agent)
    pick = cached or entry.current

    found = pick()
    if offline:
        if found is None:
            raise DatasetError(
                f"offline, and no cached copy of {entry.name} in {entry.dir}; fetch it once "
                "with network access",
                path=str(entry.dir),
            )
        return found
    if found is not None and not update:
        return found

    report = Report(progress)
    try:
        with entry.lock():
            entry.remove_stale()
            # Another process may have fetched it while this one waited for the lock.
            found = pick()
            if found is not None and not update:
                return found
            loader = downloader(settings, user_agent)
            try:
                published = release(loader)
            except (WikisuggestError, OSError) as err:
                if found is not None and not isinstance(err, DatasetError):
                    log.warning(
                        "cannot check %s upstream (%s); keeping the cached copy", entry.name, err
                    )
                    return found
                raise
            if isinstance(published, _cache.Snapshot):
                return published
            if published is None:
                current = entry.current()
                if current is not None:
                    return current
                raise DatasetError(f"nothing is published for {entry.name}", path=str(entry.dir))
            snapshot_id = published.snapshot_id()
            existing = entry.snapshot(snapshot_id)
            if existing is not None:
                if entry.current() != existing:
                    entry.set_current(existing)
                return existing
            staged = download_files(
                entry,
                published.files,
                loader,
                report,
                origin=published.origin,
                settings=settings,
                space_factor=space_factor,
                space_floor=space_floor,
            )
            staging = entry.staging()
            try:
                made = dict(make(staged, staging, report))
                manifest = {
                    "fetched_at": datetime.datetime.now(datetime.timezone.utc).isoformat(
                        timespec="seconds"
                    ),
                    "version": published.version,
                    **published.manifest,
                    "downloads": {
                        n: {k: v for k, v in f.items() if k != "reused"}
                        for n, f in staged.files.items()
                    },
                    "sources_kept": keep_sources,
                    **made,
                }
                snapshot = entry.add_snapshot(staging, manifest, snapshot_id)
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            # Current first: what follows is tidying up, and cannot undo the fetch.
            entry.set_current(snapshot)
            finish_downloads(entry, staged, keep_sources)
            report.say(f"{entry.name}: snapshot {snapshot.id} ready at {snapshot.path}")
            return snapshot
    finally:
        if not entry.all_snapshots():
            # A first fetch that failed (an unknown name, a refusal before any download)
            # leaves nothing behind but its partial downloads.
            entry.remove_if_empty()
