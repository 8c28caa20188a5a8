"""``wikisuggest datasets …`` (production's datasets: fetch, list, path, verify, prune, diff)
and ``wikisuggest convert`` (a published folder into the engine's native file)."""

from __future__ import annotations

import argparse
import datetime
import email.utils
import json
import logging
import shutil
import sys
from typing import Any

from ..errors import DatasetError, WikisuggestError
from .environment import CACHE, FETCH, describe
from .options import add_cache_options
from .output import bars_wanted

__all__ = ["add_parser"]


def _expect(values: list[str] | None) -> dict[str, str] | None:
    if not values:
        return None
    out = {}
    for value in values:
        name, sep, sha = value.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"--expect takes DATASET=SHA256, got {value!r}")
        out[name.strip()] = sha.strip()
    return out


def _format(args: argparse.Namespace) -> str:
    """``--format``, else a table for a terminal and JSON for a pipe."""
    return str(args.format or ("table" if sys.stdout.isatty() else "json"))


def _progress(args: argparse.Namespace) -> bool:
    return not args.quiet and bars_wanted()


def _fetch(args: argparse.Namespace) -> int:
    from ..datasets.fetch import fetch

    progress = _progress(args)
    if not args.quiet and not progress:
        # Sizes, waits and the snapshot made, as lines on stderr (logs, CI).
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger = logging.getLogger("wikisuggest.datasets")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    for wiki in args.wiki:
        path = fetch(
            wiki,
            source=args.source,
            cache_dir=args.cache_dir,
            update=args.update,
            offline=True if args.offline else None,
            expect=_expect(args.expect),
            progress=progress,
            user_agent=args.user_agent,
            keep_sources=args.keep_sources,
        )
        print(path)
    return 0


def _age(last_modified: str | None) -> str | None:
    if not last_modified:
        return None
    try:
        when = email.utils.parsedate_to_datetime(last_modified)
    except (TypeError, ValueError):
        return None
    days = (datetime.datetime.now(datetime.timezone.utc) - when).days
    return f"{when.date().isoformat()} ({days} d)"


def _list(args: argparse.Namespace) -> int:
    if args.published:
        return _list_published(args)
    from ..datasets import cache
    from ..datasets.fetch import published_index, published_version
    from ..datasets.published import wiki_id

    root = cache.cache_root(args.cache_dir)
    wikis = [wiki_id(w) for w in args.wiki] or cache.known_wikis(root)
    table = _format(args) == "table"
    if table or not wikis:
        what = "the wikis asked for" if args.wiki else "every wiki"
        print(
            f"the cached link datasets of {what} in {root / 'datasets'}"
            + ("" if wikis else ": none")
            + "; what can be fetched: wikisuggest datasets list --published",
            file=sys.stderr,
        )
    index = None
    if not args.offline and wikis:
        try:
            index = published_index(args.source, cache_dir=root, user_agent=args.user_agent)
        except WikisuggestError as err:
            print(
                f"wikisuggest datasets list: cannot read the published index: {err}",
                file=sys.stderr,
            )
    rows: list[dict[str, Any]] = []
    for wiki in wikis:
        store = cache.WikiCache(root, wiki)
        current = store.current()
        row: dict[str, Any] = {
            "wiki": wiki,
            "snapshot": current.id if current else None,
            "source": current.source if current else None,
            "size": current.size() if current else None,
            "model_last_modified": current.model_last_modified if current else None,
            "model_age": _age(current.model_last_modified) if current else None,
            "fetched_at": current.manifest.get("fetched_at") if current else None,
            "snapshots": len(store.all_snapshots()),
            "path": str(current.native) if current else None,
        }
        newer: str | None = None
        if index is not None:
            if index.base_of(wiki) is None:
                newer = "unpublished"
            else:
                try:
                    published = published_version(
                        wiki, source=args.source, cache_dir=root, user_agent=args.user_agent
                    )
                except WikisuggestError as err:
                    print(f"wikisuggest datasets list: {wiki}: {err}", file=sys.stderr)
                    published = None
                if published is None:
                    newer = "unknown"
                elif current is None:
                    newer = "not fetched"
                else:
                    newer = "yes" if published.checksums != current.checksums else "no"
        row["newer_published"] = newer
        rows.append(row)
    if not table:
        json.dump(rows, sys.stdout, indent=1)
        print()
    else:
        from .output import table as render

        shown = [{**r, "size": _megabytes(r["size"])} for r in rows]
        print(
            render(
                shown,
                ["wiki", "snapshot", "source", "size", "model_age", "newer_published", "snapshots"],
            )
        )
    return 0


def _megabytes(size: int | None) -> str | None:
    return f"{size / 1e6:.0f} MB" if size is not None else None


def _list_published(args: argparse.Namespace) -> int:
    from ..datasets.fetch import published_wikis

    if args.offline:
        raise DatasetError(
            "datasets list --published asks the published bases; it cannot run --offline"
        )
    found = published_wikis(
        args.source,
        wikis=args.wiki or None,
        cache_dir=args.cache_dir,
        user_agent=args.user_agent,
    )
    rows = [{**p.to_dict(), "model_age": _age(p.model_last_modified)} for p in found]
    if _format(args) == "json":
        json.dump(rows, sys.stdout, indent=1)
        print()
        return 0
    from .output import table

    print(
        f"{len(rows)} wikis with published link datasets; fetch one with: "
        "wikisuggest datasets fetch WIKI",
        file=sys.stderr,
    )
    shown = [{**r, "size": _megabytes(r["size"])} for r in rows]
    print(table(shown, ["wiki", "base", "model_age", "size"]))
    return 0


def _path(args: argparse.Namespace) -> int:
    from ..datasets import cache
    from ..datasets.published import wiki_id

    wiki = wiki_id(args.wiki)
    current = cache.WikiCache(cache.cache_root(args.cache_dir), wiki).current()
    if current is None:
        raise DatasetError(
            f"{wiki} is not in the cache; fetch it with: wikisuggest datasets fetch {wiki}"
        )
    print(current.native)
    return 0


def _verify_one(wiki: str, snapshot: Any) -> str | None:
    """What is wrong with a complete snapshot, or ``None``."""
    from ..datasets import cache
    from ..engine import LinkEngine

    want = snapshot.manifest["native"].get("sha256")
    if not isinstance(want, str):
        return "its manifest does not say the native file's sha256 (native.sha256)"
    got = cache.sha256_file(snapshot.native)
    if got != want:
        return f"sha256 {got}, the manifest says {want}"
    try:
        with LinkEngine.open(snapshot.native, wiki, verify=True) as engine:
            sums = engine.info().checksums
    except WikisuggestError as err:
        return str(err)
    if sums != snapshot.checksums:
        return "its checksums are not the manifest's"
    return None


def _verify(args: argparse.Namespace) -> int:
    from ..datasets import cache
    from ..datasets.published import wiki_id

    root = cache.cache_root(args.cache_dir)
    wikis = [wiki_id(w) for w in args.wiki] or cache.known_wikis(root)
    bad = 0
    for wiki in wikis:
        store = cache.WikiCache(root, wiki)
        folders = (
            sorted(p for p in store.snapshots.iterdir() if not p.name.startswith("."))
            if store.snapshots.is_dir() and not store.snapshots.is_symlink()
            else []
        )
        if not folders:
            print(f"{wiki}: no snapshot")
        for folder in folders:
            snapshot = store.snapshot(folder.name)
            problem: str | None
            if snapshot is None:
                manifest = cache.read_json(folder / cache.MANIFEST)
                if not manifest:
                    problem = "its manifest is missing, empty or not a JSON object"
                else:
                    problem = "incomplete: its manifest does not describe a native file here"
            else:
                problem = _verify_one(wiki, snapshot)
            if problem:
                bad += 1
                print(f"{wiki} {folder.name}: damaged: {problem}", file=sys.stderr)
            else:
                print(f"{wiki} {folder.name}: ok")
    return 2 if bad else 0


def _prune(args: argparse.Namespace) -> int:
    from ..datasets import cache
    from ..datasets.published import wiki_id

    if args.keep < 0:
        raise argparse.ArgumentTypeError("--keep must be 0 or more")
    root = cache.cache_root(args.cache_dir)
    wikis = [wiki_id(w) for w in args.wiki] or cache.known_wikis(root)
    verb = "would remove" if args.dry_run else "removed"
    done = cache.Removal()
    for wiki in wikis:
        store = cache.WikiCache(root, wiki)
        if not store.dir.is_dir() and not store.dir.is_symlink():
            continue
        try:
            with store.lock():
                found = store.prune(keep=args.keep, partial=args.partial, dry_run=args.dry_run)
        except DatasetError as err:
            # One wiki's folder the cache cannot work in (a link, say): the others go on.
            print(f"{wiki}: left alone: {err}", file=sys.stderr)
            continue
        for path in found.removed:
            print(f"{wiki}: {verb} {path}")
        for path, why in found.left:
            print(f"{wiki}: left {path} ({why})", file=sys.stderr)
        done.extend(found)
    serve = root / "datasets" / "serve"
    if not args.wiki and serve.is_dir() and not serve.is_symlink():
        # Hard links for `wikisuggest serve --fetch`: made again when next needed.
        print(f"{verb} {serve}")
        if not args.dry_run:
            shutil.rmtree(serve, ignore_errors=True)
    print(f"{'would free' if args.dry_run else 'freed'} {done.freed / 1e6:.0f} MB")
    return 0


def _diff(args: argparse.Namespace) -> int:
    from ..datasets.diff import diff

    found = diff(
        args.wiki,
        args.dump,
        language_code=args.language,
        cache_dir=args.cache_dir,
        offline=True if args.offline else None,
        user_agent=args.user_agent,
        max_test_articles=args.max_test_articles,
    )
    if _format(args) == "json":
        json.dump(found.to_dict(), sys.stdout, indent=1, ensure_ascii=False)
        print()
    else:
        print(found.format())
    return 0


def _convert(args: argparse.Namespace) -> int:
    from ..datasets import convert

    path = convert(args.src_dir, args.wiki_id, args.out_dir)
    print(path)
    return 0


def _common(p: argparse.ArgumentParser, *, network: bool = True) -> None:
    add_cache_options(p, network=network)
    if network:
        p.add_argument(
            "--source",
            default="auto",
            help="'auto' (v2, else legacy), 'v2', 'legacy' or a mirror's URL (the bases' URLs: "
            "ANALYTICS_BASE_URL, ANALYTICS_BASE_URL_LEGACY)",
        )


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = commands.add_parser(
        "datasets",
        help="production's published datasets: fetch, list, path, verify, prune, diff",
        description="Production's link datasets for any published wiki, cached and kept fresh.",
    )
    sub = group.add_subparsers(dest="datasets_command", required=True)

    fetch = sub.add_parser("fetch", help="download, verify and convert; print the native file")
    fetch.add_argument("wiki", nargs="+", help="e.g. frwiki, fr or fr.wikipedia.org")
    _common(fetch)
    fetch.add_argument("--update", action="store_true", help="fetch a newer published version")
    fetch.add_argument(
        "--expect",
        action="append",
        metavar="DATASET=SHA256",
        help="pin a version, e.g. model=3f2a… (repeatable)",
    )
    fetch.add_argument(
        "--keep-sources",
        action="store_true",
        help="keep the published files (a new version then downloads only what changed)",
    )
    fetch.add_argument("--quiet", action="store_true", help="no sizes or progress bars")
    fetch.set_defaults(run=_fetch)
    describe(fetch, FETCH)

    listing = sub.add_parser(
        "list",
        help="cached wikis, their age, and whether newer is published; with --published, "
        "every wiki that can be fetched",
        description="The wikis in the cache (their snapshot, model age, and whether a newer "
        "version is published); with --published, every wiki with published datasets, its "
        "base, model date and size.",
    )
    listing.add_argument(
        "wiki", nargs="*", help="default: every cached wiki (every published one with --published)"
    )
    listing.add_argument(
        "--published",
        action="store_true",
        help="list what the published bases offer, not what the cache holds",
    )
    _common(listing)
    listing.add_argument("--format", choices=["json", "table"], default=None)
    listing.set_defaults(run=_list)
    describe(listing, FETCH)

    path = sub.add_parser("path", help="print the cached native file of a wiki (no network)")
    path.add_argument("wiki")
    _common(path, network=False)
    path.set_defaults(run=_path)
    describe(path, CACHE)

    verify = sub.add_parser("verify", help="check the cached snapshots against their manifests")
    verify.add_argument("wiki", nargs="*", help="default: every cached wiki")
    _common(verify, network=False)
    verify.set_defaults(run=_verify)
    describe(verify, CACHE)

    prune = sub.add_parser(
        "prune",
        help="remove snapshots other than the current ones, and what is not a snapshot",
        description="Removes the snapshots other than the current ones (--keep older ones), "
        "leftovers of interrupted fetches, the folders of wikis with nothing cached, and with "
        "--partial the downloads not yet converted. Only what the cache wrote is deleted; "
        "anything else is reported and left.",
    )
    prune.add_argument("wiki", nargs="*", help="default: every cached wiki")
    _common(prune, network=False)
    prune.add_argument("--keep", type=int, default=0, help="older snapshots to keep per wiki")
    prune.add_argument("--partial", action="store_true", help="remove unfinished downloads too")
    prune.add_argument("--dry-run", action="store_true", help="say what would be removed")
    prune.set_defaults(run=_prune)
    describe(prune, CACHE)

    diff = sub.add_parser(
        "diff",
        help="what a published dataset misses against a current dump; retrain? (needs [train])",
    )
    diff.add_argument("wiki")
    diff.add_argument("--dump", required=True, help="the wiki's pages-articles XML (.bz2 or not)")
    diff.add_argument("--language", help="language code (default: from the wiki id)")
    diff.add_argument("--max-test-articles", type=int, default=10_000)
    _common(diff)
    diff.add_argument("--format", choices=["json", "table"], default=None)
    diff.set_defaults(run=_diff)
    describe(diff, FETCH)

    convert = commands.add_parser(
        "convert", help="convert a published link dataset into the local engine's format"
    )
    convert.add_argument("src_dir", help="directory with lr_<wiki>_*.sql.gz and the model")
    convert.add_argument("wiki_id", help="e.g. enwiki")
    convert.add_argument("out_dir", help="where to write <wiki>.linkdata")
    convert.set_defaults(run=_convert)
