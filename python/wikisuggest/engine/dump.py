"""Link recommendations for every article of a MediaWiki XML dump, on one machine, to Parquet.

>>> from wikisuggest.engine import recommend_dump
>>> summary = recommend_dump("enwiki-pages-articles.xml.bz2", "data/enwiki", "enwiki",
...                          "enwiki-links.parquet")  # doctest: +SKIP

The dump (``.xml``, ``.xml.bz2`` multistream included, ``.xml.gz``) is read and decompressed
in Rust on threads of their own, its articles (main namespace, redirects left out) run on the
engine's workers, and the link rows are built in Rust as Arrow record batches: no wikitext and
no link becomes a Python object. Memory stays bounded whatever the dump size.

The output is a Parquet dataset: a directory of ``part-NNNNN.parquet`` files (read it with
``pyarrow.parquet.read_table``, ``pandas.read_parquet`` or ``spark.read.parquet``) and a small
``_progress.json`` manifest that records, for each part, the dump pages it covers, its rows and
its sha256. Each part is written to a hidden temporary file, synced and renamed, and the
manifest is replaced the same way after it, so a run that is interrupted (Ctrl-C, or killed)
leaves only complete parts behind; running it again checks every recorded part and resumes
after the last one. See ``docs/whole-wikis.md``.
"""

from __future__ import annotations

import bz2
import contextlib
import hashlib
import json
import os
import re
import signal
import threading
import time
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

from .. import _args
from .._native import NativeDumpRows
from ..datasets.cache import sha256_file
from ..errors import InvalidParameter
from .link_engine import LinkEngine
from .options import PassOptions, pass_options

if TYPE_CHECKING:
    from typing_extensions import Unpack

try:  # POSIX: the output folder is locked while a run writes it.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "DEFAULT_MAX_PAGE_BYTES",
    "DEFAULT_TIME_BUDGET",
    "DumpSummary",
    "format_summary",
    "recommend_dump",
    "write_dump",
]

MANIFEST = "_progress.json"
#: The manifest's format: 2 records each part's pages, rows and sha256.
_FORMAT = 2
#: The only names a run writes (and so the only ones ``overwrite`` deletes).
_PART = re.compile(r"part-[0-9]{5}\.parquet\Z")
_TEMPORARY = re.compile(r"\.(part-[0-9]{5}\.parquet|_progress\.json)\.[0-9]+\.tmp\Z")
_LOCK = ".lock"
#: Rows after which a part ends early (with no limit on links per page, a part's pages could
#: otherwise hold any number of rows).
_ROWS_PER_PART = 500_000
#: Bytes hashed at each end of the dump for its identity.
_END_BYTES = 1 << 20
#: The key, in the Parquet metadata of the part that ends a run, of where the dump ended: a
#: manifest's ``complete`` is believed only with it, never on its own (a manifest is text
#: anyone can edit; the parts' bytes are checked against it).
_END_KEY = b"wikisuggest.recommend_dump.end"

#: The default per-page budget of whole-wiki runs, in seconds: a page the engine has not
#: finished by then becomes that page's error row (its links would depend on machine speed).
DEFAULT_TIME_BUDGET = 30.0
#: The default largest ``<page>`` of a dump, in bytes of XML (MediaWiki's own limit on a
#: page's wikitext is 2 MiB); a larger page becomes that page's error row.
DEFAULT_MAX_PAGE_BYTES = 32 << 20


@dataclass(frozen=True, slots=True)
class DumpSummary:
    """What a run over a dump wrote; counts include the parts of earlier, resumed runs."""

    out: str
    #: Articles read (main namespace, not redirects).
    pages: int
    #: Link rows written.
    links: int
    #: Pages that failed (one row each, with ``error`` set).
    errors: int
    #: Part files of the dataset.
    parts: int
    #: Whether the whole dump has been read, to its end.
    complete: bool
    #: Articles this run processed (the others were done by an earlier run).
    pages_this_run: int
    seconds: float

    @property
    def articles_per_second(self) -> float:
        """Articles of this run per second of this run."""
        return self.pages_this_run / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, the rate included."""
        return {**asdict(self), "articles_per_second": self.articles_per_second}


def _fsync_dir(path: Path) -> None:
    """Makes the renames inside ``path`` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _ctrl_c_after() -> Iterator[None]:
    """Runs the block whole: a Ctrl-C that lands in it is handled after it, by the handler
    it would have met (``KeyboardInterrupt`` by default). Only the main thread handles
    signals, so elsewhere the block just runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[FrameType | None] = []
    previous = signal.signal(signal.SIGINT, lambda _signum, frame: pressed.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        if callable(previous):
            previous(signal.SIGINT, pressed[-1])
        else:
            raise KeyboardInterrupt


def _write_atomically(path: Path, write: Any) -> None:
    """``write(tmp_path)``, synced, then renamed to ``path`` (hidden until complete). The
    temporary name holds the process id: two writers never share one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        with open(tmp, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(path.parent)


def _dump_identity(path: Path) -> dict[str, Any]:
    """What tells one dump from another of the same name and size: its size, modification
    time and a hash of its first and last MiB."""
    stat = path.stat()
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        digest.update(f.read(_END_BYTES))
        f.seek(max(0, stat.st_size - _END_BYTES))
        digest.update(f.read(_END_BYTES))
    return {
        "name": path.name,
        "bytes": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "ends_sha256": digest.hexdigest(),
    }


def _dataset_identity(engine: LinkEngine) -> dict[str, Any]:
    """What tells one dataset from another: its checksums, and its sizes for sources that
    have none."""
    info = engine.info()
    return {
        "checksums": dict(sorted(info.checksums.items())),
        "sizes": [
            info.titles,
            info.pages,
            info.redirects,
            info.anchors,
            info.candidates,
            info.vectors,
            info.model_trees,
        ],
    }


def _json_ready(options: dict[str, Any]) -> dict[str, Any]:
    """The options as the manifest records them (any value JSON cannot hold as its text)."""
    return json.loads(json.dumps(options, sort_keys=True, default=str))  # type: ignore[no-any-return]


class _Output:
    """The Parquet dataset directory, its lock and its manifest."""

    def __init__(self, out: Path, identity: dict[str, Any], overwrite: bool) -> None:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                "writing Parquet needs pyarrow: pip install 'wikisuggest[parquet]'"
            ) from err
        self._pa = pa
        self._pq = pq
        self.out = out
        if out.exists() and not out.is_dir():
            raise InvalidParameter(f"{out} exists and is not a directory", parameter="out")
        manifest = out / MANIFEST
        if not manifest.exists() and out.is_dir() and _foreign(out):
            raise InvalidParameter(
                f"{out} is not empty and has no {MANIFEST}; choose another output",
                parameter="out",
            )
        out.mkdir(parents=True, exist_ok=True)
        self._lock = _lock(out)
        try:
            if overwrite:
                _clear(out)
            self.state = self._resume(identity) if manifest.exists() else _fresh(identity)
            # Parts written after the last manifest update belong to no run: redo them.
            known = {part["name"] for part in self.state["parts"]}
            for leftover in out.iterdir():
                name = leftover.name
                if (_PART.match(name) and name not in known) or _TEMPORARY.match(name):
                    leftover.unlink()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def _resume(self, identity: dict[str, Any]) -> dict[str, Any]:
        out = self.out
        try:
            state = json.loads((out / MANIFEST).read_text("utf-8"))
        except (OSError, ValueError) as err:
            raise InvalidParameter(
                f"{out / MANIFEST} cannot be read ({err}); run with overwrite to start again",
                parameter="out",
            ) from err
        if not isinstance(state, dict) or state.get("format") != _FORMAT:
            raise InvalidParameter(
                f"{out} holds the output of another version of recommend-dump; "
                "choose another output or overwrite it",
                parameter="out",
            )
        if state.get("identity") != identity:
            raise InvalidParameter(
                f"{out} holds the output of a run with another dump, dataset or options "
                f"({state.get('identity')}); choose another output or overwrite it",
                parameter="out",
            )
        self.check(state)
        if state.get("complete") and not self._ends_dump(state):
            # Not written by a run that read the dump to its end: read on from the recorded
            # position (what is left is processed, or the end is found at once).
            warnings.warn(
                f"{out / MANIFEST} says the run is complete, but its last part does not "
                "record the end of the dump; reading the dump on from the recorded position",
                stacklevel=4,
            )
            state["complete"] = False
        return dict(state)

    def _ends_dump(self, state: dict[str, Any]) -> bool:
        """Whether the last recorded part is the one a run wrote on reaching the dump's end,
        at the recorded position."""
        if not state["parts"]:
            return False
        last = self.out / state["parts"][-1]["name"]
        try:
            metadata = self._pq.read_schema(last).metadata or {}
        except (OSError, ValueError):
            return False
        return metadata.get(_END_KEY) == str(state["position"]).encode()

    def check(self, state: dict[str, Any]) -> None:
        """Every recorded part is there with its rows and sha256, and the parts cover the
        dump's pages from the first up to the recorded position, each once."""

        def broken(why: str) -> InvalidParameter:
            return InvalidParameter(
                f"{self.out}: {why}; the folder no longer holds what its run wrote "
                "(run with overwrite to start again)",
                parameter="out",
            )

        position, totals = 0, {"pages": 0, "links": 0, "errors": 0}
        try:
            for part in state["parts"]:
                name = part["name"]
                if not isinstance(name, str) or not _PART.match(name):
                    raise broken(f"the manifest names a part {name!r} it cannot have written")
                if part["first_position"] != position or part["position"] < position:
                    raise broken(f"{name} does not follow the part before it")
                path = self.out / name
                if not path.is_file():
                    raise broken(f"{name} is missing")
                if sha256_file(path) != part["sha256"]:
                    raise broken(f"{name} was changed")
                if part["links"] + part["errors"] != part["rows"]:
                    raise broken(f"the manifest's counts of {name} disagree")
                position = part["position"]
                for key in totals:
                    totals[key] += part[key]
            if state["position"] != position:
                raise broken("the recorded position is not where the last part ends")
            if any(state[key] != total for key, total in totals.items()):
                raise broken("the recorded totals are not the sums of the parts")
        except (KeyError, TypeError) as err:
            raise broken(f"the manifest is malformed ({err!r})") from err

    def commit(self, batch: dict[str, Any], complete: bool) -> None:
        """Writes ``batch``'s rows as the next part, then records it. A batch with no page
        and no progress through the dump writes no part, unless it ends the dump.

        The part comes first so that a recorded part always exists: a process killed between
        the two steps leaves one unrecorded part, which the next run removes and redoes. A
        Ctrl-C during the two steps is raised after them: the part is recorded."""
        with _ctrl_c_after():
            self._commit(batch, complete)

    def _commit(self, batch: dict[str, Any], complete: bool) -> None:
        state = self.state
        # The batch that ends the dump is always a part (with no rows if need be): its
        # metadata is what makes ``complete`` believed when the folder is opened again.
        if batch["pages"] or batch["position"] != state["position"] or complete:
            name = f"part-{len(state['parts']):05d}.parquet"
            path = self.out / name
            table = self._pa.Table.from_batches([self._pa.record_batch(batch["rows"])])
            if complete:
                metadata = {**(table.schema.metadata or {}), _END_KEY: str(batch["position"])}
                table = table.replace_schema_metadata(metadata)
            _write_atomically(path, lambda p: self._pq.write_table(table, p))
            state["parts"].append(
                {
                    "name": name,
                    "first_position": state["position"],
                    "position": batch["position"],
                    "pages": batch["pages"],
                    "rows": table.num_rows,
                    "links": batch["links"],
                    "errors": batch["errors"],
                    "sha256": sha256_file(path),
                }
            )
            state["position"] = batch["position"]
            for key in ("pages", "links", "errors"):
                state[key] += batch[key]
        if complete:
            # A part deleted or changed during the run must not end "complete".
            self.check(state)
        state["complete"] = complete
        text = json.dumps(state, indent=1, ensure_ascii=False)
        _write_atomically(self.out / MANIFEST, lambda p: p.write_text(text, "utf-8"))


def _fresh(identity: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": _FORMAT,
        "identity": identity,
        "position": 0,
        "parts": [],
        "pages": 0,
        "links": 0,
        "errors": 0,
        "complete": False,
    }


def _foreign(out: Path) -> bool:
    """Whether ``out`` holds anything a run did not write."""
    return any(
        not (_PART.match(p.name) or _TEMPORARY.match(p.name) or p.name == _LOCK)
        for p in out.iterdir()
    )


def _clear(out: Path) -> None:
    """Deletes a run's own files inside ``out`` (never a path its manifest names, which may
    have been edited to point anywhere)."""
    for path in out.iterdir():
        if _PART.match(path.name) or _TEMPORARY.match(path.name) or path.name == MANIFEST:
            path.unlink()


def _lock(out: Path) -> int | None:
    """An exclusive lock on ``out`` for the time of the run."""
    if fcntl is None:  # pragma: no cover - Windows
        return None
    fd = os.open(out / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        raise InvalidParameter(
            f"{out} is being written by another run of recommend-dump; wait for it to end "
            "or choose another output",
            parameter="out",
        ) from err
    return fd


class _Bar:
    """A tqdm bar counting articles, when asked for."""

    def __init__(self, enabled: bool, initial: int) -> None:
        self.bar: Any = None
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError as err:
                raise ImportError("progress=True needs tqdm: pip install tqdm") from err
            self.bar = tqdm(desc="recommend-dump", unit="article", initial=initial)

    def update(self, pages: int, links: int, errors: int) -> None:
        if self.bar is not None:
            self.bar.set_postfix(links=links, errors=errors, refresh=False)
            self.bar.update(pages)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def recommend_dump(
    dump: str | os.PathLike[str],
    datasets: str | os.PathLike[str],
    wiki_id: str,
    out: str | os.PathLike[str],
    *,
    workers: int | None = None,
    progress: bool = False,
    overwrite: bool = False,
    pages_per_part: int = 5000,
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
    batch_pages: int | None = None,
    batch_bytes: int | None = None,
    **options: Unpack[PassOptions],
) -> DumpSummary:
    """Recommends links for every article of ``dump`` with the dataset of ``wiki_id`` at
    ``datasets`` (as :meth:`LinkEngine.open`), writing the Parquet dataset ``out``.

    Rows are those of :meth:`LinkEngine.recommend` on each article, in dump order (columns:
    ``wiki_db, page_id, revision_id, page_title, link_index, link_text, link_target, score,
    wikitext_offset, match_index, context_before, context_after, error``); an article that
    fails gives one row with ``error`` set and the run goes on. ``options`` are those of
    :meth:`LinkEngine.recommend_many` (``threshold``, ``max_recommendations``, …), except that
    ``time_budget`` defaults to :data:`DEFAULT_TIME_BUDGET` seconds per page (``None``: no
    budget) and a page over it is an error row, never a partial list of links. A ``<page>``
    over ``max_page_bytes`` of XML, or one that is not well-formed (an invalid UTF-8 byte, …),
    is an error row too, and reading goes on at the next page.

    If ``out`` already holds an unfinished run over the same dump (same size, modification
    time and ends) with the same dataset and options, every recorded part is checked and the
    run resumes after the last one; another dump, dataset or options, or a folder whose parts
    were deleted or changed, raise :class:`~wikisuggest.InvalidParameter`, unless
    ``overwrite`` (which deletes the run's own files in ``out``, and nothing else). A part is
    written every ``pages_per_part`` articles: an interruption loses at most that much work.
    ``out`` is locked while a run writes it.

    The dump must end with ``</mediawiki>``: a dump cut short raises
    :class:`~wikisuggest.WikisuggestError` after the parts before the cut are written, and the
    run is not complete. On Ctrl-C, ``KeyboardInterrupt`` is raised and every part recorded so
    far stays. ``batch_pages`` and ``batch_bytes`` are no longer used (deprecated).
    """
    started = time.monotonic()
    if batch_pages is not None or batch_bytes is not None:
        warnings.warn(
            "batch_pages and batch_bytes are no longer used: the dump is read ahead of the "
            "engine's workers by a bounded window",
            DeprecationWarning,
            stacklevel=2,
        )
    dump_path = Path(dump)
    checked = pass_options({"time_budget": DEFAULT_TIME_BUDGET, **options})
    engine = LinkEngine.open(datasets, _args.text("wiki_id", wiki_id))
    # Every argument is checked here, by the run itself, before the output is touched.
    rows = NativeDumpRows(
        engine.native,
        dump_path,
        checked,
        wiki_db=wiki_id,
        pages_per_batch=_args.integer("pages_per_part", pages_per_part),
        rows_per_batch=_ROWS_PER_PART,
        workers=_args.optional_integer("workers", workers),
        max_page_bytes=_args.integer("max_page_bytes", max_page_bytes),
    )
    identity = {
        "wiki_db": wiki_id,
        "dump": _dump_identity(dump_path),
        "dataset": _dataset_identity(engine),
        "options": _json_ready({**checked, "rules": None, "max_page_bytes": max_page_bytes}),
    }
    if checked["rules"] is not None:
        # Resuming under other rules would mix two runs in one dataset.
        identity["rules"] = hashlib.sha256(checked["rules"].to_json().encode()).hexdigest()
    output = _Output(Path(out), identity, overwrite)
    try:
        done_before = int(output.state["pages"])
        if not output.state["complete"]:
            rows.start(int(output.state["position"]))
            _write_parts(rows, output, progress)
        state = output.state
    finally:
        output.close()
    return DumpSummary(
        out=str(out),
        pages=state["pages"],
        links=state["links"],
        errors=state["errors"],
        parts=len(state["parts"]),
        complete=state["complete"],
        pages_this_run=state["pages"] - done_before,
        seconds=time.monotonic() - started,
    )


def _batches(rows: NativeDumpRows) -> Iterator[dict[str, Any]]:
    while (batch := rows.next_batch()) is not None:
        yield batch


def _write_parts(rows: NativeDumpRows, output: _Output, progress: bool) -> None:
    state = output.state
    bar = _Bar(progress, int(state["pages"]))
    try:
        for batch in _batches(rows):
            output.commit(batch, complete=bool(batch["last"]))
            bar.update(batch["pages"], state["links"], state["errors"])
    finally:
        bar.close()
        # Stops the reader and the engine's workers at once (on Ctrl-C or an error too).
        rows.close()


def write_dump(path: str | os.PathLike[str], pages: Iterable[tuple[str, str]]) -> Path:
    """Writes ``(title, wikitext)`` pages as a MediaWiki XML export dump, bzip2-compressed when
    the name ends in ``.bz2`` (for examples and tests); pages get ids 1, 2, … and revisions
    101, 102, …"""
    path = Path(path)
    parts = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">\n']
    for number, (title, text) in enumerate(pages, start=1):
        parts.append(
            f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n"
            f"    <id>{number}</id>\n    <revision>\n      <id>{100 + number}</id>\n"
            f'      <text xml:space="preserve">{escape(text)}</text>\n'
            "    </revision>\n  </page>\n"
        )
    parts.append("</mediawiki>\n")
    data = "".join(parts).encode("utf-8")
    path.write_bytes(bz2.compress(data) if path.suffix == ".bz2" else data)
    return path


def format_summary(summary: DumpSummary) -> str:
    """A short human-readable summary of a run."""
    status = "complete" if summary.complete else "incomplete (run again to resume)"
    return (
        f"{summary.out}: {status}; {summary.pages:,} articles, {summary.links:,} links, "
        f"{summary.errors:,} errors in {summary.parts} part(s); this run: "
        f"{summary.pages_this_run:,} articles in {summary.seconds:.1f} s "
        f"({summary.articles_per_second:,.1f} articles/s)"
    )
