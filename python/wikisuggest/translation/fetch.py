"""A wiki's translation catalog from Wikimedia's public dumps, in one call: :func:`fetch`.

>>> from wikisuggest.translation import fetch
>>> path = fetch("enwiki", parts=("sql", "pageviews"))  # doctest: +SKIP
>>> engine = wikisuggest.TranslationEngine.open(path)  # doctest: +SKIP

What is read, per part (only the parts asked for are downloaded):

- ``sql`` (always): the newest run of ``<wiki>/<YYYYMMDD>/`` whose ``dumpstatus.json`` says
  ``done`` for the ``page``, ``page_props``, ``langlinks`` and ``redirect`` tables (and the
  ``siteinfo-namespaces`` file when the run lists it); each file checked against its sha1.
- ``cirrus``: the newest ``other/cirrus_search_index/<YYYYMMDD>/index_name=<wiki>_content/``
  whose ``_SUCCESS`` marker is there: every shard (topics, countries, search sizes, lead
  sections, categories, and the seed-search index).
- ``pageviews``: one day of ``other/pageview_complete/`` (``day=``, default the newest
  published): the top list of popular mode, and the day's views.
- ``collections``: Meta-Wiki's newest complete run (``pages-articles`` and ``iwlinks``) and
  Wikidata's (``wb_items_per_site``): page collections.

Downloads resume after a cut, are verified, and take turns on a lock between processes (the
link datasets' fetcher, :mod:`wikisuggest.datasets.files`). The catalog is built once per set
of sources and reused for every target: a second call returns it without the network; with
``update=True`` the indexes and ``dumpstatus.json`` are read again, and nothing is downloaded
or built when they name the same files. ``DUMPS_BASE_URL`` overrides the dumps host.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from .._native import (
    NativeDownloader,
    build_translation_catalog,
    build_translation_collections,
    translation_constants,
)
from ..datasets import cache as _cache
from ..datasets.files import FileSpec, Release, Report, Staged, fetch_files
from ..datasets.published import wiki_id
from ..errors import DatasetError, InvalidParameter

__all__ = ["DEFAULT_DUMPS_BASE_URL", "PARTS", "catalog_entry", "dumps_base_url", "fetch"]

#: The dumps host (``DUMPS_BASE_URL`` overrides it).
DEFAULT_DUMPS_BASE_URL = "https://dumps.wikimedia.org/"
#: The parts a catalog can be built with (``sql`` is always part of it).
PARTS: tuple[str, ...] = tuple(translation_constants()["parts"])
#: The cache area of translation catalogs.
AREA = "translation"

#: The SQL tables of the ``sql`` part: job of ``dumpstatus.json`` → table.
_SQL_JOBS = {
    "pagetable": "page",
    "pagepropstable": "page_props",
    "langlinkstable": "langlinks",
    "redirecttable": "redirect",
}
#: The job of ``<wiki>-<run>-siteinfo-namespaces.json.gz`` (optional: English names without).
_NAMESPACES_JOB = "namespaces"
_META_JOBS = {"articlesdump": "pages-articles", "iwlinkstable": "iwlinks"}
_WIKIDATA_JOBS = {"wbitemspersitetable": "wb_items_per_site"}
#: Largest index page or status file read.
_SMALL = 8 << 20
#: Work space of a build, as a multiple of its sources' size: the catalog, its sort runs and
#: work files (about 0.1 of the compressed dumps at enwiki's size) and the seed-search index
#: (about 0.75 of the compressed search dump). See "Translation catalogs" and "Seed search"
#: in the benchmarks.
_SPACE_FACTOR = 1.0

_HREF = re.compile(r'href="([^"?#]+)"', re.IGNORECASE)
_RUN = re.compile(r"^(\d{8})/?$")


def dumps_base_url() -> str:
    """``DUMPS_BASE_URL``, else Wikimedia's dumps host; always ending in ``/``."""
    base = os.environ.get("DUMPS_BASE_URL") or DEFAULT_DUMPS_BASE_URL
    return base if base.endswith("/") else base + "/"


def _parts(parts: Iterable[str]) -> tuple[str, ...]:
    if isinstance(parts, str):
        parts = (parts,)
    chosen = {"sql"}
    for part in parts:
        if part not in PARTS:
            raise InvalidParameter(
                f"parts: {part!r} is not a part; the parts are {', '.join(PARTS)}",
                parameter="parts",
            )
        chosen.add(part)
    return tuple(p for p in PARTS if p in chosen)


def _day(day: Any) -> str | None:
    """``day`` as ``YYYYMMDD`` (a ``datetime.date`` or ``"YYYY-MM-DD"``)."""
    if day is None:
        return None
    if isinstance(day, datetime.datetime):
        day = day.date()
    if isinstance(day, datetime.date):
        return day.strftime("%Y%m%d")
    if isinstance(day, str):
        try:
            return datetime.date.fromisoformat(day.strip()).strftime("%Y%m%d")
        except ValueError:
            pass
    raise InvalidParameter(
        f"day must be a datetime.date or 'YYYY-MM-DD', got {day!r}", parameter="day"
    )


def catalog_entry(wiki: str, cache_dir: str | os.PathLike[str] | None = None) -> _cache.CacheEntry:
    """The cache entry of ``wiki``'s catalogs."""
    return _cache.CacheEntry(_cache.cache_root(cache_dir), AREA, wiki_id(wiki))


def _listing(loader: NativeDownloader, url: str) -> list[str] | None:
    """The names an index page links to (decoded, without a trailing ``/`` for folders
    kept as ``name/``); ``None`` when there is no such page."""
    got = loader.get(url, _SMALL)
    if got is None:
        return None
    text = got[0].decode("utf-8", "replace")
    names = []
    for href in _HREF.findall(text):
        name = unquote(href)
        if name.startswith(("/", "..")) or "://" in name:
            continue
        names.append(name)
    return names


def _json(loader: NativeDownloader, url: str) -> dict[str, Any] | None:
    got = loader.get(url, _SMALL)
    if got is None:
        return None
    try:
        value = json.loads(got[0])
    except ValueError as err:
        raise DatasetError(f"{url} is not JSON: {err}", url=url) from err
    return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class _Run:
    wiki: str
    run: str
    files: dict[str, FileSpec]


def _complete_run(
    loader: NativeDownloader,
    base: str,
    wiki: str,
    jobs: Mapping[str, str],
    optional: Iterable[str] = (),
) -> _Run:
    """The newest run of ``wiki`` whose ``dumpstatus.json`` says ``done`` for every job of
    ``jobs``: its files (job → spec), checked against the sha1 the status lists."""
    names = _listing(loader, f"{base}{wiki}/")
    if names is None:
        raise DatasetError(f"{base}{wiki}/ is not published", url=f"{base}{wiki}/")
    runs = sorted({m.group(1) for n in names if (m := _RUN.match(n))}, reverse=True)
    for run in runs:
        status = _json(loader, f"{base}{wiki}/{run}/dumpstatus.json")
        if status is None:
            continue
        listed = status.get("jobs")
        if not isinstance(listed, dict):
            continue
        done = {
            job: info
            for job, info in listed.items()
            if isinstance(info, dict) and info.get("status") == "done"
        }
        if not all(job in done for job in jobs):
            continue
        files: dict[str, FileSpec] = {}
        for job in [*jobs, *(j for j in optional if j in done)]:
            for name, info in (done[job].get("files") or {}).items():
                if not isinstance(info, dict):
                    continue
                if job == "articlesdump" and not name.endswith("-pages-articles.xml.bz2"):
                    continue
                url = str(info.get("url") or f"/{wiki}/{run}/{name}")
                sha1 = info.get("sha1")
                files[job] = FileSpec(
                    url=base + url.lstrip("/"),
                    name=name,
                    size=info.get("size") if isinstance(info.get("size"), int) else None,
                    checksum=("sha1", sha1) if isinstance(sha1, str) and sha1 else None,
                )
        if all(job in files for job in jobs):
            return _Run(wiki, run, files)
    raise DatasetError(
        f"no complete run of {wiki} at {base}{wiki}/ (one whose dumpstatus.json says done for "
        f"{', '.join(sorted(jobs))})",
        url=f"{base}{wiki}/",
    )


def _cirrus(loader: NativeDownloader, base: str, wiki: str) -> tuple[str, list[FileSpec]]:
    """The newest search index dump of ``wiki`` with its ``_SUCCESS`` marker: its shards."""
    root = f"{base}other/cirrus_search_index/"
    names = _listing(loader, root)
    if names is None:
        raise DatasetError(f"{root} is not published", url=root)
    index = f"index_name={wiki}_content"
    for date in sorted({m.group(1) for n in names if (m := _RUN.match(n))}, reverse=True):
        folder = f"{root}{date}/{index}/"
        listed = _listing(loader, folder)
        if not listed or "_SUCCESS" not in listed:
            continue
        shard = re.compile(rf"^{re.escape(wiki)}_content-{date}-\d+\.json(\.bz2|\.gz)?$")
        shards = sorted(n for n in listed if shard.match(n))
        if shards:
            return date, [FileSpec(url=folder + s, name=s) for s in shards]
    raise DatasetError(
        f"no complete search index dump of {wiki} under {root} (one with _SUCCESS)", url=root
    )


def _pageviews(loader: NativeDownloader, base: str, day: str | None) -> tuple[str, FileSpec]:
    """One day's ``pageview_complete`` user file: ``day``'s, else the newest published."""
    root = f"{base}other/pageview_complete/"
    name_of = re.compile(r"^pageviews-(\d{8})-user\.bz2$")
    if day is not None:
        folder = f"{root}{day[:4]}/{day[:4]}-{day[4:6]}/"
        listed = _listing(loader, folder) or []
        name = f"pageviews-{day}-user.bz2"
        if name not in listed:
            raise DatasetError(f"{folder}{name} is not published", url=folder + name)
        return day, FileSpec(url=folder + name, name=name)
    years = _listing(loader, root) or []
    for year in sorted({n.rstrip("/") for n in years if re.match(r"^\d{4}/?$", n)}, reverse=True):
        months = _listing(loader, f"{root}{year}/") or []
        for month in sorted(
            {n.rstrip("/") for n in months if re.match(rf"^{year}-\d\d/?$", n)}, reverse=True
        ):
            folder = f"{root}{year}/{month}/"
            days = sorted(
                (
                    (m.group(1), n)
                    for n in _listing(loader, folder) or []
                    if (m := name_of.match(n))
                ),
                reverse=True,
            )
            if days:
                found, name = days[0]
                return found, FileSpec(url=folder + name, name=name)
    raise DatasetError(f"no day of views under {root}", url=root)


@dataclass
class _Plan:
    """The sources of one catalog, by role."""

    wiki: str
    parts: tuple[str, ...]
    sql: _Run
    cirrus: tuple[str, list[FileSpec]] | None
    pageviews: tuple[str, FileSpec] | None
    meta: _Run | None
    wikidata: _Run | None

    def files(self) -> list[FileSpec]:
        out = list(self.sql.files.values())
        if self.cirrus:
            out += self.cirrus[1]
        if self.pageviews:
            out.append(self.pageviews[1])
        for run in (self.meta, self.wikidata):
            if run:
                out += run.files.values()
        return out

    def version(self) -> str:
        return json.dumps(
            {
                "wiki": self.wiki,
                "parts": self.parts,
                "sql": self.sql.run,
                "cirrus": self.cirrus[0] if self.cirrus else None,
                "pageviews": self.pageviews[0] if self.pageviews else None,
                "meta": self.meta.run if self.meta else None,
                "wikidata": self.wikidata.run if self.wikidata else None,
            },
            sort_keys=True,
        )


def _plan(
    loader: NativeDownloader, base: str, wiki: str, parts: tuple[str, ...], day: str | None
) -> _Plan:
    return _Plan(
        wiki=wiki,
        parts=parts,
        sql=_complete_run(loader, base, wiki, _SQL_JOBS, optional=(_NAMESPACES_JOB,)),
        cirrus=_cirrus(loader, base, wiki) if "cirrus" in parts else None,
        pageviews=_pageviews(loader, base, day) if "pageviews" in parts else None,
        meta=_complete_run(loader, base, "metawiki", _META_JOBS)
        if "collections" in parts
        else None,
        wikidata=(
            _complete_run(loader, base, "wikidatawiki", _WIKIDATA_JOBS)
            if "collections" in parts
            else None
        ),
    )


def _iso(day: str | None) -> str | None:
    return None if day is None else f"{day[:4]}-{day[4:6]}-{day[6:]}"


def _build(
    plan: _Plan, staged: Staged, folder: Path, report: Report, memory: int
) -> dict[str, Any]:
    """Builds the catalog from the verified files into ``folder``."""
    src = staged.folder
    sql = plan.sql.files
    collections_file = None
    if plan.meta and plan.wikidata:
        collections_file = src / f".collections-{os.getpid()}.parquet"
        report.say(f"{plan.wiki}: page collections from Meta-Wiki {plan.meta.run}")
        build_translation_collections(
            str(src / plan.meta.files["articlesdump"].name),
            str(src / plan.meta.files["iwlinkstable"].name),
            str(src / plan.wikidata.files["wbitemspersitetable"].name),
            str(collections_file),
        )
    files = [
        (name, int(info.get("size") or 0), *_digests(info)) for name, info in staged.files.items()
    ]
    bar = report.phase_bar(f"{plan.wiki} catalog")
    last: list[str] = []

    def progress(phase: str, done: int) -> None:
        if bar is not None:
            bar.update(done, None, phase)
        elif not last or last[-1] != phase:
            last.append(phase)
            report.say(f"{plan.wiki}: {phase}")

    spec = {
        "wiki": plan.wiki,
        "page": str(src / sql["pagetable"].name),
        "page_props": str(src / sql["pagepropstable"].name),
        "langlinks": str(src / sql["langlinkstable"].name),
        "redirect": str(src / sql["redirecttable"].name),
        "namespaces": str(src / sql[_NAMESPACES_JOB].name) if _NAMESPACES_JOB in sql else None,
        "cirrus": [str(src / s.name) for s in plan.cirrus[1]] if plan.cirrus else [],
        "pageviews": str(src / plan.pageviews[1].name) if plan.pageviews else None,
        "collections": str(collections_file) if collections_file else None,
        "memory": memory,
        "threads": None,
        "dump_run": plan.sql.run,
        "cirrus_run": plan.cirrus[0] if plan.cirrus else None,
        "pageviews_day": _iso(plan.pageviews[0]) if plan.pageviews else None,
        "collections_run": plan.meta.run if plan.meta else None,
        "files": files,
    }
    try:
        manifest = json.loads(build_translation_catalog(spec, str(folder), progress))
    finally:
        if bar is not None:
            bar.close()
        if collections_file is not None:
            collections_file.unlink(missing_ok=True)
    # The search index's folder (`search/`) is part of the catalog; outputs are its files.
    outputs = sorted(p.name for p in folder.iterdir() if p.is_file())
    return {"outputs": outputs, "catalog": manifest, "parts": list(plan.parts)}


def _digests(info: Mapping[str, Any]) -> tuple[str | None, str | None]:
    kind, value = (info.get("checksum") or [None, None])[:2]
    return (value if kind == "sha1" else None), None


def _matches(snapshot: _cache.Snapshot, parts: tuple[str, ...], day: str | None) -> bool:
    have = set(snapshot.manifest.get("parts") or ())
    if not set(parts) <= have:
        return False
    if day is not None:
        built = (snapshot.manifest.get("catalog") or {}).get("provenance", {})
        return bool(built.get("pageviews_day") == _iso(day))
    return True


def fetch(
    wiki: str,
    *,
    parts: Iterable[str] = ("sql",),
    day: Any = None,
    cache_dir: str | os.PathLike[str] | None = None,
    update: bool = False,
    offline: bool | None = None,
    progress: bool = False,
    user_agent: str | None = None,
    memory: int = 1 << 30,
) -> Path:
    """The folder of ``wiki``'s translation catalog with ``parts`` (see the module docs),
    fetched and built if needed. ``day`` (a ``datetime.date`` or ``"YYYY-MM-DD"``) chooses
    the day of views; ``offline=None`` reads ``WIKISUGGEST_OFFLINE``; ``memory`` bounds the
    build's sort buffers (bytes)."""
    wiki = wiki_id(wiki)
    chosen = _parts(parts)
    wanted_day = _day(day)
    if wanted_day is not None and "pageviews" not in chosen:
        raise InvalidParameter("day= needs the pageviews part", parameter="day")
    entry = catalog_entry(wiki, cache_dir)
    base = dumps_base_url()
    plans: list[_Plan] = []

    def cached() -> _cache.Snapshot | None:
        current = entry.current()
        if current is not None and _matches(current, chosen, wanted_day):
            return current
        for snapshot in sorted(entry.all_snapshots(), key=lambda s: s.id, reverse=True):
            if _matches(snapshot, chosen, wanted_day):
                return snapshot
        return None

    def release(loader: NativeDownloader) -> Release | _cache.Snapshot | None:
        plan = _plan(loader, base, wiki, chosen, wanted_day)
        plans.append(plan)
        version = plan.version()
        for snapshot in entry.all_snapshots():
            if snapshot.manifest.get("version") == version:
                return snapshot
        return Release(
            version=version,
            files=plan.files(),
            manifest={"version": version, "parts": list(chosen)},
            origin=base,
        )

    def make(staged: Staged, folder: Path, report: Report) -> Mapping[str, Any]:
        return _build(plans[-1], staged, folder, report, memory)

    snapshot = fetch_files(
        entry,
        release,
        make,
        offline=offline,
        update=update,
        progress=progress,
        user_agent=user_agent,
        space_factor=_SPACE_FACTOR,
        cached=cached,
    )
    return snapshot.path
