"""Every setting a command reads from the environment is named at the end of its ``--help``
and in the documentation: the variables the package reads are the table's, every one is
listed by the commands that read it, and the docs name each."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

from support.paths import REPO

from wikisuggest.cli import parser
from wikisuggest.cli.environment import CACHE, FETCH, VARIABLES

PACKAGE = REPO / "python" / "wikisuggest"
#: A variable named in code: a quoted literal.
NAME = re.compile(r"""["']((?:WIKISUGGEST|ANALYTICS)_[A-Z_]+)["']""")


def names_in_code() -> set[str]:
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "cli" / "environment.py":
            continue
        found |= set(NAME.findall(path.read_text("utf-8")))
    return found


def commands() -> dict[str, argparse.ArgumentParser]:
    """Every leaf command, by its words (``datasets fetch``)."""
    out: dict[str, argparse.ArgumentParser] = {}

    def walk(words: str, p: argparse.ArgumentParser) -> None:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out[words.strip()] = p
        for action in subs:
            for name, child in action.choices.items():
                walk(f"{words} {name}", child)

    walk("", parser())
    return out


def listed(p: argparse.ArgumentParser) -> list[str]:
    """The variables the help's ``environment:`` part names."""
    text = p.format_help()
    if "environment:" not in text:
        return []
    tail = text.split("environment:", 1)[1]
    return [line.split()[0] for line in tail.splitlines() if line.strip()]


def test_the_table_is_what_the_package_reads() -> None:
    assert names_in_code() == set(VARIABLES)


def test_each_command_lists_what_it_reads() -> None:
    found = {words: listed(p) for words, p in commands().items()}
    for words, names in found.items():
        assert set(names) <= set(VARIABLES), words
    # Every variable is named by a command that reads it.
    assert set().union(*map(set, found.values())) == set(VARIABLES)
    for words in ("datasets fetch", "datasets list", "datasets diff", "serve"):
        assert found[words] == list(FETCH), words
    for words in ("datasets path", "datasets verify", "datasets prune", "build"):
        assert found[words] == list(CACHE), words
    for words in ("links", "translate"):
        assert "WIKISUGGEST_TOKEN" in found[words]
    assert "WIKISUGGEST_CLIENT_SECRET" in found["token"]


def test_the_mirror_settings_are_in_fetch_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "datasets", "fetch", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for name in ("ANALYTICS_BASE_URL", "ANALYTICS_BASE_URL_LEGACY", "WIKISUGGEST_OFFLINE"):
        assert re.search(rf"^  {name} ", out, re.M), out


def test_the_docs_name_every_variable() -> None:
    docs = "\n".join(p.read_text("utf-8") for p in [REPO / "README.md", *REPO.glob("docs/*.md")])
    assert [n for n in VARIABLES if n not in docs] == []
