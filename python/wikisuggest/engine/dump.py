"""Link recommendations for every article of a MediaWiki XML dump, on one machine, to Parquet.

>>> from wikisuggest.engine import recommend_dump
>>> summary = recommend_dump("enwiki-pages-articles.xml.bz2", "data/enwiki", "enwiki",
...                          "enwiki-links.parquet")  # doctest: +SKIP

The dump (``.xml``, ``.xml.bz2``, multistream included) is parsed in Rust on a thread of its
own, a bounded batch of articles at a time (main namespace, redirects left out), while the
engine recommends links for the previous batch on every core. Memory stays bounded whatever
the dump size.

The output is a Parquet dataset: a directory of ``part-NNNNN.parquet`` files (read it with
``pyarrow.parquet.read_table``, ``pandas.read_parquet`` or ``spark.read.parquet``) and a small
``_progress.json`` manifest. Each part is written to a hidden temporary file and renamed, and
the manifest is replaced atomically after it, so a run that is interrupted (Ctrl-C, or killed)
leaves only complete parts behind; running it again resumes after the last recorded part.
"""

from __future__ import annotations

import bz2
import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from .. import _args
from .._native import NativeDumpPages
from ..batch import BatchInterrupted
from ..errors import InvalidParameter
from ._linkrows import LinkRows
from .link_engine import LinkEngine

__all__ = ["DumpSummary", "format_summary", "recommend_dump", "write_dump"]

MANIFEST = "_progress.json"
_FORMAT = 1
_MAIN_NAMESPACE = 0
#: Rows held before a part is written early (with no limit on links per page, a part's pages
#: could otherwise hold any number of rows).
_ROWS_PER_PART = 500_000


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
    #: Whether the whole dump has been read.
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


def _write_atomically(path: Path, write: Any) -> None:
    """``write(tmp_path)``, then ``tmp_path`` renamed to ``path`` (hidden until complete)."""
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    os.replace(tmp, path)


class _Output:
    """The Parquet dataset directory and its manifest."""

    def __init__(self, out: Path, identity: dict[str, Any], overwrite: bool) -> None:
        try:
            import pyarrow.parquet as pq
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError(
                "writing Parquet needs pyarrow: pip install 'wikisuggest[parquet]'"
            ) from err
        self._pq = pq
        self.out = out
        manifest = out / MANIFEST
        if overwrite and manifest.is_file():
            for name in json.loads(manifest.read_text("utf-8")).get("parts", []):
                (out / name).unlink(missing_ok=True)
            manifest.unlink()
        if out.exists() and not out.is_dir():
            raise InvalidParameter(f"{out} exists and is not a directory", parameter="out")
        if manifest.is_file():
            state = json.loads(manifest.read_text("utf-8"))
            if state.get("identity") != identity:
                raise InvalidParameter(
                    f"{out} holds the output of a run with another dump or other options "
                    f"({state.get('identity')}); choose another output or overwrite it",
                    parameter="out",
                )
        elif out.is_dir() and any(out.iterdir()):
            raise InvalidParameter(
                f"{out} is not empty and has no {MANIFEST}; choose another output",
                parameter="out",
            )
        else:
            out.mkdir(parents=True, exist_ok=True)
            state = {
                "format": _FORMAT,
                "identity": identity,
                "position": 0,
                "parts": [],
                "pages": 0,
                "links": 0,
                "errors": 0,
                "complete": False,
            }
        self.state: dict[str, Any] = state
        # Parts written after the last manifest update belong to no run: redo them.
        known = set(state["parts"])
        for leftover in out.iterdir():
            is_part = leftover.name.startswith("part-") and leftover.name not in known
            if is_part or (leftover.name.startswith(".") and leftover.name.endswith(".tmp")):
                leftover.unlink()

    def commit(self, rows: LinkRows, pages: int, position: int, complete: bool) -> None:
        """Writes ``rows`` as the next part (if any), then records the progress.

        The part comes first so that a recorded part always exists: a process killed between
        the two steps leaves one unrecorded part, which the next run removes and redoes."""
        state = self.state
        if len(rows):
            name = f"part-{len(state['parts']):05d}.parquet"
            table = self._pq_table(rows)
            _write_atomically(self.out / name, lambda p: self._pq.write_table(table, p))
            state["parts"].append(name)
        state["position"] = position
        state["pages"] += pages
        state["links"] += rows.links
        state["errors"] += rows.errors
        state["complete"] = complete
        text = json.dumps(state, indent=1, ensure_ascii=False)
        _write_atomically(self.out / MANIFEST, lambda p: p.write_text(text, "utf-8"))

    @staticmethod
    def _pq_table(rows: LinkRows) -> Any:
        import pyarrow as pa

        return pa.Table.from_batches([rows.to_arrow()])


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
    language_code: str | None = None,
    threshold: float = 0.5,
    max_recommendations: int = 15,
    sections_to_exclude: Iterable[str] | None = None,
    workers: int | None = None,
    progress: bool = False,
    overwrite: bool = False,
    pages_per_part: int = 5000,
    batch_pages: int = 256,
    batch_bytes: int = 32 << 20,
) -> DumpSummary:
    """Recommends links for every article of ``dump`` with the dataset of ``wiki_id`` at
    ``datasets`` (as :meth:`LinkEngine.open`), writing the Parquet dataset ``out``.

    Rows are those of :meth:`LinkEngine.recommend` on each article, in dump order (columns:
    ``wiki_db, page_id, revision_id, page_title, link_index, link_text, link_target, score,
    wikitext_offset, match_index, context_before, context_after, error``); an article that
    fails gives one row with ``error`` set and the run goes on.

    If ``out`` already holds an unfinished run over the same dump with the same options, the
    run resumes after its last part (a different dump or options raise
    :class:`~wikisuggest.InvalidParameter`, unless ``overwrite``). A part is written every
    ``pages_per_part`` articles: an interruption loses at most that much work. Articles are
    read ``batch_pages`` (or about ``batch_bytes`` of wikitext) at a time.

    On Ctrl-C, ``KeyboardInterrupt`` is raised once the pages already running have finished;
    every part recorded so far stays. A malformed dump raises
    :class:`~wikisuggest.WikisuggestError` (the parts before it stay too).
    """
    started = time.monotonic()
    for name, value in [
        ("pages_per_part", pages_per_part),
        ("batch_pages", batch_pages),
        ("batch_bytes", batch_bytes),
    ]:
        if _args.integer(name, value) < 1:
            raise InvalidParameter(f"{name} must be at least 1", parameter=name)
    dump_path = Path(dump)
    if not dump_path.is_file():
        raise InvalidParameter(f"{dump_path}: no such dump file", parameter="dump")
    options: dict[str, Any] = {
        "language_code": _args.optional_text("language_code", language_code),
        "threshold": _args.number("threshold", threshold),
        "max_recommendations": _args.integer("max_recommendations", max_recommendations),
        "sections_to_exclude": _args.text_list("sections_to_exclude", sections_to_exclude),
    }
    identity = {
        "wiki_db": wiki_id,
        "dump": dump_path.name,
        "dump_bytes": dump_path.stat().st_size,
        "options": options,
    }
    engine = LinkEngine.open(datasets, wiki_id)
    output = _Output(Path(out), identity, overwrite)
    done_before = int(output.state["pages"])
    if not output.state["complete"]:
        _run(engine, dump_path, output, options, workers, progress, pages_per_part,
             batch_pages, batch_bytes)  # fmt: skip
    state = output.state
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


def _run(
    engine: LinkEngine,
    dump: Path,
    output: _Output,
    options: dict[str, Any],
    workers: int | None,
    progress: bool,
    pages_per_part: int,
    batch_pages: int,
    batch_bytes: int,
) -> None:
    state = output.state
    pages_source = NativeDumpPages(
        dump, [_MAIN_NAMESPACE], True, int(state["position"]), batch_pages, batch_bytes
    )
    wiki = engine.wiki_id
    bar = _Bar(progress, int(state["pages"]))
    rows = LinkRows()
    pages_in_part = 0
    position = int(state["position"])
    try:
        while (batch := pages_source.next_batch()) is not None:
            pages, position = batch
            items = engine.recommend_iter(
                (
                    {"wikitext": text, "page_title": title, "pageid": pid, "revid": rev}
                    for pid, rev, title, text in pages
                ),
                workers=workers,
                **options,
            )
            for (pid, rev, title, _), item in zip(pages, items, strict=True):
                rows.add_page(wiki, pid, rev, title, item)
            pages_in_part += len(pages)
            bar.update(len(pages), state["links"] + rows.links, state["errors"] + rows.errors)
            if pages_in_part >= pages_per_part or len(rows) >= _ROWS_PER_PART:
                output.commit(rows, pages_in_part, position, complete=False)
                rows, pages_in_part = LinkRows(), 0
        output.commit(rows, pages_in_part, position, complete=True)
    except BatchInterrupted as interrupted:
        # Pages of the unfinished part are redone on the next run.
        raise KeyboardInterrupt from interrupted
    finally:
        bar.close()


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
