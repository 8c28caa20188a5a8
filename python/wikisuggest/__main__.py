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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wikisuggest", description=__doc__)
    parser.add_argument("--version", action="version", version=f"wikisuggest {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("example", help="a small offline example").set_defaults(run=_example)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
