"""Command line: ``wikisuggest <command>`` (or ``python -m wikisuggest <command>``).

Commands print JSON (``--format json``, the default when the output is not a terminal) or a
table. The User-Agent comes from ``--user-agent`` or ``WIKISUGGEST_USER_AGENT``; a token from
``WIKISUGGEST_TOKEN``. Each group of subcommands lives in a module of this package with an
``add_parser(commands)`` that registers them.
"""

from __future__ import annotations

import argparse
import os
import sys

from .._native import __version__
from ..errors import WikisuggestError
from . import apply, build, client, datasets, demo, dump, rules, serve, token, translation

__all__ = ["main", "parser"]

#: The modules of the subcommands, in the order ``--help`` lists them.
_COMMANDS = (demo, datasets, translation, client, token, build, serve, dump, apply, rules)

#: What ``wikisuggest --help`` says above the commands: what the tool is for a user.
DESCRIPTION = """\
Wikimedia's link recommendations ("add a link") and translation recommendations, from the
service or computed locally from production's datasets.

Try it offline first: wikisuggest demo. Commands print JSON (--format json, the default when
the output is not a terminal) or a table (--format table). The User-Agent, which Wikimedia
asks to name your tool and how to reach you, comes from --user-agent or
WIKISUGGEST_USER_AGENT; an access token from WIKISUGGEST_TOKEN. 'wikisuggest COMMAND --help'
describes a command and the environment it reads.
"""


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="wikisuggest",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    root.add_argument("--version", action="version", version=f"wikisuggest {__version__}")
    root.add_argument(
        "--debug", action="store_true", help="show the traceback of an error, not one line"
    )
    commands = root.add_subparsers(dest="command", required=True)
    for command in _COMMANDS:
        command.add_parser(commands)
    return root


def main(argv: list[str] | None = None) -> int:
    """Run a command. A failure is one line on stderr and an exit status (2 for the library's
    own errors, 1 for any other); ``--debug`` shows the traceback instead."""
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except BrokenPipeError:
        # The reader went away (``| head``): nothing left to say, and nobody to say it to.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("wikisuggest: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if args.debug:
            raise
        print(f"wikisuggest {args.command}: {_one_line(err)}", file=sys.stderr)
        return 2 if isinstance(err, WikisuggestError) else 1


def _one_line(err: BaseException) -> str:
    """The error as one line: its type and message; an error nobody anticipated says how to
    see more. A missing optional dependency's message names its ``pip install`` line."""
    message = " ".join(str(err).split()) or "(no message)"
    if isinstance(err, ImportError):
        return message
    expected = isinstance(err, WikisuggestError | OSError | ValueError)
    hint = "" if expected else " (unexpected; run with --debug for the traceback)"
    return f"{type(err).__name__}: {message}{hint}"
