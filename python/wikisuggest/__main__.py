"""Command line: ``wikisuggest <command>`` (or ``python -m wikisuggest <command>``).

Commands print JSON (``--format json``, the default when the output is not a terminal) or a
table. The User-Agent comes from ``--user-agent`` or ``WIKISUGGEST_USER_AGENT``; a token from
``WIKISUGGEST_TOKEN``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__, _apply_cli


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


def _demo(args: argparse.Namespace) -> int:
    """Recommend links, offline, for articles shipped with the package."""
    from .engine import LinkEngine, demo_articles

    engine = LinkEngine.default()
    articles = demo_articles()
    chosen = args.articles or sorted(articles)
    unknown = [a for a in chosen if a not in articles]
    if unknown:
        print(f"unknown article(s): {', '.join(unknown)}; shipped: {', '.join(sorted(articles))}")
        return 2
    info = engine.info()
    print(f"Local link engine, {info.wiki_id} sample dataset ({info.anchors:,} anchors)\n")
    for title in chosen:
        wikitext = articles[title]
        result = engine.recommend(
            wikitext, title, threshold=args.threshold, max_recommendations=args.max
        )
        print(f"{result.page_title}: {result.links_count} links in {len(wikitext):,} characters")
        for link in result.links:
            context = f"{link.context_before}[[{link.link_text}]]{link.context_after}"
            context = context.replace("\n", " ")
            print(
                f"  {link.link_text!r} -> {link.link_target!r}  "
                f"score {link.score:.3f}  at {link.wikitext_offset}  …{context}…"
            )
        print()
    return 0


def _convert(args: argparse.Namespace) -> int:
    from .datasets import convert

    path = convert(args.src_dir, args.wiki_id, args.out_dir)
    print(path)
    return 0


def _client(args: argparse.Namespace) -> Any:
    import wikisuggest

    options: dict[str, Any] = {"base_url": args.base_url}
    if args.concurrency is not None:
        options["max_concurrency"] = args.concurrency
    token = os.environ.get("WIKISUGGEST_TOKEN")
    if token:
        options["auth"] = token
    return wikisuggest.Client(args.user_agent, **options)


def _table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    cells = [[("" if row.get(c) is None else str(row.get(c))) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)


def _emit(args: argparse.Namespace, items: Any, columns: Sequence[str], rows_of: Any) -> int:
    """Print batch items as JSON or a table; the exit status is 1 when any item failed."""
    failed = 0
    if args.format == "json":
        out = []
        for item in items:
            entry: dict[str, Any] = {"input": item.input}
            if item.ok:
                result = item.result
                entry["result"] = (
                    [r.to_dict() for r in result] if isinstance(result, list) else result.to_dict()
                )
            else:
                failed += 1
                entry["error"] = {"type": type(item.error).__name__, "message": str(item.error)}
            out.append(entry)
        json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
        print()
    else:
        rows: list[dict[str, Any]] = []
        for item in items:
            if item.ok:
                rows.extend(rows_of(item))
            else:
                failed += 1
                print(f"{item.input}: {type(item.error).__name__}: {item.error}", file=sys.stderr)
        print(_table(rows, columns))
    return 1 if failed else 0


def _links(args: argparse.Namespace) -> int:
    items = _client(args).link_recommendations_many(
        [(args.domain, title) for title in args.titles],
        project=args.project,
        language_code=args.language_code,
        revision=args.revision,
        threshold=args.threshold,
        sections_to_exclude=args.exclude_section,
        max_recommendations=args.max,
    )

    def rows(item: Any) -> list[dict[str, Any]]:
        return [{"page": item.result.page_title, **link.to_dict()} for link in item.result.links]

    columns = ["page", "link_text", "link_target", "score", "wikitext_offset"]
    return _emit(args, items, columns, rows)


def _translate(args: argparse.Namespace) -> int:
    items = _client(args).translation_recommendations_many(
        [(args.source, args.target)],
        count=args.count,
        seed=args.seed,
        topic=args.topic,
        include_pageviews=args.pageviews,
        rank_method=args.rank_method,
    )

    def rows(item: Any) -> list[dict[str, Any]]:
        return [rec.to_dict() for rec in item.result]

    columns = ["title", "wikidata_id", "langlinks_count", "pageviews", "rank"]
    return _emit(args, items, columns, rows)


def _build(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .build import _require_training_deps, build, format_report, write_report

    # Before the scan (minutes on a large dump), not after it.
    _require_training_deps()

    report = build(
        args.dump,
        args.wiki,
        args.out,
        language_code=args.language,
        vectors=args.vectors,
        min_link_probability=args.link_probability,
        min_link_count=args.min_link_count,
        keep_missing_targets=args.keep_missing_targets,
        holdout_fraction=args.holdout,
        max_train_articles=args.max_train_articles,
        max_test_articles=args.max_test_articles,
        backtest=not args.no_backtest,
        strict_backtest=args.strict_backtest,
        seed=args.seed,
        log=lambda message: print(message, file=sys.stderr),
    )
    write_report(report, Path(args.out) / f"{args.wiki}.build-report.json")
    print(format_report(report))
    return 0


def _token(args: argparse.Namespace) -> int:
    """Request an access token with client credentials (the secret comes from the
    environment, never the command line, where other users could read it)."""
    if not args.client_id:
        args.usage.error("--client-id is required (or set WIKISUGGEST_CLIENT_ID)")
    secret = os.environ.get("WIKISUGGEST_CLIENT_SECRET")
    if not secret:
        print("wikisuggest token: set WIKISUGGEST_CLIENT_SECRET", file=sys.stderr)
        return 2
    from .oauth import TokenManager

    manager = TokenManager.client_credentials(
        args.client_id, secret, auth_url=args.auth_url, user_agent=args.user_agent
    )
    token = manager.token()
    info: dict[str, Any] = {
        "token_type": token.token_type,
        "expires_in": token.expires_in,
        "expires_at": None if token.expires_at is None else token.expires_at.isoformat(),
    }
    if args.show_token:
        info["access_token"] = token.access_token
    if args.format == "json":
        json.dump(info, sys.stdout, indent=1)
        print()
    else:
        print(_table([info], list(info)))
    return 0


def _add_client_options(parser: argparse.ArgumentParser) -> None:
    from .client import DEFAULT_BASE_URL

    parser.add_argument(
        "--base-url", default=os.environ.get("WIKISUGGEST_BASE_URL", DEFAULT_BASE_URL)
    )
    parser.add_argument(
        "--user-agent",
        default=None,
        help="<app>/<version> (<contact>); default: $WIKISUGGEST_USER_AGENT",
    )
    parser.add_argument("--concurrency", type=int, default=None, help="requests in flight")
    parser.add_argument(
        "--format",
        choices=["json", "table"],
        default="table" if sys.stdout.isatty() else "json",
    )


def _serve(args: argparse.Namespace) -> int:
    """Run the reference server until interrupted."""
    import wikisuggest

    try:
        wikisuggest.serve(
            host=args.host,
            port=args.port,
            datasets=args.datasets,
            pages=args.pages,
            wiki_apis=dict(spec.split("=", 1) for spec in args.wiki_api or ()),
            rules=dict(spec.split("=", 1) for spec in args.rules or ()),
            translation=args.translation,
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
    except wikisuggest.WikisuggestError as err:
        print(f"wikisuggest serve: {err}", file=sys.stderr)
        return 1
    return 0


def _wiki_api(value: str) -> str:
    if "=" not in value or not value.split("=", 1)[0]:
        raise argparse.ArgumentTypeError(f"expected WIKI_ID=API_URL, got {value!r}")
    return value


def _wiki_rules(value: str) -> str:
    if "=" not in value or not value.split("=", 1)[0]:
        raise argparse.ArgumentTypeError(f"expected WIKI_ID=RULE_FILE, got {value!r}")
    return value


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
    serve.add_argument("--translation", metavar="DIR", help="translation catalogs folder")
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


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="wikisuggest", description=__doc__)
    root.add_argument("--version", action="version", version=f"wikisuggest {__version__}")
    root.add_argument(
        "--debug", action="store_true", help="show the traceback of an error, not one line"
    )
    commands = root.add_subparsers(dest="command", required=True)

    commands.add_parser("example", help="a small offline example").set_defaults(run=_example)

    demo = commands.add_parser(
        "demo", help="link recommendations for a shipped article, computed offline"
    )
    demo.add_argument("articles", nargs="*", help="titles of shipped articles (default: all)")
    demo.add_argument("--threshold", type=float, default=0.5)
    demo.add_argument("--max", type=int, default=15, help="max recommendations (0: no limit)")
    demo.set_defaults(run=_demo)

    convert = commands.add_parser(
        "convert", help="convert a published link dataset into the local engine's format"
    )
    convert.add_argument("src_dir", help="directory with lr_<wiki>_*.sql.gz and the model")
    convert.add_argument("wiki_id", help="e.g. enwiki")
    convert.add_argument("out_dir", help="where to write <wiki>.linkdata")
    convert.set_defaults(run=_convert)

    links = commands.add_parser("links", help="link recommendations for pages (GET)")
    links.add_argument("domain", help="wiki subdomain, e.g. en")
    links.add_argument("titles", nargs="+", help="page titles")
    links.add_argument("--project", default="wikipedia")
    links.add_argument("--language-code", default=None)
    links.add_argument("--revision", type=int, default=None)
    links.add_argument("--threshold", type=float, default=0.5)
    links.add_argument("--max", type=int, default=15, help="max recommendations (0: no limit)")
    links.add_argument("--exclude-section", action="append", default=None, help="repeatable")
    _add_client_options(links)
    links.set_defaults(run=_links)

    translate = commands.add_parser("translate", help="articles to translate from SOURCE to TARGET")
    translate.add_argument("source")
    translate.add_argument("target")
    translate.add_argument("--count", type=int, default=12)
    translate.add_argument("--seed", action="append", default=None, help="repeatable")
    translate.add_argument("--topic", action="append", default=None, help="repeatable")
    translate.add_argument("--pageviews", action="store_true", help="include pageviews")
    translate.add_argument("--rank-method", choices=["default", "sitelinks"], default="default")
    _add_client_options(translate)
    translate.set_defaults(run=_translate)

    token = commands.add_parser(
        "token", help="request an OAuth 2.0 access token (client credentials)"
    )
    token.add_argument("--client-id", default=os.environ.get("WIKISUGGEST_CLIENT_ID"))
    token.add_argument(
        "--auth-url",
        default=os.environ.get("WIKISUGGEST_AUTH_URL"),
        help="OAuth 2.0 server (default: $WIKISUGGEST_AUTH_URL, else Meta-Wiki)",
    )
    token.add_argument(
        "--show-token", action="store_true", help="print the access token itself (a secret)"
    )
    token.add_argument("--user-agent", default=None)
    token.add_argument(
        "--format", choices=["json", "table"], default="table" if sys.stdout.isatty() else "json"
    )
    token.set_defaults(run=_token, usage=token)

    build = commands.add_parser(
        "build", help="build a wiki's link-engine datasets from its XML dump (needs [train])"
    )
    build.add_argument("dump", help="pages-articles XML dump, optionally .bz2")
    build.add_argument("--wiki", required=True, help="wiki id, e.g. enwiki")
    build.add_argument("--out", required=True, help="output directory")
    build.add_argument("--language", default="en", help="language code for tokenization")
    build.add_argument(
        "--vectors",
        default="linkgraph",
        help="title embeddings: linkgraph (default), glove, or a 'word v1 v2 ...' text file",
    )
    build.add_argument("--link-probability", type=float, default=0.065)
    build.add_argument("--min-link-count", type=int, default=2)
    build.add_argument(
        "--keep-missing-targets",
        action="store_true",
        help="treat link targets absent from the dump as articles (for dump excerpts)",
    )
    build.add_argument("--holdout", type=float, default=0.5, help="share of articles held out")
    build.add_argument("--max-train-articles", type=int, default=200_000)
    build.add_argument("--max-test-articles", type=int, default=10_000)
    build.add_argument("--no-backtest", action="store_true", help="skip the held-out evaluation")
    build.add_argument(
        "--strict-backtest",
        action="store_true",
        help="leave the held-out articles out of the anchors and embeddings of the evaluated build",
    )
    build.add_argument("--seed", type=int, default=7)
    build.set_defaults(run=_build)

    _add_serve(commands)
    from .dump import add_command as add_recommend_dump

    add_recommend_dump(commands)
    _apply_cli.add_parser(commands)
    return root


def main(argv: list[str] | None = None) -> int:
    """Run a command. A failure is one line on stderr and an exit status (2 for the library's
    own errors, 1 for any other); ``--debug`` shows the traceback instead."""
    import wikisuggest

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
        return 2 if isinstance(err, wikisuggest.WikisuggestError) else 1


def _one_line(err: BaseException) -> str:
    """The error as one line: its type and message; an error nobody anticipated says how to
    see more. A missing optional dependency's message names its ``pip install`` line."""
    from .errors import WikisuggestError

    message = " ".join(str(err).split()) or "(no message)"
    if isinstance(err, ImportError):
        return message
    expected = isinstance(err, WikisuggestError | OSError | ValueError)
    hint = "" if expected else " (unexpected; run with --debug for the traceback)"
    return f"{type(err).__name__}: {message}{hint}"


if __name__ == "__main__":
    sys.exit(main())
