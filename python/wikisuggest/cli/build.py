"""``wikisuggest build``: a wiki's link-engine datasets from its XML dump."""

from __future__ import annotations

import argparse
import sys

from .environment import CACHE, describe
from .options import given, keywords


def _log(message: str) -> None:
    print(message, file=sys.stderr)


def _build(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..datasets.build import build, format_report, require_training_deps, write_report

    # Before the scan (minutes on a large dump), not after it.
    require_training_deps()

    report = build(args.dump, args.wiki, args.out, **given(args, keywords(build)), log=_log)
    write_report(report, Path(args.out) / f"{args.wiki}.build-report.json")
    print(format_report(report))
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    build = commands.add_parser(
        "build", help="build a wiki's link-engine datasets from its XML dump (needs [train])"
    )
    build.add_argument("dump", help="pages-articles XML dump, optionally .bz2")
    build.add_argument("--wiki", required=True, help="wiki id, e.g. enwiki")
    build.add_argument("--out", required=True, help="output directory")
    build.add_argument(
        "--language",
        dest="language_code",
        default=None,
        help="language code for tokenization (default: the wiki's, e.g. bat_smg for bat_smgwiki)",
    )
    build.add_argument(
        "--vectors", default="linkgraph", help="title vectors: linkgraph, glove, or a text file"
    )
    build.add_argument("--link-probability", dest="min_link_probability", type=float, default=0.065)
    build.add_argument("--min-link-count", type=int, default=2)
    build.add_argument(
        "--keep-missing-targets",
        action="store_true",
        help="treat link targets absent from the dump as articles (for dump excerpts)",
    )
    build.add_argument(
        "--holdout", dest="holdout_fraction", type=float, default=0.5, help="share held out"
    )
    build.add_argument("--max-train-articles", type=int, default=200_000)
    build.add_argument("--max-test-articles", type=int, default=10_000)
    build.add_argument(
        "--no-backtest", dest="backtest", action="store_false", help="skip the held-out evaluation"
    )
    build.add_argument(
        "--strict-backtest",
        action="store_true",
        help="leave the held-out articles out of the anchors and embeddings of the evaluated build",
    )
    build.add_argument("--seed", type=int, default=7)
    build.set_defaults(run=_build)
    # The GloVe vectors are kept in the cache.
    describe(build, CACHE)
