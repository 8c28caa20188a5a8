"""Command line: ``python -m wikisuggest <command>``."""

from __future__ import annotations

import argparse
import sys

from . import __version__


def _example(_: argparse.Namespace) -> int:
    """Show, offline, what the client checks before it sends anything."""
    import wikisuggest

    try:
        wikisuggest.Client("python-requests/2.31")
    except wikisuggest.ConfigurationError as err:
        print(f"Refused a User-Agent without operator contact:\n  {err}\n")
    client = wikisuggest.Client("ExampleTool/1.0 (https://example.org; operator@example.org)")
    print(f"A valid client: {client!r}")
    try:
        client.link_recommendations("wikipedia", "en", "Cat", threshold=1.5)
    except wikisuggest.InvalidParameter as err:
        print(f"Rejected before sending: {err}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    """Run the reference server until interrupted."""
    import wikisuggest

    try:
        wikisuggest.serve(
            host=args.host,
            port=args.port,
            datasets=args.datasets,
            pages=args.pages,
            translation=args.translation,
            clients=args.clients,
            seed=args.seed,
            access_token_ttl=args.token_ttl,
            rate_limit=args.rate_limit,
            anonymous_rate_limit=args.anonymous_rate_limit,
        )
    except wikisuggest.WikisuggestError as err:
        print(f"wikisuggest serve: {err}", file=sys.stderr)
        return 1
    return 0


def _add_serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve", help="run the reference server (link, translation and OAuth 2.0 routes)"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=8080, help="port; 0 picks a free one and prints it"
    )
    serve.add_argument("--datasets", metavar="DIR", help="one sub-folder of datasets per wiki")
    serve.add_argument(
        "--pages", metavar="DUMP_OR_DIR", help="MediaWiki XML dump (.xml, .bz2) or folder"
    )
    serve.add_argument("--translation", metavar="DIR", help="translation catalogs folder")
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
    serve.set_defaults(run=_serve)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wikisuggest", description=__doc__)
    parser.add_argument("--version", action="version", version=f"wikisuggest {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("example", help="a small offline example").set_defaults(run=_example)
    _add_serve(commands)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
