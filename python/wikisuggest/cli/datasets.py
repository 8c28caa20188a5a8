"""``wikisuggest convert``: the engine's datasets from the command line."""

from __future__ import annotations

import argparse


def _convert(args: argparse.Namespace) -> int:
    from ..datasets import convert

    path = convert(args.src_dir, args.wiki_id, args.out_dir)
    print(path)
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    convert = commands.add_parser(
        "convert", help="convert a published link dataset into the local engine's format"
    )
    convert.add_argument("src_dir", help="directory with lr_<wiki>_*.sql.gz and the model")
    convert.add_argument("wiki_id", help="e.g. enwiki")
    convert.add_argument("out_dir", help="where to write <wiki>.linkdata")
    convert.set_defaults(run=_convert)
