"""``wikisuggest example`` and ``wikisuggest demo``: what the package does, offline."""

from __future__ import annotations

import argparse

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


def _demo(args: argparse.Namespace) -> int:
    """Recommend links, offline, for articles shipped with the package."""
    from ..engine import LinkEngine, demo_articles

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
            wikitext, title, threshold=args.threshold, max_recommendations=args.max_recommendations
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


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    commands.add_parser("example", help="a small offline example").set_defaults(run=_example)

    demo = commands.add_parser(
        "demo", help="link recommendations for a shipped article, computed offline"
    )
    demo.add_argument("articles", nargs="*", help="titles of shipped articles (default: all)")
    add_link_options(demo, every=False)
    demo.set_defaults(run=_demo)
