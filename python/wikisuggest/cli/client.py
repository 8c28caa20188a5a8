"""``wikisuggest links`` and ``wikisuggest translate``: the services, from the command line.

The User-Agent comes from ``--user-agent`` or ``WIKISUGGEST_USER_AGENT``; the base URL and
the credentials from the environment, as the client reads them (``WIKISUGGEST_TOKEN``, or
``WIKISUGGEST_CLIENT_ID`` and ``WIKISUGGEST_CLIENT_SECRET``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._native import TRANSLATION_DEFAULTS
from .environment import CLIENT, describe
from .options import add_link_options, add_user_agent, given, keys
from .output import emit


def _client(args: argparse.Namespace) -> Any:
    from ..client import Client

    # The environment is read by the client, by its one rule (explicit values win).
    options: dict[str, Any] = {"base_url": args.base_url}
    if args.concurrency is not None:
        options["max_concurrency"] = args.concurrency
    return Client(args.user_agent, **options)


def _links(args: argparse.Namespace) -> int:
    from ..client import LinkOptions

    pages = [(args.domain, title) for title in args.titles]
    options = given(args, keys(LinkOptions) | {"project", "revision"})
    items = _client(args).link_recommendations_many(pages, **options)

    def rows(item: Any) -> list[dict[str, Any]]:
        return [{"page": item.result.page_title, **link.to_dict()} for link in item.result.links]

    columns = ["page", "link_text", "link_target", "score", "wikitext_offset"]
    return emit(args, items, columns, rows)


def _translate(args: argparse.Namespace) -> int:
    from ..client import TranslationOptions

    options = given(args, keys(TranslationOptions))
    items = _client(args).translation_recommendations_many([(args.source, args.target)], **options)

    def rows(item: Any) -> list[dict[str, Any]]:
        return [rec.to_dict() for rec in item.result]

    columns = ["title", "wikidata_id", "langlinks_count", "pageviews", "rank"]
    return emit(args, items, columns, rows)


def add_client_options(parser: argparse.ArgumentParser) -> None:
    from ..client import DEFAULT_BASE_URL

    parser.add_argument(
        "--base-url",
        default=None,
        help=f"where the services live (default: WIKISUGGEST_BASE_URL, else {DEFAULT_BASE_URL})",
    )
    add_user_agent(parser)
    parser.add_argument("--concurrency", type=int, default=None, help="requests in flight")
    parser.add_argument(
        "--format",
        choices=["json", "table"],
        default="table" if sys.stdout.isatty() else "json",
    )


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    links = commands.add_parser("links", help="link recommendations for pages (GET)")
    links.add_argument("domain", help="wiki subdomain, e.g. en")
    links.add_argument("titles", nargs="+", help="page titles")
    links.add_argument("--project", default="wikipedia")
    links.add_argument("--revision", type=int, default=None)
    add_link_options(links)
    add_client_options(links)
    links.set_defaults(run=_links)
    describe(links, CLIENT)

    translate = commands.add_parser("translate", help="articles to translate from SOURCE to TARGET")
    translate.add_argument("source")
    translate.add_argument("target")
    translate.add_argument("--count", type=int, default=TRANSLATION_DEFAULTS["count"])
    translate.add_argument("--seed", action="append", default=None, help="repeatable")
    translate.add_argument("--topic", action="append", default=None, help="repeatable")
    translate.add_argument(
        "--pageviews", dest="include_pageviews", action="store_true", help="with pageviews"
    )
    translate.add_argument(
        "--rank-method",
        choices=["default", "sitelinks"],
        default=TRANSLATION_DEFAULTS["rank_method"],
    )
    add_client_options(translate)
    translate.set_defaults(run=_translate)
    describe(translate, CLIENT)
