"""``wikisuggest serve``: the reference server (link, translation and OAuth 2.0 routes)."""

from __future__ import annotations

import argparse
import sys

from .environment import FETCH, describe


def _serve(args: argparse.Namespace) -> int:
    """Run the reference server until interrupted."""
    from ..errors import WikisuggestError
    from ..server import serve

    datasets = args.datasets
    try:
        if args.fetch:
            if datasets:
                print("wikisuggest serve: give --datasets or --fetch, not both", file=sys.stderr)
                return 2
            from ..datasets.fetch import serving_folder

            datasets = serving_folder(args.fetch)
        serve(
            host=args.host,
            port=args.port,
            datasets=datasets,
            pages=args.pages,
            wiki_apis=dict(spec.split("=", 1) for spec in args.wiki_api or ()),
            rules=dict(spec.split("=", 1) for spec in args.rules or ()),
            translation=_translation(args.translation_catalog),
            translation_shape=args.translation_shape,
            clients=args.clients,
            seed=args.seed,
            access_token_ttl=args.token_ttl,
            rate_limit=args.rate_limit,
            anonymous_rate_limit=args.anonymous_rate_limit,
            max_body_bytes=args.max_body_bytes,
            request_timeout=args.request_timeout,
            threads=args.threads,
        )
    except WikisuggestError as err:
        print(f"wikisuggest serve: {err}", file=sys.stderr)
        return 1
    return 0


def _translation(specs: list[str] | None) -> list[tuple[str | None, str]] | None:
    """``--translation-catalog`` values: ``WIKI=PATH``, a catalog folder (or a folder of
    them), or a wiki id whose cached catalog is opened (fetched at start-up if missing)."""
    if not specs:
        return None
    from pathlib import Path

    from ..datasets.published import wiki_id
    from ..translation.fetch import fetch

    out: list[tuple[str | None, str]] = []
    for spec in specs:
        wiki, sep, path = spec.partition("=")
        if sep:
            out.append((wiki_id(wiki), path))
        elif Path(spec).exists():
            out.append((None, spec))
        else:
            wiki = wiki_id(spec)
            out.append((wiki, str(fetch(wiki))))
    return out


def _wiki_api(value: str) -> str:
    if "=" not in value or not value.split("=", 1)[0]:
        raise argparse.ArgumentTypeError(f"expected WIKI_ID=API_URL, got {value!r}")
    return value


def _wiki_rules(value: str) -> str:
    if "=" not in value or not value.split("=", 1)[0]:
        raise argparse.ArgumentTypeError(f"expected WIKI_ID=RULE_FILE, got {value!r}")
    return value


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve", help="run the reference server (link, translation and OAuth 2.0 routes)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=8080, help="port; 0 picks a free one and prints it"
    )
    serve.add_argument("--datasets", metavar="DIR", help="one sub-folder of datasets per wiki")
    serve.add_argument(
        "--fetch",
        action="append",
        metavar="WIKI",
        help="serve production's published datasets of WIKI, fetched (or cached) at start-up "
        "(repeatable; see 'wikisuggest datasets')",
    )
    serve.add_argument(
        "--pages", metavar="DUMP_OR_DIR", help="MediaWiki XML dump (.xml, .bz2) or folder"
    )
    serve.add_argument(
        "--wiki-api",
        action="append",
        metavar="WIKI_ID=API_URL",
        type=_wiki_api,
        help="fetch GET pages of WIKI_ID from this MediaWiki api.php (repeatable)",
    )
    serve.add_argument(
        "--rules",
        action="append",
        metavar="WIKI_ID=RULE_FILE",
        type=_wiki_rules,
        help="never-link rules (TOML or JSON) applied to WIKI_ID's requests (repeatable)",
    )
    serve.add_argument(
        "--translation-catalog",
        "--translation",
        action="append",
        metavar="WIKI=DIR|DIR|WIKI",
        help="a translation catalog (WIKI=DIR), a folder of catalogs, or a wiki id whose "
        "cached catalog is opened, fetched at start-up when missing (repeatable; see "
        "'wikisuggest translation')",
    )
    serve.add_argument(
        "--translation-shape",
        choices=["array", "envelope"],
        default="array",
        help="translation answers: the contract's array, or today's envelope (array)",
    )
    serve.add_argument("--clients", metavar="FILE", help="OAuth clients (TOML)")
    serve.add_argument("--seed", type=int, help="seed of shuffled translation results")
    serve.add_argument(
        "--token-ttl", type=float, default=14400.0, help="access token lifetime, seconds"
    )
    serve.add_argument("--rate-limit", type=int, default=200, help="requests per minute per app")
    serve.add_argument(
        "--anonymous-rate-limit",
        type=int,
        default=200,
        help="requests per minute per anonymous User-Agent",
    )
    serve.add_argument(
        "--max-body-bytes", type=int, default=4 * 1024 * 1024, help="largest request body"
    )
    serve.add_argument(
        "--request-timeout", type=float, default=30.0, help="seconds before a request gets 408"
    )
    serve.add_argument("--threads", type=int, default=2, help="server worker threads")
    serve.set_defaults(run=_serve)
    # --fetch reads the fetcher's settings.
    describe(serve, FETCH)
