"""The settings the commands read from the environment, each named once with what it sets.
Every command lists those it reads at the end of its ``--help``; the documentation names
the same variables (the suite checks both)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

__all__ = ["CACHE", "CLIENT", "FETCH", "TOKEN", "VARIABLES", "describe"]

#: Every variable a command reads, and what it sets.
VARIABLES: dict[str, str] = {
    "WIKISUGGEST_USER_AGENT": "User-Agent of every request: <app>/<version> (<contact>)",
    "WIKISUGGEST_BASE_URL": "where the recommendation services live",
    "WIKISUGGEST_AUTH_URL": "the OAuth 2.0 server",
    "WIKISUGGEST_TOKEN": "a personal API token",
    "WIKISUGGEST_CLIENT_ID": "OAuth 2.0 client id (client credentials)",
    "WIKISUGGEST_CLIENT_SECRET": "OAuth 2.0 client secret (never on the command line)",
    "WIKISUGGEST_CACHE_DIR": "the cache folder (default: the platform's cache folder)",
    "WIKISUGGEST_OFFLINE": "1: never touch the network, use the cache",
    "ANALYTICS_BASE_URL": "URL of the published link datasets (v2 base), e.g. a mirror",
    "ANALYTICS_BASE_URL_LEGACY": "URL of the legacy base of the published link datasets",
}

#: What the client commands read.
CLIENT = (
    "WIKISUGGEST_USER_AGENT",
    "WIKISUGGEST_BASE_URL",
    "WIKISUGGEST_AUTH_URL",
    "WIKISUGGEST_TOKEN",
    "WIKISUGGEST_CLIENT_ID",
    "WIKISUGGEST_CLIENT_SECRET",
)
#: What ``wikisuggest token`` reads.
TOKEN = (
    "WIKISUGGEST_USER_AGENT",
    "WIKISUGGEST_AUTH_URL",
    "WIKISUGGEST_CLIENT_ID",
    "WIKISUGGEST_CLIENT_SECRET",
)
#: What a command that fetches published link datasets reads.
FETCH = (
    "ANALYTICS_BASE_URL",
    "ANALYTICS_BASE_URL_LEGACY",
    "WIKISUGGEST_CACHE_DIR",
    "WIKISUGGEST_OFFLINE",
    "WIKISUGGEST_USER_AGENT",
)
#: What a command that only reads the cache reads.
CACHE = ("WIKISUGGEST_CACHE_DIR",)


def describe(parser: argparse.ArgumentParser, names: Iterable[str]) -> None:
    """Ends ``parser``'s help with the environment variables ``names``, one a line."""
    lines = ["environment:", *(f"  {n:<26} {VARIABLES[n]}" for n in names)]
    parser.epilog = "\n".join([*([parser.epilog] if parser.epilog else []), *lines])
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
