"""The local cache of fetched datasets: where it lives, how a wiki's folder is laid out, the
manifest of a snapshot, and the lock that makes two processes fetch once.

Root (first that applies): ``cache_dir=``, ``WIKISUGGEST_CACHE_DIR``, then the platform's
cache folder: ``$XDG_CACHE_HOME/wikisuggest`` or ``~/.cache/wikisuggest`` (Linux and other
Unix), ``~/Library/Caches/wikisuggest`` (macOS), ``%LOCALAPPDATA%\\wikisuggest\\Cache``
(Windows). Under it::

    datasets/index/                 the published indexes, kept an hour
    datasets/serve/<key>/           hard links laid out for ``wikisuggest serve --fetch``
    datasets/<wiki>/current         name of the snapshot fetch() returns
    datasets/<wiki>/lock            held while a process fetches the wiki
    datasets/<wiki>/downloads/      partial and verified downloads not yet converted
    datasets/<wiki>/sources/        published files kept after conversion (keep_sources=True)
    datasets/<wiki>/snapshots/<id>/ <wiki>.linkdata + manifest.json, never changed once there
    glove/                          the GloVe word vectors of ``wikisuggest build``

A snapshot's id is derived from the five published checksums, so the same published version
is one snapshot. It appears by rename, complete, and ``current`` is replaced by rename: an
engine that maps the previous snapshot's file keeps reading it undisturbed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import DatasetError
from .published import DATASETS

__all__ = [
    "MANIFEST",
    "Snapshot",
    "WikiCache",
    "cache_root",
    "file_lock",
    "snapshot_id",
]

log = logging.getLogger("wikisuggest.datasets")

#: The manifest's file name inside a snapshot.
MANIFEST = "manifest.json"
#: Version of the manifest's layout.
MANIFEST_FORMAT = 1


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cache root: ``cache_dir``, else ``WIKISUGGEST_CACHE_DIR``, else the platform's
    cache folder (see the module docs)."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    configured = os.environ.get("WIKISUGGEST_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(local) / "wikisuggest" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "wikisuggest"
    xdg = os.environ.get("XDG_CACHE_HOME")
    # The XDG specification says to ignore a relative path.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "wikisuggest"


def snapshot_id(checksums: Mapping[str, str]) -> str:
    """The snapshot id of a published version: the start of a sha256 over its five checksums."""
    text = "".join(f"{name}={checksums[name]}\n" for name in DATASETS)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def _try_lock(handle: IO[bytes]) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _unlock(handle: IO[bytes]) -> None:
    if sys.platform == "win32":
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def file_lock(path: Path, what: str) -> Iterator[None]:
    """Holds an exclusive lock on ``path`` (created if missing) for the ``with`` block: flock
    on Unix, a byte-range lock on Windows. Both are released by the system if the process
    dies. Waiting polls (so Ctrl-C works) and says once who it waits for."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        waited = False
        while not _try_lock(handle):
            if not waited:
                log.info("waiting for another process that is fetching %s", what)
                waited = True
            time.sleep(0.1)
        try:
            yield
        finally:
            _unlock(handle)


@dataclass(frozen=True)
class Snapshot:
    """A converted published version of one wiki's datasets."""

    wiki: str
    path: Path
    manifest: Mapping[str, Any]

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def native(self) -> Path:
        """The native file (what :func:`wikisuggest.datasets.fetch` returns)."""
        return self.path / str(self.manifest["native"]["file"])

    @property
    def checksums(self) -> dict[str, str]:
        """The five published sha256 values (``meta.dataset_checksums``)."""
        return dict(self.manifest["checksums"])

    @property
    def source(self) -> str:
        return str(self.manifest.get("source", ""))

    @property
    def model_last_modified(self) -> str | None:
        """The published model's ``Last-Modified`` date, when the server gave one."""
        model = self.manifest.get("files", {}).get("model", {})
        value = model.get("last_modified")
        return str(value) if value else None

    def size(self) -> int:
        """Bytes the snapshot takes on disk."""
        return sum(p.stat().st_size for p in self.path.iterdir() if p.is_file())


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def write_atomically(path: Path, data: bytes) -> None:
    """Writes ``path`` through a temporary file and a rename, so it is old or new, never
    half-written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class WikiCache:
    """One wiki's folder in the cache."""

    def __init__(self, root: Path, wiki: str) -> None:
        self.root = root
        self.wiki = wiki
        self.dir = root / "datasets" / wiki

    @property
    def downloads(self) -> Path:
        return self.dir / "downloads"

    @property
    def sources(self) -> Path:
        return self.dir / "sources"

    @property
    def snapshots(self) -> Path:
        return self.dir / "snapshots"

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """The lock held while fetching this wiki."""
        return file_lock(self.dir / "lock", self.wiki)

    def snapshot(self, snapshot: str) -> Snapshot | None:
        """The complete snapshot ``snapshot`` (manifest and native file present), or ``None``."""
        path = self.snapshots / snapshot
        manifest = _read_json(path / MANIFEST)
        if manifest is None or manifest.get("wiki") != self.wiki:
            return None
        native = manifest.get("native")
        name = native.get("file") if isinstance(native, dict) else None
        # The file must be inside the snapshot: a manifest cannot point elsewhere.
        if not isinstance(name, str) or Path(name).name != name or not name:
            return None
        sums = manifest.get("checksums")
        if not isinstance(sums, dict) or not all(isinstance(sums.get(d), str) for d in DATASETS):
            return None
        found = Snapshot(self.wiki, path, manifest)
        return found if found.native.is_file() else None

    def all_snapshots(self) -> list[Snapshot]:
        """Every complete snapshot, oldest fetch first."""
        if not self.snapshots.is_dir():
            return []
        found = [
            s
            for p in self.snapshots.iterdir()
            if not p.name.startswith(".") and (s := self.snapshot(p.name)) is not None
        ]
        return sorted(found, key=lambda s: str(s.manifest.get("fetched_at", "")))

    def current(self) -> Snapshot | None:
        """The snapshot ``current`` names, if it is complete."""
        try:
            name = (self.dir / "current").read_text("utf-8").strip()
        except OSError:
            return None
        if not name or "/" in name or "\\" in name or name.startswith("."):
            return None
        return self.snapshot(name)

    def set_current(self, snapshot: Snapshot) -> None:
        """Makes ``snapshot`` the current one (by rename)."""
        write_atomically(self.dir / "current", snapshot.id.encode("ascii") + b"\n")

    def matching(self, expect: Mapping[str, str]) -> Snapshot | None:
        """The newest snapshot whose checksums include ``expect``, current first."""
        current = self.current()
        candidates = ([current] if current else []) + self.all_snapshots()[::-1]
        for s in candidates:
            if all(s.checksums.get(k) == v for k, v in expect.items()):
                return s
        return None

    def add_snapshot(self, staging: Path, manifest: Mapping[str, Any]) -> Snapshot:
        """Writes ``manifest`` into the converted folder ``staging`` and renames it into
        place as the snapshot of its checksums (an existing one is kept: same content)."""
        write_atomically(
            staging / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True).encode("utf-8")
        )
        target = self.snapshots / snapshot_id(manifest["checksums"])
        try:
            os.rename(staging, target)
        except OSError:
            if self.snapshot(target.name) is None:
                raise
            shutil.rmtree(staging, ignore_errors=True)
        found = self.snapshot(target.name)
        if found is None:
            raise DatasetError(f"the snapshot {target} is incomplete after it was written")
        return found

    def staging(self) -> Path:
        """A fresh folder for a snapshot being converted (a dot name: never listed)."""
        path = self.snapshots / f".staging-{os.getpid()}-{time.monotonic_ns()}"
        path.mkdir(parents=True)
        return path

    def remove_stale(self) -> list[Path]:
        """Removes what interrupted runs left: staging folders and conversion work files of
        processes that are gone (the lock is held, so no other process is writing)."""
        removed = []
        for folder in (self.snapshots, self.downloads):
            if not folder.is_dir():
                continue
            for p in folder.iterdir():
                if p.name.startswith((".staging-", f".{self.wiki}.convert-")) or p.name.endswith(
                    ".linkdata.tmp"
                ):
                    if p.is_dir():
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        p.unlink(missing_ok=True)
                    removed.append(p)
        return removed


def known_wikis(root: Path) -> list[str]:
    """The wikis with a folder in the cache."""
    base = root / "datasets"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and p.name not in {"index", "serve"})


def sha256_file(path: Path) -> str:
    """The sha256 of a file, read in blocks (Ctrl-C stops it between blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def serving_folder(root: Path, natives: Mapping[str, Path]) -> Path:
    """A folder laid out as the reference server reads datasets (``<wiki>/<wiki>.linkdata``)
    for the native files ``natives`` (wiki → file): hard links into the snapshots (a copy
    where links are not possible), made once per set of snapshots and reused."""
    key = hashlib.sha256(
        "".join(f"{wiki}={path}\n" for wiki, path in sorted(natives.items())).encode("utf-8")
    ).hexdigest()[:16]
    folder = root / "datasets" / "serve" / key
    if all((folder / wiki / path.name).is_file() for wiki, path in natives.items()):
        return folder
    staging = folder.with_name(f".{key}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    for wiki, path in natives.items():
        (staging / wiki).mkdir(parents=True)
        try:
            os.link(path, staging / wiki / path.name)
        except OSError:
            shutil.copyfile(path, staging / wiki / path.name)
    shutil.rmtree(folder, ignore_errors=True)
    os.rename(staging, folder)
    return folder
