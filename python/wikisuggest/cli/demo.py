"""``wikisuggest example`` and ``wikisuggest demo``: what the package does, offline."""

from __future__ import annotations

import argparse
import sys

from .options import add_link_options


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


#: The command that gives real links for the demo's articles: production's enwiki datasets.
REAL_LINKS = "python -m wikisuggest demo --published"


def _demo(args: argparse.Namespace) -> int:
    """Recommend links, offline, for articles shipped with the package: with the toy sample
    shipped beside them, or with production's enwiki datasets (``--published``)."""
    from ..edits.community import CommunityConfiguration
    from ..engine import LinkEngine, demo_articles
    from .output import bars_wanted

    articles = demo_articles()
    chosen = args.articles or sorted(articles)
    unknown = [a for a in chosen if a not in articles]
    if unknown:
        shipped = ", ".join(sorted(articles))
        print(
            f"wikisuggest demo: no shipped article {', '.join(unknown)} (shipped: {shipped})",
            file=sys.stderr,
        )
        return 2
    # The lowest score Add a Link shows editors (GrowthExperiments' minimumLinkScore).
    editors = CommunityConfiguration().minimum_link_score
    if args.published:
        engine = LinkEngine.published("enwiki", progress=bars_wanted())
        info = engine.info()
        print(
            f"Production's enwiki datasets ({info.anchors:,} anchors): the links the "
            f"service would give for these articles. '?' marks a score under {editors}, "
            "the lowest Add a Link shows editors.\n"
        )
    else:
        engine = LinkEngine.default()
        info = engine.info()
        print(
            f"A toy: the sample dataset shipped in the package ({info.anchors:,} anchors from "
            "a small excerpt of English Wikipedia) shows how the engine works, not what to "
            f"link: editors would reject about half its links. '?' marks a score under "
            f"{editors}, the lowest Add a Link shows editors.\n"
        )
    for title in chosen:
        wikitext = articles[title]
        result = engine.recommend(
            wikitext, title, threshold=args.threshold, max_recommendations=args.max_recommendations
        )
        print(f"{result.page_title}: {result.links_count} links in {len(wikitext):,} characters")
        for link in result.links:
            context = f"{link.context_before}[[{link.link_text}]]{link.context_after}"
            context = context.replace("\n", " ")
            score = link.score or 0.0
            mark = "?" if score < editors else " "
            print(
                f"{mark} {link.link_text!r} -> {link.link_target!r}  "
                f"score {score:.3f}  at {link.wikitext_offset}  …{context}…"
            )
        print()
    if not args.published:
        print(
            f"Real links for these articles, from production's enwiki datasets (fetched once, "
            f"several GB; any wiki: wikisuggest datasets fetch WIKI):\n  {REAL_LINKS}"
        )
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    commands.add_parser("example", help="a small offline example").set_defaults(run=_example)

    demo = commands.add_parser(
        "demo", help="link recommendations for a shipped article, computed offline"
    )
    demo.add_argument("articles", nargs="*", help="titles of shipped articles (default: all)")
    add_link_options(demo, every=False)
    demo.add_argument(
        "--published",
        action="store_true",
        help="use production's enwiki datasets, fetched and cached on first use (several GB), "
        "instead of the toy sample shipped in the package",
    )
    demo.set_defaults(run=_demo)
