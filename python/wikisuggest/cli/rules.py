"""``wikisuggest rules …``: check a rule file, preview a change of rules over a dump, turn a
wiki's community configuration into a rule file, fill the P31 table, audit saved edits."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .environment import describe
from .options import add_link_options, add_user_agent

__all__ = ["add_parser"]


def _check(args: argparse.Namespace) -> int:
    from ..engine.rules import LinkRules

    rules = LinkRules.load(args.file)
    print(json.dumps(rules.to_dict(), ensure_ascii=False, indent=1))
    return 0


def _preview(args: argparse.Namespace) -> int:
    from ..engine.link_engine import LinkEngine
    from ..engine.preview import preview_rules

    engine = LinkEngine.open(args.datasets, args.wiki)
    report = preview_rules(
        args.dump,
        engine,
        args.rules,
        rules_before=args.rules_before,
        sample=args.sample,
        workers=args.workers,
        threshold=args.threshold,
        max_recommendations=args.max_recommendations,
    )
    if args.format == "json":
        text = json.dumps(report.to_dict(), ensure_ascii=False, indent=1)
    elif args.format == "html":
        text = report._repr_html_()
    else:
        text = report.format_table()
    if args.out:
        Path(args.out).write_text(text + "\n", "utf-8")
    else:
        print(text)
    return 0


def _wiki(url: str, user_agent: str | None) -> Any:
    from ..edits.wiki import Wiki

    return Wiki(url, user_agent)


def _community(args: argparse.Namespace) -> int:
    from ..edits.community import CommunityConfiguration

    if args.file:
        config = CommunityConfiguration.load(args.file)
    else:
        config = CommunityConfiguration.from_wiki(_wiki(args.api, args.user_agent))
    rules = config.rules()
    if args.out:
        rules.save(args.out)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(json.dumps(rules.to_dict(), ensure_ascii=False, indent=1))
    return 0


def _fill(args: argparse.Namespace) -> int:
    from ..edits.wikidata import fill_classes
    from ..engine.link_engine import LinkEngine

    engine = LinkEngine.open(args.datasets, args.wiki)
    done = fill_classes(
        engine,
        _wiki(args.api, args.user_agent),
        _wiki(args.wikidata, args.user_agent),
        args.out,
        pause=args.pause,
    )
    print(json.dumps(asdict(done)))
    return 0


def _audit(args: argparse.Namespace) -> int:
    from ..edits.audit import audit_edits
    from ..engine.link_engine import LinkEngine

    wiki = _wiki(args.api, args.user_agent)
    if args.save:
        if not args.username:
            print("wikisuggest rules audit: --save needs --username", file=sys.stderr)
            return 2
        import getpass

        wiki.login(args.username, getpass.getpass(f"bot password of {args.username}: "))
    queue = audit_edits(
        wiki,
        LinkEngine.open(args.datasets, args.wiki),
        args.revid or None,
        rules=args.rules,
        margin=args.margin,
        limit=args.limit,
    )
    for edit in queue.edits:
        for link in edit.links:
            flags = ",".join(f.kind for f in link.flags) or "ok"
            print(f"{edit.revid}\t{edit.title}\t{link.link_text}\t{link.target}\t{flags}")
    for edit in queue.flagged():
        result = edit.save(wiki, dry_run=not args.save)
        print(result.diff if not args.save else f"saved {edit.title}: {result.new_revid}")
    for revid, error in queue.errors.items():
        print(f"{revid}: {error}", file=sys.stderr)
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Adds ``wikisuggest rules`` and its subcommands."""
    rules = commands.add_parser("rules", help="never-link rules: check, preview, community, audit")
    sub = rules.add_subparsers(dest="rules_command", required=True)

    check = sub.add_parser("check", help="read a rule file and print it as the engine sees it")
    check.add_argument("file")
    check.set_defaults(run=_check)

    preview = sub.add_parser("preview", help="what a rule change does over a dump")
    preview.add_argument("--dump", required=True, help="pages-articles XML dump (.xml, .bz2)")
    preview.add_argument("--datasets", required=True, help="the wiki's dataset (file or folder)")
    preview.add_argument("--wiki", default="enwiki", help="wiki id (enwiki)")
    preview.add_argument("--rules", required=True, help="the new rule file")
    preview.add_argument("--rules-before", default=None, help="the old rule file (default: none)")
    preview.add_argument("--sample", type=int, default=None, help="only the first N articles")
    add_link_options(preview, every=False)
    preview.add_argument("--workers", type=int, default=None)
    preview.add_argument("--format", choices=["table", "json", "html"], default="table")
    preview.add_argument("--out", default=None, help="write the report here")
    preview.set_defaults(run=_preview)

    community = sub.add_parser(
        "community", help="a wiki's Add a Link community configuration as a rule file"
    )
    source = community.add_mutually_exclusive_group(required=True)
    source.add_argument("--api", help="the wiki's api.php")
    source.add_argument("--file", help="a local copy of its configuration page (JSON)")
    add_user_agent(community)
    community.add_argument("--out", default=None, help="rule file to write (.toml or .json)")
    community.set_defaults(run=_community)
    describe(community, ("WIKISUGGEST_USER_AGENT",))

    fill = sub.add_parser("fill-classes", help="the P31 table of a dataset's link targets")
    fill.add_argument("--datasets", required=True)
    fill.add_argument("--wiki", required=True)
    fill.add_argument("--api", required=True, help="the wiki's api.php")
    fill.add_argument("--wikidata", required=True, help="Wikidata's api.php")
    fill.add_argument("--out", required=True, help="the table (TSV), resumed when it exists")
    fill.add_argument("--pause", type=float, default=1.0, help="seconds between requests (1)")
    add_user_agent(fill)
    fill.set_defaults(run=_fill)
    describe(fill, ("WIKISUGGEST_USER_AGENT",))

    audit = sub.add_parser("audit", help="flag the links of saved Add a Link edits")
    audit.add_argument("--api", required=True, help="the wiki's api.php")
    audit.add_argument("--datasets", required=True)
    audit.add_argument("--wiki", required=True)
    audit.add_argument("--rules", default=None)
    audit.add_argument("--revid", type=int, action="append", help="an edit (repeatable)")
    audit.add_argument("--limit", type=int, default=50, help="recent tagged edits (50)")
    audit.add_argument("--margin", type=float, default=0.1, help="homonym margin (0.1)")
    audit.add_argument("--save", action="store_true", help="save the fixes (default: dry run)")
    audit.add_argument("--username", default=None, help="bot password user (User@app)")
    add_user_agent(audit)
    audit.set_defaults(run=_audit)
    describe(audit, ("WIKISUGGEST_USER_AGENT",))
