"""``wikisuggest translation …``: translation catalogs from Wikimedia's public dumps (fetch,
build, list, path, verify, prune) and whole-pair gap tables (gaps)."""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..errors import InvalidParameter, WikisuggestError
from .options import add_cache_options

__all__ = ["add_parser"]


def _format(args: argparse.Namespace) -> str:
    return str(args.format or ("table" if sys.stdout.isatty() else "json"))


def _progress(args: argparse.Namespace) -> bool:
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return False
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return False
    return True


def _log_to_stderr(args: argparse.Namespace, progress: bool) -> None:
    if getattr(args, "quiet", False) or progress:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    for name in ("wikisuggest.datasets", "wikisuggest.translation"):
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def _parts(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


def _fetch(args: argparse.Namespace) -> int:
    from ..translation.fetch import fetch

    progress = _progress(args)
    _log_to_stderr(args, progress)
    for wiki in args.wiki:
        path = fetch(
            wiki,
            parts=_parts(args.parts),
            day=args.day,
            cache_dir=args.cache_dir,
            update=args.update,
            offline=True if args.offline else None,
            progress=progress,
            user_agent=args.user_agent,
        )
        print(path)
    return 0


#: How ``build`` recognises each dump by its published name (group 1: its run or day).
_FILES = {
    "page": re.compile(r"-(\d{8})-page\.sql(?:\.gz)?$"),
    "page_props": re.compile(r"-(\d{8})-page_props\.sql(?:\.gz)?$"),
    "langlinks": re.compile(r"-(\d{8})-langlinks\.sql(?:\.gz)?$"),
    "redirect": re.compile(r"-(\d{8})-redirect\.sql(?:\.gz)?$"),
    "namespaces": re.compile(r"-(\d{8})-siteinfo-namespaces\.json(?:\.gz)?$"),
    "cirrus": re.compile(r"_content-(\d{8})-\d+\.json(?:\.bz2|\.gz)?$"),
    "pageviews": re.compile(r"^pageviews-(\d{8})-user\.bz2$"),
    "collections": re.compile(r"^collections\.parquet$"),
    "meta_pages": re.compile(r"^metawiki-(\d{8})-pages-articles\.xml\.bz2$"),
    "meta_iwlinks": re.compile(r"^metawiki-(\d{8})-iwlinks\.sql\.gz$"),
    "items_per_site": re.compile(r"^wikidatawiki-(\d{8})-wb_items_per_site\.sql\.gz$"),
}
#: Files of every wiki's dumps, not only the catalog's.
_SHARED = ("cirrus", "pageviews", "collections", "meta_pages", "meta_iwlinks", "items_per_site")


def _run(path: str | None, role: str) -> str | None:
    """The run (or day) in a dump's published name."""
    found = _FILES[role].search(Path(path).name) if path else None
    return found.group(1) if found and found.groups() else None


def _build(args: argparse.Namespace) -> int:
    from .._native import build_translation_catalog, build_translation_collections
    from ..datasets.published import wiki_id

    wiki = wiki_id(args.wiki)
    found: dict[str, list[Path]] = {k: [] for k in _FILES}
    for folder in args.sources:
        for path in sorted(Path(folder).rglob("*")):
            if not path.is_file():
                continue
            for role, pattern in _FILES.items():
                if pattern.search(path.name) and (role in _SHARED or path.name.startswith(wiki)):
                    found[role].append(path)
    if args.day:
        day = args.day.replace("-", "")
        found["pageviews"] = [p for p in found["pageviews"] if _run(str(p), "pageviews") == day]
    for role in ("page", "page_props", "langlinks", "redirect"):
        if len(found[role]) != 1:
            raise InvalidParameter(
                f"{args.sources}: expected one {wiki}-…-{role}.sql.gz, found {len(found[role])}",
                parameter="sources",
            )

    def one(role: str) -> str | None:
        paths = found[role]
        if len(paths) > 1:
            hint = " (pick one with --day)" if role == "pageviews" else ""
            raise InvalidParameter(
                f"several {role} files{hint}: {', '.join(map(str, paths))}", parameter="sources"
            )
        return str(paths[0]) if paths else None

    cirrus = [str(p) for p in found["cirrus"] if p.name.startswith(f"{wiki}_content-")]
    pageviews = one("pageviews")
    meta_pages, iwlinks, items = one("meta_pages"), one("meta_iwlinks"), one("items_per_site")
    with tempfile.TemporaryDirectory(prefix="wikisuggest-collections-") as scratch:
        collections = one("collections")
        collections_run = None
        if collections is None and meta_pages and iwlinks and items:
            # Page collections from Meta-Wiki's pages and interwiki links, resolved through
            # Wikidata's sitelinks, as `fetch` builds them.
            collections = str(Path(scratch) / "collections.parquet")
            build_translation_collections(meta_pages, iwlinks, items, collections)
            collections_run = _run(meta_pages, "meta_pages")
        day = _run(pageviews, "pageviews")
        spec: dict[str, Any] = {
            "wiki": wiki,
            "page": one("page"),
            "page_props": one("page_props"),
            "langlinks": one("langlinks"),
            "redirect": one("redirect"),
            "namespaces": one("namespaces"),
            "cirrus": cirrus,
            "pageviews": pageviews,
            "collections": collections,
            "memory": args.memory_mb << 20,
            "threads": args.threads,
            "dump_run": _run(one("page"), "page"),
            "cirrus_run": _run(cirrus[0], "cirrus") if cirrus else None,
            "pageviews_day": f"{day[:4]}-{day[4:6]}-{day[6:]}" if day else None,
            "collections_run": collections_run,
            "files": [],
        }
        phases: list[str] = []

        def progress(phase: str, done: int) -> None:
            if not args.quiet and (not phases or phases[-1] != phase):
                phases.append(phase)
                print(f"{wiki}: {phase}", file=sys.stderr)

        manifest = json.loads(build_translation_catalog(spec, str(args.out), progress))
    print(json.dumps(manifest["counts"]) if args.quiet else args.out)
    return 0


def _snapshots(args: argparse.Namespace, wikis: list[str]) -> list[tuple[str, Any]]:
    from ..datasets import cache
    from ..translation.fetch import AREA, catalog_entry

    root = cache.cache_root(args.cache_dir)
    if not wikis:
        area = root / AREA
        wikis = sorted(p.name for p in area.iterdir() if p.is_dir()) if area.is_dir() else []
    out: list[tuple[str, Any]] = []
    for wiki in wikis:
        entry = catalog_entry(wiki, root)
        out.extend((entry.name, s) for s in entry.all_snapshots())
    return out


def _list(args: argparse.Namespace) -> int:
    rows = []
    for wiki, snapshot in _snapshots(args, args.wiki):
        catalog = snapshot.manifest.get("catalog") or {}
        provenance = catalog.get("provenance") or {}
        rows.append(
            {
                "wiki": wiki,
                "snapshot": snapshot.id,
                "parts": ",".join(snapshot.manifest.get("parts") or []),
                "dump_run": provenance.get("dump_run"),
                "cirrus_run": provenance.get("cirrus_run"),
                "pageviews_day": provenance.get("pageviews_day"),
                "articles": (catalog.get("counts") or {}).get("articles"),
                "size": snapshot.size(),
                "path": str(snapshot.path),
            }
        )
    if _format(args) == "json":
        json.dump(rows, sys.stdout, indent=1)
        print()
    else:
        from .output import table

        print(
            table(
                rows,
                [
                    "wiki",
                    "snapshot",
                    "parts",
                    "dump_run",
                    "cirrus_run",
                    "pageviews_day",
                    "articles",
                ],
            )
        )
    return 0


def _path(args: argparse.Namespace) -> int:
    from ..translation.fetch import fetch

    print(fetch(args.wiki, parts=_parts(args.parts), cache_dir=args.cache_dir, offline=True))
    return 0


def _verify(args: argparse.Namespace) -> int:
    from ..translation import TranslationEngine

    bad = 0
    for wiki, snapshot in _snapshots(args, args.wiki):
        want = (snapshot.manifest.get("catalog") or {}).get("counts", {}).get("articles")
        try:
            engine = TranslationEngine.open(snapshot.path)
            problem = (
                None if len(engine) == want else f"{len(engine)} articles, the manifest says {want}"
            )
        except WikisuggestError as err:
            problem = str(err)
        if problem:
            bad += 1
            print(f"{wiki} {snapshot.id}: damaged: {problem}", file=sys.stderr)
        else:
            print(f"{wiki} {snapshot.id}: ok")
    return 2 if bad else 0


def _prune(args: argparse.Namespace) -> int:
    from ..datasets import cache
    from ..translation.fetch import AREA, catalog_entry

    root = cache.cache_root(args.cache_dir)
    wikis = args.wiki
    if not wikis:
        area = root / AREA
        wikis = sorted(p.name for p in area.iterdir() if p.is_dir()) if area.is_dir() else []
    freed = 0
    for wiki in wikis:
        entry = catalog_entry(wiki, root)
        with entry.lock():
            current = entry.current()
            others = [s for s in entry.all_snapshots() if current is None or s.id != current.id]
            for snapshot in others[::-1][args.keep :]:
                size = snapshot.size()
                print(f"{wiki}: {'would remove' if args.dry_run else 'removing'} {snapshot.path}")
                if not args.dry_run:
                    shutil.rmtree(snapshot.path, ignore_errors=True)
                freed += size
    verb = "would free" if args.dry_run else "freed"
    print(f"{verb} {freed / 1e6:.0f} MB")
    return 0


def _gaps(args: argparse.Namespace) -> int:
    from ..translation import TranslationEngine

    if args.catalog:
        engine = TranslationEngine.open(args.catalog)
    else:
        progress = _progress(args)
        _log_to_stderr(args, progress)
        engine = TranslationEngine.published(
            args.source,
            parts=_parts(args.parts),
            cache_dir=args.cache_dir,
            offline=True if args.offline else None,
            progress=progress,
            user_agent=args.user_agent,
        )
    table = engine.missing(
        args.target if len(args.target) > 1 else args.target[0],
        topic=args.topic,
        country=args.country,
        category=args.category,
        min_size=args.min_size,
        max_size=args.max_size,
        order_by=args.order_by,
    )
    if args.output:
        import pyarrow.parquet as pq

        out = Path(args.output)
        if out.suffix == ".csv":
            import pyarrow.csv as pcsv

            flat = table.drop_columns(["topics", "countries"])
            pcsv.write_csv(flat, out)
        else:
            pq.write_table(table, out)
        print(f"{table.num_rows} articles -> {out}", file=sys.stderr)
    else:
        for row in table.slice(0, args.limit).to_pylist():
            print(json.dumps(row, ensure_ascii=False))
    return 0


def _parts_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--parts",
        default="sql",
        help="comma-separated: sql (always), cirrus, pageviews, collections (default: sql)",
    )


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = commands.add_parser(
        "translation",
        help="translation catalogs from the public dumps: fetch, build, list, path, verify, "
        "prune, gaps",
        description="Production's translation recommendations from Wikimedia's public dumps.",
    )
    sub = group.add_subparsers(dest="translation_command", required=True)

    fetch = sub.add_parser("fetch", help="download the dumps, build the catalog; print its folder")
    fetch.add_argument("wiki", nargs="+", help="e.g. enwiki, en or en.wikipedia.org")
    _parts_option(fetch)
    fetch.add_argument("--day", help="day of views, YYYY-MM-DD (pageviews part)")
    add_cache_options(fetch)
    fetch.add_argument("--update", action="store_true", help="use newer dumps if published")
    fetch.add_argument("--quiet", action="store_true", help="no sizes or progress")
    fetch.set_defaults(run=_fetch)

    build = sub.add_parser("build", help="build a catalog from dump files on disk (no network)")
    build.add_argument("wiki")
    build.add_argument(
        "sources",
        nargs="+",
        help="folders holding the dumps, under their published names (the wiki's tables, its "
        "search index shards, a pageviews day; Meta-Wiki's pages-articles and iwlinks with "
        "Wikidata's wb_items_per_site add page collections)",
    )
    build.add_argument("--day", help="the day of views to read, YYYY-MM-DD, when several")
    build.add_argument("-o", "--out", type=Path, required=True, help="the catalog's folder")
    build.add_argument("--memory-mb", type=int, default=1024, help="sort buffers (default 1024)")
    build.add_argument("--threads", type=int, help="search shards read at once")
    build.add_argument("--quiet", action="store_true")
    build.set_defaults(run=_build)

    listing = sub.add_parser("list", help="cached catalogs: parts, dump dates, size")
    listing.add_argument("wiki", nargs="*")
    add_cache_options(listing, network=False)
    listing.add_argument("--format", choices=["json", "table"], default=None)
    listing.set_defaults(run=_list)

    path = sub.add_parser("path", help="print the folder of a cached catalog (no network)")
    path.add_argument("wiki")
    _parts_option(path)
    add_cache_options(path, network=False)
    path.set_defaults(run=_path)

    verify = sub.add_parser("verify", help="open every cached catalog and check its counts")
    verify.add_argument("wiki", nargs="*")
    add_cache_options(verify, network=False)
    verify.set_defaults(run=_verify)

    prune = sub.add_parser("prune", help="remove catalogs other than the current ones")
    prune.add_argument("wiki", nargs="*")
    add_cache_options(prune, network=False)
    prune.add_argument("--keep", type=int, default=0, help="older catalogs to keep per wiki")
    prune.add_argument("--dry-run", action="store_true")
    prune.set_defaults(run=_prune)

    gaps = sub.add_parser("gaps", help="every article of SOURCE missing in TARGET (Parquet/CSV)")
    gaps.add_argument("source", help="source wiki, e.g. enwiki")
    gaps.add_argument("target", nargs="+", help="target language(s), e.g. sw")
    gaps.add_argument("-o", "--output", help="a .parquet or .csv file (default: JSON lines)")
    gaps.add_argument("--catalog", type=Path, help="a catalog folder instead of the cache")
    _parts_option(gaps)
    gaps.add_argument("--topic", action="append", help="topic term (repeatable: either)")
    gaps.add_argument("--country", action="append", help="ISO 3166 alpha-3 code")
    gaps.add_argument("--category", help="only articles in this category (cirrus part)")
    gaps.add_argument("--min-size", type=int)
    gaps.add_argument("--max-size", type=int)
    gaps.add_argument("--order-by", choices=["pageviews", "langlinks_count"], default="pageviews")
    gaps.add_argument("--limit", type=int, default=20, help="rows printed without -o")
    add_cache_options(gaps)
    gaps.add_argument("--quiet", action="store_true")
    gaps.set_defaults(run=_gaps)
