"""Where a command's options meet the function it runs: by name.

Each option's destination is the keyword argument it sets (``--max`` is stored as
``max_recommendations``), so a command passes what the function takes in one expression
instead of a line per option, and an option renamed in the API cannot be forgotten here.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .._native import LINK_DEFAULTS

__all__ = ["add_cache_options", "add_link_options", "add_user_agent", "given", "keys", "keywords"]


def add_link_options(parser: argparse.ArgumentParser, *, every: bool = True) -> None:
    """The options every link recommendation takes, with their one set of defaults:
    ``--threshold`` and ``--max``, and with ``every`` ``--language-code`` and
    ``--exclude-section`` too."""
    if every:
        parser.add_argument("--language-code", default=LINK_DEFAULTS["language_code"])
    parser.add_argument(
        "--threshold",
        type=float,
        default=LINK_DEFAULTS["threshold"],
        help="lowest score kept, 0 to 1 (%(default)s)",
    )
    parser.add_argument(
        "--max",
        dest="max_recommendations",
        type=int,
        default=LINK_DEFAULTS["max_recommendations"],
        help="links per page, 0: no limit (%(default)s)",
    )
    if every:
        parser.add_argument(
            "--exclude-section", dest="sections_to_exclude", action="append", help="repeatable"
        )


def add_cache_options(parser: argparse.ArgumentParser, *, network: bool = True) -> None:
    """The options of the commands that keep published files in the cache (``datasets``,
    ``translation``): ``--cache-dir``, and for those that may download ``--offline`` and
    ``--user-agent`` (these downloads fall back to wikisuggest's own User-Agent)."""
    parser.add_argument(
        "--cache-dir",
        type=Path,
        help="cache root (default: WIKISUGGEST_CACHE_DIR, else the platform's cache folder)",
    )
    if network:
        parser.add_argument(
            "--offline",
            action="store_true",
            help="never touch the network (also: WIKISUGGEST_OFFLINE=1)",
        )
        add_user_agent(parser, own_fallback=True)


def add_user_agent(parser: argparse.ArgumentParser, *, own_fallback: bool = False) -> None:
    """``--user-agent``: the option, else ``WIKISUGGEST_USER_AGENT``. Without either, a
    command that calls a wiki or the service stops with the policy's error; downloads of
    published files (``own_fallback``) send wikisuggest's own."""
    fallback = ", else wikisuggest's" if own_fallback else ""
    parser.add_argument(
        "--user-agent",
        default=None,
        help=f"<app>/<version> (<contact>); default: WIKISUGGEST_USER_AGENT{fallback}",
    )


def keywords(function: Callable[..., Any]) -> frozenset[str]:
    """The names of ``function``'s keyword-only parameters."""
    parameters = inspect.signature(function).parameters.values()
    return frozenset(p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY)


def keys(typed_dict: Any) -> frozenset[str]:
    """The keys of a ``TypedDict`` (the ``**options`` an operation takes)."""
    return frozenset(typed_dict.__required_keys__ | typed_dict.__optional_keys__)


def given(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The parsed value of every option among ``names`` that the command defines."""
    return {name: getattr(args, name) for name in sorted(names) if hasattr(args, name)}
