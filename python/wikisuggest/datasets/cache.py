"""The local cache of fetched files: where it lives, how an entry's folder is laid out, the
manifest of a snapshot, the lock that makes two processes fetch once, and what the cache may
write and delete.

Root (first that applies): ``cache_dir=``, ``WIKISUGGEST_CACHE_DIR``, then the platform's
cache folder: ``$XDG_CACHE_HOME/wikisuggest`` or ``~/.cache/wikisuggest`` (Linux and other
Unix), ``~/Library/Caches/wikisuggest`` (macOS), ``%LOCALAPPDATA%\\wikisuggest\\Cache``
(Windows). Under it::

    datasets/index/                 the published indexes, kept an hour
    datasets/serve/<key>/           hard links laid out for ``wikisuggest serve --fetch``
    datasets/<wiki>/current         link to the current snapshot's folder (see below)
    datasets/<wiki>/lock            held while a process fetches the wiki
    datasets/<wiki>/files.json      the names of the files the cache downloaded for it
    datasets/<wiki>/downloads/      partial and verified downloads not yet converted
    datasets/<wiki>/sources/        published files kept after conversion (keep_sources=True)
    datasets/<wiki>/snapshots/<id>/ <wiki>.linkdata + manifest.json, never changed once there
    <area>/<name>/                  the same layout for other cached files (:class:`CacheEntry`)
    glove/                          the GloVe word vectors of ``wikisuggest build``

A snapshot's id is derived from what was published (for link datasets, the five published
checksums), so the same published version is one snapshot. It appears by rename, complete.
``current`` is a symbolic link to it, replaced by rename: it opens like the snapshot's folder
everywhere a dataset folder is taken (``LinkEngine.open``, ``--datasets``, Spark,
``recommend_dump``), and an engine that maps the previous snapshot's file keeps reading it
undisturbed. Where links cannot be made (Windows without the right to make them), ``current``
is a small file naming the snapshot instead, and ``wikisuggest datasets path`` gives the file.

What the cache writes and deletes, whatever another user of a shared cache folder planted:
files are opened without following symbolic links; a folder of the cache (``datasets``, an
entry, its ``downloads``, ``sources`` or ``snapshots``) that is a link is refused; removal
deletes only names the cache writes (the files it downloaded, their partial and record files,
snapshots, its own temporary names) and reports anything else it leaves; a removal that meets
something it cannot delete goes on with the rest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..errors import DatasetError, InvalidParameter
from .published import DATASETS, dataset_file

__all__ = [
    "MANIFEST",
    "CacheEntry",
    "Removal",
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
#: The ledger of an entry: the names of the files the cache downloaded for it.
LEDGER = "files.json"
#: Suffixes of what the downloader writes beside a file being downloaded.
DOWNLOAD_SUFFIXES = (".incomplete", ".incomplete.json", ".incomplete.json.tmp", ".checksum")

_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,199}")
_SNAPSHOT_ID = re.compile(r"[0-9a-f]{16}")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cache root: ``cache_dir``, else ``WIKISUGGEST_CACHE_DIR``, else the platform's
    cache folder (see the module docs)."""
    if cache_dir is not None:
        if not isinstance(cache_dir, (str, os.PathLike)):
            raise InvalidParameter(
                f"cache_dir must be a folder path (str or os.PathLike), got "
                f"{type(cache_dir).__name__}",
                parameter="cache_dir",
            )
        path = os.fspath(cache_dir)
        if not isinstance(path, str) or not path:
            raise InvalidParameter(
                "cache_dir must be a non-empty folder path", parameter="cache_dir"
            )
        return Path(path).expanduser()
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


def version_id(version: str) -> str:
    """The snapshot id of a version described by any text (see :class:`CacheEntry`)."""
    return hashlib.sha256(version.encode("utf-8")).hexdigest()[:16]


def plain_name(what: str, name: str) -> str:
    """``name`` if it is a plain file or folder name (no separator, no leading dot), else
    :class:`~wikisuggest.InvalidParameter` naming ``what``."""
    if not isinstance(name, str) or not _PLAIN.fullmatch(name) or name.endswith(".tmp"):
        raise InvalidParameter(
            f"{what} must be a plain name (letters, digits, '_', '.', '+', '-', not starting "
            f"with a dot), got {name!r}",
            parameter=what,
        )
    return name


def is_link(path: Path) -> bool:
    """Whether ``path`` itself is a symbolic link (or, on Windows, a junction)."""
    if path.is_symlink():
        return True
    isjunction = getattr(os.path, "isjunction", None)
    return bool(isjunction and isjunction(path))


def _link_error(path: Path) -> DatasetError:
    return DatasetError(
        f"{path} is a symbolic link; the cache does not write or delete through links "
        "(remove the link, or choose another cache folder with cache_dir= or "
        "WIKISUGGEST_CACHE_DIR)",
        path=str(path),
    )


def _os_error(path: Path, what: str, err: OSError) -> DatasetError:
    reason = err.strerror or str(err)
    return DatasetError(
        f"cannot {what} {path}: {reason} (choose another cache folder with cache_dir= or "
        "WIKISUGGEST_CACHE_DIR)",
        path=str(path),
    )


def make_root(root: Path) -> Path:
    """Creates the cache root if needed (it may itself be a link, the user's choice)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _os_error(root, "create the cache folder", err) from err
    if not root.is_dir():
        raise DatasetError(f"the cache folder {root} is not a folder", path=str(root))
    return root


def checked_folder(root: Path, *parts: str) -> Path:
    """``root/parts…``, each part created if missing and refused if it is a symbolic link
    (or not a folder): what the cache writes there stays in the cache."""
    current = make_root(root)
    for part in parts:
        current = current / part
        if is_link(current):
            raise _link_error(current)
        try:
            current.mkdir()
        except FileExistsError:
            if not current.is_dir():
                raise DatasetError(
                    f"{current} is not a folder; the cache needs a folder there",
                    path=str(current),
                ) from None
        except OSError as err:
            raise _os_error(current, "create the cache folder", err) from err
    return current


def _open_no_follow(path: Path, flags: int) -> int:
    """``os.open`` that refuses a symbolic link in the last component."""
    if not _NOFOLLOW and is_link(path):
        raise _link_error(path)
    try:
        return os.open(path, flags | _NOFOLLOW | _CLOEXEC | _BINARY, 0o644)
    except OSError as err:
        if is_link(path):
            raise _link_error(path) from err
        raise _os_error(path, "open", err) from err


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
        os.unlink(path)


def write_atomically(path: Path, data: bytes) -> None:
    """Writes ``path`` through a fresh temporary file and a rename, so it is old or new,
    never half-written, and never written through a link planted at either name."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    _unlink_quietly(tmp)
    fd = _open_no_follow(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as err:
        _unlink_quietly(tmp)
        raise _os_error(path, "write", err) from err


def read_small(path: Path, limit: int = 1 << 20) -> bytes | None:
    """A small regular file's bytes, never through a link; ``None`` if it is missing or
    not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _BINARY)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return f.read(limit)


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
    """Holds an exclusive lock on ``path`` (created if missing, never through a link) for the
    ``with`` block: flock on Unix, a byte-range lock on Windows. Both are released by the
    system if the process dies. Waiting polls (so Ctrl-C works) and says once who it waits
    for."""
    fd = _open_no_follow(path, os.O_RDWR | os.O_CREAT)
    with os.fdopen(fd, "r+b") as handle:
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


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from a small regular file (never through a link), or ``None``."""
    data = read_small(path)
    if data is None:
        return None
    try:
        value = json.loads(data.decode("utf-8"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def sha256_file(path: Path) -> str:
    """The sha256 of a file, read in blocks (Ctrl-C stops it between blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Snapshot:
    """A complete, converted version of one cache entry (for link datasets: one wiki's
    published datasets)."""

    wiki: str
    path: Path
    manifest: Mapping[str, Any]

    @property
    def name(self) -> str:
        """The entry's name (for link datasets, the wiki id)."""
        return self.wiki

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def native(self) -> Path:
        """The native file (what :func:`wikisuggest.datasets.fetch` returns)."""
        return self.path / str(self.manifest["native"]["file"])

    @property
    def outputs(self) -> list[Path]:
        """The files the snapshot holds besides its manifest."""
        names = self.manifest.get("outputs")
        if not isinstance(names, list):
            native = self.manifest.get("native")
            names = [native.get("file")] if isinstance(native, dict) else []
        return [self.path / str(n) for n in names]

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
        """Bytes the snapshot takes on disk (its folders too: a catalog's search index)."""
        return _size_of(self.path)


@dataclass
class Removal:
    """What a clean-up removed, what it would remove (``dry_run``), and what it left alone
    (not the cache's, or not removable), with the bytes freed."""

    removed: list[Path] = field(default_factory=list)
    left: list[tuple[Path, str]] = field(default_factory=list)
    freed: int = 0

    def extend(self, other: Removal) -> None:
        self.removed += other.removed
        self.left += other.left
        self.freed += other.freed


def _size_of(path: Path) -> int:
    try:
        st = path.lstat()
    except OSError:
        return 0
    if stat.S_ISDIR(st.st_mode):
        return sum(_size_of(p) for p in path.iterdir())
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def remove_owned(folder: Path, owned: Callable[[str], bool], *, dry_run: bool = False) -> Removal:
    """Deletes the entries of ``folder`` whose names ``owned`` accepts: files and links
    themselves (never what a link points to). A folder under an owned name, a name not
    owned, or a file that cannot be deleted is left and reported; the rest goes on. A
    ``folder`` that is a link is not entered."""
    done = Removal()
    if is_link(folder):
        done.left.append((folder, "a symbolic link: not entered"))
        return done
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return done
    for entry in entries:
        path = Path(entry.path)
        if not owned(entry.name):
            done.left.append((path, "not written by the cache"))
            continue
        if entry.is_dir(follow_symlinks=False):
            done.left.append((path, "a folder where the cache writes files"))
            continue
        _remove_file(path, done, dry_run)
    return done


def _remove_file(path: Path, done: Removal, dry_run: bool) -> None:
    """Removes one file (or link itself) the cache wrote; a failure is reported."""
    size = _size_of(path)
    if not dry_run:
        try:
            os.unlink(path)
        except OSError as err:
            done.left.append((path, err.strerror or str(err)))
            return
    done.removed.append(path)
    done.freed += size


def _remove_tree(path: Path, done: Removal, dry_run: bool) -> None:
    """Removes a folder the cache made (a snapshot, a staging folder), never through a link;
    a failure is reported and the rest goes on."""
    if is_link(path):
        done.left.append((path, "a symbolic link: not entered"))
        return
    size = _size_of(path)
    if not dry_run:
        failures: list[str] = []

        def failed(_function: Any, _path: Any, exc: Any) -> None:
            failures.append(str(exc[1] if isinstance(exc, tuple) else exc))

        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=failed)
        else:
            shutil.rmtree(path, onerror=failed)
        if path.exists():
            done.left.append((path, failures[0] if failures else "could not be removed"))
            return
    done.removed.append(path)
    done.freed += size


class CacheEntry:
    """One entry of the cache: ``<root>/<area>/<name>/``, a folder of downloaded files and
    of the snapshots made from them (see the module docs). Link datasets are the area
    ``datasets`` (:class:`WikiCache`); other wings keep their own areas with the same
    guarantees: a lock, resumable downloads checked against their checksums
    (:func:`wikisuggest.datasets.files.download_files`), snapshots that appear complete,
    ``current``, and clean-ups that delete only what the cache wrote."""

    def __init__(self, root: Path, area: str, name: str) -> None:
        self.root = Path(root)
        self.area = plain_name("area", area)
        self.name = plain_name("name", name)
        self.dir = self.root / self.area / self.name

    @property
    def wiki(self) -> str:
        return self.name

    @property
    def downloads(self) -> Path:
        return self.dir / "downloads"

    @property
    def sources(self) -> Path:
        return self.dir / "sources"

    @property
    def snapshots(self) -> Path:
        return self.dir / "snapshots"

    def folder(self, *parts: str) -> Path:
        """``<entry>/parts…``, created, and refused if any folder on the way is a link."""
        return checked_folder(self.root, self.area, self.name, *parts)

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """The lock held while fetching this entry (its folder is created)."""
        return file_lock(self.folder() / "lock", self.name)

    # -- what the cache wrote ------------------------------------------------------------

    def ledger(self) -> set[str]:
        """The names of the files the cache downloaded for this entry."""
        value = read_small(self.dir / LEDGER)
        if value is None:
            return set()
        try:
            names = json.loads(value.decode("utf-8"))
        except ValueError:
            return set()
        if not isinstance(names, list):
            return set()
        return {n for n in names if isinstance(n, str) and _PLAIN.fullmatch(n)}

    def record_names(self, names: Iterable[str]) -> None:
        """Adds ``names`` to the ledger (before their download starts)."""
        known = self.ledger()
        wanted = known | {plain_name("file name", n) for n in names}
        if wanted != known:
            write_atomically(
                self.folder() / LEDGER, json.dumps(sorted(wanted), indent=0).encode("utf-8")
            )

    def owns_file(self, name: str) -> bool:
        """Whether a file of ``downloads`` or ``sources`` called ``name`` is one the cache
        wrote: a downloaded file, what the downloader keeps beside it, or a temporary name
        of the cache's own."""
        if name.startswith(".") and name.endswith(".tmp"):
            return True
        base = name
        for suffix in DOWNLOAD_SUFFIXES:
            if name.endswith(suffix):
                base = name[: -len(suffix)]
                break
        return self.is_downloaded_name(base)

    def is_downloaded_name(self, name: str) -> bool:
        return name in self.ledger()

    # -- snapshots -----------------------------------------------------------------------

    def _valid(self, path: Path, manifest: Mapping[str, Any]) -> bool:
        """Whether ``manifest`` describes a complete snapshot of this entry at ``path``."""
        if manifest.get("area") != self.area or manifest.get("name") != self.name:
            return False
        outputs = manifest.get("outputs")
        if not isinstance(outputs, list) or not outputs:
            return False
        return all(
            isinstance(n, str) and Path(n).name == n and n != MANIFEST and (path / n).is_file()
            for n in outputs
        )

    def snapshot(self, snapshot: str) -> Snapshot | None:
        """The complete snapshot ``snapshot`` (manifest and outputs present), or ``None``."""
        if not _SNAPSHOT_ID.fullmatch(snapshot):
            return None
        path = self.snapshots / snapshot
        if is_link(path) or is_link(self.snapshots):
            return None
        manifest = read_json(path / MANIFEST)
        if manifest is None or not self._valid(path, manifest):
            return None
        return Snapshot(self.name, path, manifest)

    def all_snapshots(self) -> list[Snapshot]:
        """Every complete snapshot, oldest fetch first."""
        if not self.snapshots.is_dir() or is_link(self.snapshots):
            return []
        found = [s for p in self.snapshots.iterdir() if (s := self.snapshot(p.name)) is not None]
        return sorted(found, key=lambda s: str(s.manifest.get("fetched_at", "")))

    def current(self) -> Snapshot | None:
        """The snapshot ``current`` names, if it is complete."""
        pointer = self.dir / "current"
        if pointer.is_symlink():
            target = os.readlink(pointer).replace("\\", "/")
            folder, _, name = target.partition("/")
            return self.snapshot(name) if folder == "snapshots" else None
        data = read_small(pointer, 256)
        if data is None:
            return None
        return self.snapshot(data.decode("ascii", "replace").strip())

    def set_current(self, snapshot: Snapshot) -> None:
        """Makes ``snapshot`` the current one: ``current`` becomes a link to its folder (by
        rename; a file naming it where links cannot be made)."""
        folder = self.folder()
        pointer = folder / "current"
        tmp = folder / f".current.{os.getpid()}.tmp"
        _unlink_quietly(tmp)
        try:
            os.symlink(f"snapshots/{snapshot.id}", tmp, target_is_directory=True)
        except (OSError, NotImplementedError):
            write_atomically(pointer, snapshot.id.encode("ascii") + b"\n")
            return
        try:
            os.replace(tmp, pointer)
        except OSError as err:
            _unlink_quietly(tmp)
            raise _os_error(pointer, "replace", err) from err

    def staging(self) -> Path:
        """A fresh folder for a snapshot being made (a dot name: never listed)."""
        snapshots = self.folder("snapshots")
        path = snapshots / f".staging-{os.getpid()}-{time.monotonic_ns()}"
        path.mkdir()
        return path

    def add_snapshot(self, staging: Path, manifest: Mapping[str, Any], snapshot: str) -> Snapshot:
        """Writes ``manifest`` (with the entry's area and name) into the finished folder
        ``staging`` and renames it into place as ``snapshot`` (an existing one is kept: same
        content)."""
        manifest = {"format": MANIFEST_FORMAT, "area": self.area, "name": self.name, **manifest}
        write_atomically(
            staging / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True).encode("utf-8")
        )
        target = self.folder("snapshots") / snapshot
        try:
            os.rename(staging, target)
        except OSError:
            if self.snapshot(snapshot) is None:
                raise
            shutil.rmtree(staging, ignore_errors=True)
        found = self.snapshot(snapshot)
        if found is None:
            raise DatasetError(f"the snapshot {target} is incomplete after it was written")
        return found

    # -- clean-ups -----------------------------------------------------------------------

    def _stale(self, name: str) -> bool:
        return name.startswith((".staging-", f".{self.name}.convert-")) or name.endswith(
            ".linkdata.tmp"
        )

    def remove_stale(self) -> list[Path]:
        """Removes what interrupted runs left: staging folders and conversion work files of
        processes that are gone (the lock is held, so no other process is writing)."""
        done = Removal()
        for folder in (self.snapshots, self.downloads):
            if not folder.is_dir() or is_link(folder):
                continue
            for p in folder.iterdir():
                if self._stale(p.name):
                    if p.is_dir() and not is_link(p):
                        _remove_tree(p, done, dry_run=False)
                    else:
                        _unlink_quietly(p)
                        done.removed.append(p)
        return done.removed

    def remove_downloads(self, *, dry_run: bool = False) -> Removal:
        """Removes the unfinished and unconverted downloads (names the cache wrote only)."""
        if not self.downloads.exists() and not is_link(self.downloads):
            return Removal()
        return remove_owned(self.downloads, self.owns_file, dry_run=dry_run)

    def keep_only_sources(self, wanted: set[str]) -> Removal:
        """Removes the kept sources of other versions (names the cache wrote only)."""
        if not self.sources.is_dir():
            return Removal()
        return remove_owned(
            self.sources, lambda n: self.owns_file(n) and n not in wanted, dry_run=False
        )

    def prune(self, *, keep: int = 0, partial: bool = False, dry_run: bool = False) -> Removal:
        """Removes snapshots other than the current one (the newest ``keep`` of them stay),
        what is not a snapshot in ``snapshots`` (leftovers of interrupted runs, incomplete
        snapshots), with ``partial`` the downloads not yet converted, and the entry's folder
        itself when nothing of the cache is left in it. Only names the cache writes are
        deleted; anything else is reported in :attr:`Removal.left`."""
        done = Removal()
        for path in (self.dir, self.snapshots, self.downloads, self.sources):
            if is_link(path):
                done.left.append((path, "a symbolic link: not entered"))
                return done
        current = self.current()
        complete = self.all_snapshots()
        others = [s for s in complete if current is None or s.id != current.id]
        doomed = {s.id for s in others[::-1][keep:]}
        valid = {s.id for s in complete}
        if self.snapshots.is_dir():
            for p in sorted(self.snapshots.iterdir()):
                if p.name in doomed or (
                    p.name not in valid and (_SNAPSHOT_ID.fullmatch(p.name) or self._stale(p.name))
                ):
                    if p.is_dir() and not is_link(p):
                        _remove_tree(p, done, dry_run)
                    else:
                        _remove_file(p, done, dry_run)
                elif p.name not in valid:
                    done.left.append((p, "not written by the cache"))
        if partial:
            done.extend(self.remove_downloads(dry_run=dry_run))
        if current is None and not any(s.id not in doomed for s in complete):
            self.remove_if_empty(done, dry_run=dry_run)
        return done

    def remove_if_empty(self, done: Removal | None = None, *, dry_run: bool = False) -> Removal:
        """Removes the entry's folder when it holds nothing but the cache's own small files
        and empty folders (a failed first fetch, a pruned entry); never through a link."""
        done = Removal() if done is None else done
        if is_link(self.root / self.area) or is_link(self.dir) or not self.dir.is_dir():
            return done
        small = {"lock", "current", LEDGER}
        for p in self.dir.iterdir():
            if p.name in small or (p.name.startswith(".") and p.name.endswith(".tmp")):
                if p.is_dir() and not is_link(p):
                    return done
                continue
            if p.name in {"downloads", "sources", "snapshots"} and p.is_dir() and not is_link(p):
                if any(p.iterdir()):
                    return done
                continue
            return done
        if dry_run:
            done.removed.append(self.dir)
            return done
        for p in list(self.dir.iterdir()):
            try:
                if p.is_dir() and not is_link(p):
                    p.rmdir()
                else:
                    os.unlink(p)
            except OSError as err:
                done.left.append((p, err.strerror or str(err)))
                return done
        try:
            self.dir.rmdir()
        except OSError as err:
            done.left.append((self.dir, err.strerror or str(err)))
            return done
        done.removed.append(self.dir)
        return done


class WikiCache(CacheEntry):
    """One wiki's folder of link datasets in the cache: the area ``datasets``."""

    def __init__(self, root: Path, wiki: str) -> None:
        super().__init__(root, "datasets", wiki)

    def is_downloaded_name(self, name: str) -> bool:
        # The published files of this wiki, also in caches made before the ledger.
        if name in {dataset_file(self.name, d) for d in DATASETS}:
            return True
        return super().is_downloaded_name(name)

    def _valid(self, path: Path, manifest: Mapping[str, Any]) -> bool:
        if manifest.get("wiki") != self.name:
            return False
        native = manifest.get("native")
        name = native.get("file") if isinstance(native, dict) else None
        # The file must be inside the snapshot: a manifest cannot point elsewhere.
        if not isinstance(name, str) or not name or Path(name).name != name:
            return False
        sums = manifest.get("checksums")
        if not isinstance(sums, dict) or not all(isinstance(sums.get(d), str) for d in DATASETS):
            return False
        return (path / name).is_file()

    def snapshot(self, snapshot: str) -> Snapshot | None:
        found = super().snapshot(snapshot)
        if found is None:
            return None
        # The id is the published version's: a manifest copied into another folder is not
        # that folder's snapshot.
        return found if snapshot_id(found.checksums) == snapshot else None

    def matching(self, expect: Mapping[str, str]) -> Snapshot | None:
        """The newest snapshot whose checksums include ``expect``, current first."""
        current = self.current()
        candidates = ([current] if current else []) + self.all_snapshots()[::-1]
        for s in candidates:
            if all(s.checksums.get(k) == v for k, v in expect.items()):
                return s
        return None


def known_entries(root: Path, area: str) -> list[str]:
    """The names with a folder in ``area`` of the cache."""
    base = root / area
    if not base.is_dir() or is_link(base):
        return []
    return sorted(
        p.name
        for p in base.iterdir()
        if p.is_dir()
        and not is_link(p)
        and _PLAIN.fullmatch(p.name)
        and p.name not in {"index", "serve"}
    )


def known_wikis(root: Path) -> list[str]:
    """The wikis with a folder in the cache."""
    return known_entries(root, "datasets")


def serving_folder(root: Path, natives: Mapping[str, Path]) -> Path:
    """A folder laid out as the reference server reads datasets (``<wiki>/<wiki>.linkdata``)
    for the native files ``natives`` (wiki → file): hard links into the snapshots (a copy
    where links are not possible), made once per set of snapshots and reused."""
    key = hashlib.sha256(
        "".join(f"{wiki}={path}\n" for wiki, path in sorted(natives.items())).encode("utf-8")
    ).hexdigest()[:16]
    serve = checked_folder(root, "datasets", "serve")
    folder = serve / key
    if not is_link(folder) and all(
        (folder / wiki / path.name).is_file() for wiki, path in natives.items()
    ):
        return folder
    staging = serve / f".{key}.{os.getpid()}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    for wiki, path in natives.items():
        (staging / wiki).mkdir(parents=True)
        try:
            os.link(path, staging / wiki / path.name)
        except OSError:
            shutil.copyfile(path, staging / wiki / path.name)
    if is_link(folder):
        os.unlink(folder)
    shutil.rmtree(folder, ignore_errors=True)
    os.rename(staging, folder)
    return folder
