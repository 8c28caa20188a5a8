"""From a real MediaWiki to an edit and back: fetch, recommend locally, apply, save, read the
new revision; conflicts, maxlag and login failures as MediaWiki really answers them."""

from __future__ import annotations

import os
import subprocess
import threading

import pytest
from support.local_mediawiki import USER_AGENT, LocalWiki, mediawiki

import wikisuggest
from wikisuggest import AsyncWiki, EditConflict, LinkEngine, MediaWikiError, Wiki

__all__ = ["mediawiki"]


@pytest.fixture(scope="module")
def engine() -> LinkEngine:
    return LinkEngine.default()


def _bot(mediawiki: LocalWiki, **options: object) -> Wiki:
    wiki = Wiki(mediawiki.api_url, USER_AGENT, **options)  # type: ignore[arg-type]
    bot = mediawiki.credentials["bot"]
    wiki.login(bot["user"], bot["password"])
    return wiki


def _applied(wiki: Wiki, engine: LinkEngine, title: str) -> wikisuggest.AppliedLinks:
    page = wiki.page(title)
    assert page is not None
    result = engine.recommend(
        page.wikitext, page.title, pageid=page.pageid, revid=page.revid, threshold=0.3
    )
    applied = wikisuggest.apply_links(page.wikitext, result)
    assert applied.applied, f"no link to apply on {title}"
    assert applied.revid == page.revid
    return applied


def test_fetch_recommend_apply_save_and_read_back(mediawiki: LocalWiki, engine: LinkEngine) -> None:
    wiki = _bot(mediawiki)
    page = wiki.page("Aardvark")
    assert page is not None and page.title == "Aardvark"
    raw = mediawiki.query(action="query", prop="revisions", rvprop="ids", titles="Aardvark")[
        "query"
    ]["pages"][0]
    assert (page.pageid, page.revid) == (raw["pageid"], raw["revisions"][0]["revid"])

    applied = _applied(wiki, engine, "Aardvark")
    preview = wiki.save(applied, dry_run=True)
    assert preview.dry_run and not preview.saved and preview.diff == applied.diff()
    assert wiki.page("Aardvark").revid == page.revid  # type: ignore[union-attr]

    saved = wiki.save(applied, summary="Add links (test)", tags=(), minor=True, bot=True)
    assert saved.saved and not saved.nochange
    assert saved.old_revid == page.revid and saved.new_revid is not None
    assert saved.new_revid > page.revid

    again = wiki.page("Aardvark")
    assert again is not None and again.revid == saved.new_revid
    # MediaWiki trims trailing whitespace when it saves.
    assert again.wikitext == applied.wikitext.rstrip()
    for item in applied.applied:
        assert item.markup in again.wikitext
    revision = mediawiki.query(
        action="query", prop="revisions", rvprop="user|comment|flags", revids=str(saved.new_revid)
    )["query"]["pages"][0]["revisions"][0]
    assert revision["user"] == "Bot" and revision["comment"] == "Add links (test)"
    assert revision["minor"] is True

    # The same links applied to the new revision: nothing left to place, nothing to save.
    result = engine.recommend(again.wikitext, again.title, revid=again.revid, threshold=0.3)
    linked = {item.link.link_text.lower() for item in applied.applied}
    assert not {link.link_text.lower() for link in result.links} & linked


def test_an_edit_in_between_is_a_conflict_not_an_overwrite(
    mediawiki: LocalWiki, engine: LinkEngine
) -> None:
    wiki = _bot(mediawiki)
    applied = _applied(wiki, engine, "Anarchism")
    first = applied.applied[0]
    # Another editor rewrites the sentence holding the first suggested phrase.
    line_start = applied.original.rfind("\n", 0, first.offset) + 1
    other_text = (
        applied.original[:line_start]
        + "Rewritten by someone else. "
        + applied.original[line_start:]
    )
    assert applied.revid is not None
    theirs = mediawiki.anonymous_edit("Anarchism", other_text, applied.revid)

    with pytest.raises(EditConflict) as caught:
        wiki.save(applied)
    assert caught.value.baserevid == applied.revid and caught.value.title == "Anarchism"
    current = wiki.page("Anarchism")
    assert current is not None and current.revid == theirs
    assert current.wikitext == other_text.rstrip()

    # Recommending again on the current revision lets the links through.
    fresh = _applied(wiki, engine, "Anarchism")
    assert wiki.save(fresh).saved


def test_maxlag_is_waited_out_or_reported(mediawiki: LocalWiki, engine: LinkEngine) -> None:
    impatient = _bot(mediawiki, max_retries=0)
    patient = _bot(mediawiki)
    applied = _applied(impatient, engine, "Albedo")
    lag = mediawiki.folder / "lag"
    lag.write_text("7")
    try:
        with pytest.raises(MediaWikiError) as caught:
            impatient.save(applied)
        assert caught.value.code == "maxlag"

        # The lag ends while the client waits the 5 s the wiki asked for.
        threading.Timer(1.0, lag.unlink).start()
        saved = patient.save(applied)
        assert saved.saved and saved.old_revid == applied.revid
    finally:
        lag.unlink(missing_ok=True)


async def test_async_forms(mediawiki: LocalWiki, engine: LinkEngine) -> None:
    wiki = AsyncWiki(mediawiki.api_url, USER_AGENT)
    bot = mediawiki.credentials["bot"]
    await wiki.login(bot["user"], bot["password"])
    page = await wiki.page("Algeria")
    assert page is not None
    by_revision = await wiki.page(revid=page.revid)
    assert by_revision == page
    result = engine.recommend(page.wikitext, page.title, revid=page.revid, threshold=0.3)
    site = await wiki.siteinfo()
    saved = await wiki.save(wikisuggest.apply_links(page.wikitext, result, site=site))
    assert saved.saved and saved.old_revid == page.revid


async def test_the_coroutines_of_the_blocking_wiki_still_work_with_a_warning(
    mediawiki: LocalWiki, engine: LinkEngine
) -> None:
    wiki = Wiki(mediawiki.api_url, USER_AGENT)
    bot = mediawiki.credentials["bot"]
    with pytest.warns(DeprecationWarning, match="AsyncWiki"):
        await wiki.login_async(bot["user"], bot["password"])
    with pytest.warns(DeprecationWarning, match="AsyncWiki"):
        page = await wiki.page_async("Alchemy")
    assert page is not None
    result = engine.recommend(page.wikitext, page.title, revid=page.revid, threshold=0.3)
    with pytest.warns(DeprecationWarning, match="AsyncWiki"):
        saved = await wiki.save_async(wikisuggest.apply_links(page.wikitext, result))
    assert saved.saved and saved.old_revid == page.revid


def test_refusals_are_typed(mediawiki: LocalWiki) -> None:
    wiki = Wiki(mediawiki.api_url, USER_AGENT)
    assert wiki.page("No such page here") is None
    assert wiki.page(revid=10**9) is None
    with pytest.raises(MediaWikiError) as caught:
        wiki.login(mediawiki.credentials["bot"]["user"], "wrong-password-" + "x" * 16)
    assert caught.value.code == "login-failed"
    assert "wrong-password" not in str(caught.value)
    # Edits never create pages.
    applied = wikisuggest.apply_links("New page text.", [])
    with pytest.raises(MediaWikiError) as missing:
        wiki.save(applied, title="No such page here", baserevid=1)
    assert missing.value.code == "missingtitle"
    with pytest.raises(wikisuggest.InvalidParameter):
        wiki.save(applied, title="Aardvark")  # no base revision: never a blind overwrite


def test_tags_and_flags_reach_the_wiki(mediawiki: LocalWiki, engine: LinkEngine) -> None:
    # A tag must be defined on the wiki before edits may carry it (on the copy these tests use).
    subprocess.run(
        [
            "php",
            "/usr/share/mediawiki/maintenance/addChangeTag.php",
            "--tag=wikisuggest-links",
            "--reason=Links added from recommendations",
        ],
        env={**os.environ, "MW_CONFIG_FILE": str(mediawiki.folder / "LocalSettings.php")},
        check=True,
        capture_output=True,
        timeout=120,
    )
    wiki = _bot(mediawiki)
    applied = _applied(wiki, engine, "Aikido")
    with pytest.raises(MediaWikiError) as refused:
        wiki.save(applied, tags=("no-such-tag",))
    assert refused.value.code == "badtags"

    saved = wiki.save(applied, summary="Tagged", tags=("wikisuggest-links",), minor=False, bot=True)
    assert saved.saved and saved.new_revid is not None
    revision = mediawiki.query(
        action="query", prop="revisions", rvprop="tags|flags", revids=str(saved.new_revid)
    )["query"]["pages"][0]["revisions"][0]
    assert revision["tags"] == ["wikisuggest-links"] and revision["minor"] is False
    changes = mediawiki.query(
        action="query", list="recentchanges", rctitle="Aikido", rcprop="ids|flags", rclimit="5"
    )["query"]["recentchanges"]
    newest = next(change for change in changes if change["revid"] == saved.new_revid)
    assert newest["bot"] is True

    # bot=False: the same bot user's edit is not flagged as a bot edit.
    again = _applied(wiki, engine, "Aardwolf")
    plain = wiki.save(again, bot=False)
    changes = mediawiki.query(
        action="query", list="recentchanges", rctitle="Aardwolf", rcprop="ids|flags", rclimit="5"
    )["query"]["recentchanges"]
    assert next(c for c in changes if c["revid"] == plain.new_revid)["bot"] is False
