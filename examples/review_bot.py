"""A link bot that reviews what it proposes before it saves.

For each page: read its current revision from the wiki, recommend links with the local engine,
apply them with the wiki's own names (the proposal), review the proposal with a stated rule,
and save only the links that pass it, on the very revision that was read (if the page changed
in between, nothing is overwritten). Without credentials it is a dry run: it prints the diff it
would save and sends nothing.

The review rule: a link is kept when its score is at least ``MIN_SCORE`` (default 0.7) and its
target is not on the ``NEVER_LINK`` list (comma-separated titles, default none).

Run it (the wiki's Action API URL, then the pages; default pages: Aardvark and Albedo):

    python examples/review_bot.py https://wiki.example.org/w/api.php Aardvark Albedo

Configuration: ``BOT_USER`` and ``BOT_PASSWORD`` (a bot password, ``Name@botname``) to save,
``WIKI_API`` instead of the first argument, ``BOT_USER_AGENT`` for the User-Agent (say who runs
the bot and how to reach them, as Wikimedia's policy asks).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import wikisuggest

DEFAULT_AGENT = "LinkReviewBot/1.0 (https://example.org/LinkReviewBot; operator@example.org)"


@dataclass(frozen=True)
class ReviewRule:
    """Keep a link when its score reaches ``min_score`` and its target is not excluded."""

    min_score: float
    never_link: frozenset[str]

    def keeps(self, link: wikisuggest.LinkRecommendation) -> bool:
        score = link.score if link.score is not None else 0.0
        return score >= self.min_score and link.link_target not in self.never_link

    def __str__(self) -> str:
        never = ", ".join(sorted(self.never_link)) or "nothing"
        return f"score >= {self.min_score}, never link to {never}"


def review(proposal: wikisuggest.AppliedLinks, rule: ReviewRule) -> set[int]:
    """The link indexes of the proposal that pass the rule, each printed with its verdict."""
    keep: set[int] = set()
    for item in proposal.applied:
        link = item.link
        kept = rule.keeps(link) and link.link_index is not None
        verdict = "keep" if kept else "drop"
        target = f"[[{link.link_target}]]"
        print(
            f"  {verdict} #{link.link_index} {link.score or 0:.3f} {link.link_text!r} -> {target}"
        )
        if kept and link.link_index is not None:
            keep.add(link.link_index)
    return keep


def main() -> None:
    api = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("WIKI_API", "")
    if not api:
        sys.exit("usage: review_bot.py API_URL [TITLE ...] (or set WIKI_API)")
    try:
        run(api, sys.argv[2:] or ["Aardvark", "Albedo"])
    except wikisuggest.WikisuggestError as err:
        # The wiki unreachable or refusing the login, a page that cannot be read: say what
        # happened in one line, as a bot's log wants it, and stop with a failure status.
        sys.exit(f"review_bot.py: {api}: {type(err).__name__}: {err}")


def run(api: str, titles: list[str]) -> None:
    """Review and save links on each page of ``titles`` of the wiki at ``api``."""
    rule = ReviewRule(
        min_score=float(os.environ.get("MIN_SCORE", "0.7")),
        never_link=frozenset(
            t.strip() for t in os.environ.get("NEVER_LINK", "").split(",") if t.strip()
        ),
    )
    user, password = os.environ.get("BOT_USER"), os.environ.get("BOT_PASSWORD")
    dry_run = not (user and password)

    wiki = wikisuggest.Wiki(api, os.environ.get("BOT_USER_AGENT", DEFAULT_AGENT))
    if user and password:
        wiki.login(user, password)
    site = wiki.siteinfo()
    engine = wikisuggest.LinkEngine.default()
    print(f"Review rule: {rule}; {'dry run' if dry_run else f'saving as {user}'}")

    for title in titles:
        page = wiki.page(title)
        if page is None:
            print(f"\n{title}: no such page")
            continue
        # Recommend and apply everything: the proposal a reviewer looks at.
        result = engine.recommend(page.wikitext, page.title, pageid=page.pageid, revid=page.revid)
        proposal = wikisuggest.apply_links(page.wikitext, result, site=site)
        print(f"\n{page.title} (revision {page.revid}): {len(proposal.applied)} links proposed")
        keep = review(proposal, rule)
        if not keep:
            print("  nothing passed the review: page left alone")
            continue
        # Apply only what passed, on the revision that was reviewed, and save it.
        reviewed = wikisuggest.apply_links(page.wikitext, result, accept=keep, site=site)
        try:
            saved = wiki.save(reviewed, summary="Add reviewed links", bot=True, dry_run=dry_run)
        except wikisuggest.EditConflict:
            print("  the page changed since it was read: run the bot again")
            continue
        if dry_run:
            print(f"  would add {len(reviewed.applied)} links:\n{saved.diff}")
        else:
            print(f"  saved revision {saved.new_revid} on top of {saved.old_revid}")


if __name__ == "__main__":
    main()
