"""``wikisuggest recommend-dump``: link recommendations for every article of an XML dump, to
Parquet."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys

from ..engine.dump import (
    DEFAULT_MAX_PAGE_BYTES,
    DEFAULT_TIME_BUDGET,
    format_summary,
    recommend_dump,
)
from ..engine.options import PassOptions
from .options import add_link_options, given, keys, keywords


def _bar_wanted(disabled: bool) -> bool:
    """The command line shows a bar on a terminal when tqdm is installed."""
    return not disabled and sys.stderr.isatty() and importlib.util.find_spec("tqdm") is not None


def _command(args: argparse.Namespace) -> int:
    try:
        options = given(args, keywords(recommend_dump) | keys(PassOptions))
        if args.time_budget <= 0:
            options["time_budget"] = None
        options["progress"] = _bar_wanted(args.no_progress)
        summary = recommend_dump(args.dump, args.datasets, args.wiki, args.out, **options)
    except KeyboardInterrupt:
        print(
            f"wikisuggest recommend-dump: interrupted; {args.out} keeps every finished part, "
            "run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    print(format_summary(summary), file=sys.stderr)
    print(json.dumps(summary.to_dict()))
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = commands.add_parser(
        "recommend-dump",
        help="link recommendations for every article of an XML dump, to Parquet (needs pyarrow)",
    )
    command.add_argument(
        "dump", help="pages-articles XML dump (.xml, .xml.bz2 multistream included, .xml.gz)"
    )
    command.add_argument("--datasets", required=True, help="the wiki's dataset (file or folder)")
    command.add_argument("--wiki", required=True, help="wiki id, e.g. enwiki")
    command.add_argument("--out", required=True, help="output Parquet dataset (a directory)")
    add_link_options(command)
    command.add_argument("--rules", default=None, help="never-link rule file (TOML or JSON)")
    command.add_argument("--workers", type=int, default=None, help="threads (default: all cores)")
    command.add_argument("--pages-per-part", type=int, default=5000, help="articles per file")
    command.add_argument(
        "--time-budget",
        type=float,
        default=DEFAULT_TIME_BUDGET,
        help="seconds per article; an article over it is an error row (0: no budget; "
        f"default {DEFAULT_TIME_BUDGET:g})",
    )
    command.add_argument(
        "--max-page-bytes",
        type=int,
        default=DEFAULT_MAX_PAGE_BYTES,
        help="largest <page> of the dump, in bytes of XML; a larger one is an error row "
        f"(default {DEFAULT_MAX_PAGE_BYTES})",
    )
    # No longer used: the dump is read ahead of the engine by a bounded window.
    command.add_argument("--batch-pages", type=int, default=None, help=argparse.SUPPRESS)
    command.add_argument("--overwrite", action="store_true", help="discard an earlier run's output")
    command.add_argument("--no-progress", action="store_true", help="no progress bar")
    command.set_defaults(run=_command)
