"""Rules against a real MediaWiki (Debian's, on loopback): its community configuration page
read and turned into rules, templates reached through other templates found by its API, and a
patroller's audit of link edits saved with ``apply_links`` and ``Wiki.save``, with bad links
planted among the engine's and found, flagged and removed."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from support.local_mediawiki import USER_AGENT, LocalWiki, mediawiki

import wikisuggest
from wikisuggest import LinkEngine, LinkRules, Wiki
from wikisuggest.edits.audit import ADD_LINK_TAG, audit_edits
from wikisuggest.edits.community import CONFIG_PAGE, CommunityConfiguration

__all__ = ["mediawiki"]

MW = "/usr/share/mediawiki/maintenance"


def _maintenance(wiki: LocalWiki, script: str, *args: str, stdin: str = "") -> None:
    env = {**os.environ, "MW_CONFIG_FILE": str(wiki.folder / "LocalSettings.php")}
    subprocess.run(
        ["php", f"{MW}/{script}", *args], input=stdin.encode(), env=env, check=True,
        capture_output=True, timeout=120,
    )  # fmt: skip


def _bot(mediawiki: LocalWiki) -> Wiki:
    wiki = Wiki(mediawiki.api_url, USER_AGENT)
    bot = mediawiki.credentials["bot"]
    wiki.login(bot["user"], bot["password"])
    return wiki


CONFIG = {
    "GEInfoboxTemplates": [],
    "link_recommendation": {
        "disabled": False,
        "excludedTemplates": ["Template:Under construction"],
        "excludedCategories": ["Living people"],
        "excludedSections": ["See also", "References"],
        "minimumLinkScore": 0.55,
        "maximumLinksToShowPerTask": 4,
        "underlinkedWeight": 0.25,
        "maxTasksPerDay": 25,
    },
}


@pytest.fixture(scope="module")
def configured(mediawiki: LocalWiki) -> LocalWiki:
    """The wiki with a configuration page, a template reached through another, and pages
    using them (written as an administrator through MediaWiki's own maintenance script)."""
    _maintenance(mediawiki, "edit.php", "-u", "Admin", CONFIG_PAGE, stdin=json.dumps(CONFIG))
    _maintenance(mediawiki, "edit.php", "-u", "Admin", "Template:Under construction",
                 stdin="''This article is under construction.''")  # fmt: skip
    _maintenance(mediawiki, "edit.php", "-u", "Admin", "Template:Draft notice",
                 stdin="{{Under construction}}[[Category:Living people]]")  # fmt: skip
    _maintenance(mediawiki, "edit.php", "-u", "Admin", "Rules wrapped page",
                 stdin="{{Draft notice}}\nA mammal with a long neck.")  # fmt: skip
    _maintenance(mediawiki, "edit.php", "-u", "Admin", "Rules plain page",
                 stdin="A mammal with a long neck.")  # fmt: skip
    return mediawiki


def test_community_configuration_from_the_wiki(configured: LocalWiki) -> None:
    wiki = Wiki(configured.api_url, USER_AGENT)
    raw = wiki.page(CONFIG_PAGE)
    assert raw is not None and json.loads(raw.wikitext) == CONFIG
    config = CommunityConfiguration.from_wiki(wiki)
    assert config.excluded_templates == ("Template:Under construction",)
    assert config.excluded_categories == ("Living people",)
    assert config.excluded_sections == ("See also", "References")
    assert (config.minimum_link_score, config.maximum_links_to_show_per_task) == (0.55, 4)
    assert config.underlinked_weight == 0.25
    # Settings the page leaves out keep GrowthExperiments' defaults.
    assert (config.maximum_links_per_task, config.minimum_links_per_task) == (10, 2)
    assert "Template" in config.template_namespaces and "Category" in config.category_namespaces

    rules = config.rules()
    spec = rules.to_dict()
    assert spec["min_score"] == 0.55 and spec["max_links_shown"] == 4
    assert spec["exclude_sections"] == ["See also", "References"]

    # The wrapped page calls the excluded template (and category) only through another one:
    # its wikitext does not show them, the wiki's API does.
    wrapped = wiki.page("Rules wrapped page")
    assert wrapped is not None
    assert rules.page_exclusion(wrapped.wikitext) is None
    found = config.page_exclusion(wiki, "Rules wrapped page", wrapped.wikitext)
    assert found == wikisuggest.Exclusion("template", "Under construction")
    assert config.page_exclusion(wiki, "Rules plain page") is None

    # The same rules applied by the engine to a page of the wiki.
    engine = LinkEngine.default()
    page = wiki.page("Alaska")
    assert page is not None
    result = engine.recommend(page.wikitext, page.title, rules=rules)
    assert 0 < len(result.links) <= 4
    assert all((link.score or 0) >= 0.55 for link in result.links)


def test_a_wiki_without_the_page_gets_the_defaults(mediawiki: LocalWiki) -> None:
    wiki = Wiki(mediawiki.api_url, USER_AGENT)
    config = CommunityConfiguration.from_wiki(wiki, page="MediaWiki:No such configuration.json")
    assert (config.minimum_link_score, config.maximum_links_to_show_per_task) == (0.6, 3)


def test_bad_configuration_is_refused(tmp_path: object) -> None:
    bad = {"link_recommendation": {"minimumLinkScore": 1.5}}
    with pytest.raises(wikisuggest.ConfigurationError, match="minimumLinkScore"):
        CommunityConfiguration.from_json(json.dumps(bad))
    with pytest.raises(wikisuggest.ConfigurationError, match="excludedTemplates"):
        CommunityConfiguration.from_json({"link-recommendation": {"excludedTemplates": "x"}})
    with pytest.raises(wikisuggest.ConfigurationError, match="JSON"):
        CommunityConfiguration.from_json("{not json")
    old_style = CommunityConfiguration.from_json(
        {"link-recommendation": {"type": "link-recommendation", "minimumLinkScore": 0.7}}
    )
    assert old_style.minimum_link_score == 0.7


def _redirect_to_a_page(mediawiki: LocalWiki) -> tuple[str, str]:
    titles = "AccessibleComputing|AssistiveTechnology|Analysis of Variance|ActionFilm|AynRand"
    body = mediawiki.query(action="query", titles=titles, redirects="1")["query"]
    existing = {p["title"] for p in body["pages"] if "missing" not in p}
    for hop in body["redirects"]:
        if hop["to"] in existing:
            return hop["from"], hop["to"]
    raise AssertionError(f"no redirect to an existing page among {titles}")


def test_audit_finds_and_removes_planted_links(mediawiki: LocalWiki) -> None:
    _maintenance(mediawiki, "addChangeTag.php", "--tag", ADD_LINK_TAG, "--reason", "tests")
    wiki = _bot(mediawiki)
    engine = LinkEngine.default()
    page = wiki.page("Achilles")
    assert page is not None
    result = engine.recommend(page.wikitext, page.title, pageid=page.pageid, revid=page.revid,
                              threshold=0.3)  # fmt: skip
    applied = wikisuggest.apply_links(page.wikitext, result)
    assert len(applied.applied) >= 3

    # Bad links planted in plain text of the lead, beside the engine's.
    redirect, redirect_target = _redirect_to_a_page(mediawiki)
    text = applied.wikitext
    lead_end = text.index("\n==")
    in_lead = sorted(i.link.link_target for i in applied.applied if i.new_offset < lead_end)
    assert in_lead, "a link of the engine's in the lead"
    excluded = in_lead[0]
    plants = {
        "red": "[[No such page for the audit|hero]]",
        "redirect": f"[[{redirect}|redirected]]",
        "unsuggested": "[[Aardvark|the]]",
        "duplicate": f"[[{excluded}|again]]",
    }
    planted = text[:lead_end] + " " + " ".join(plants.values()) + text[lead_end:]
    edit = wikisuggest.AppliedLinks(
        wikitext=planted, original=page.wikitext, applied=applied.applied, skipped=(),
        page_title=page.title, pageid=page.pageid, revid=page.revid,
    )  # fmt: skip
    saved = wiki.save(edit, summary="Add links", tags=[ADD_LINK_TAG])
    assert saved.saved and saved.new_revid is not None

    rules = LinkRules(exclude_targets=[excluded])
    queue = audit_edits(wiki, engine, rules=rules, threshold=0.3, margin=0.05)
    assert not queue.errors
    audited = [e for e in queue.edits if e.revid == saved.new_revid]
    assert len(audited) == 1, [e.revid for e in queue.edits]
    edit_audit = audited[0]
    by_text = {link.link_text: link for link in edit_audit.links}
    kinds = {text: {f.kind for f in link.flags} for text, link in by_text.items()}
    assert "red_link" in kinds["hero"]
    assert "redirect" in kinds["redirected"]
    assert by_text["redirected"].target == redirect_target
    assert "not_suggested" in kinds["the"]
    assert {"duplicate", "excluded"} <= kinds["again"]
    # The engine's own links: suggested, so never "not_suggested" nor a duplicate (on this
    # small wiki most of their targets are missing pages: red links); the excluded target's
    # first link is flagged by the rules.
    for item in applied.applied:
        flags = kinds[item.link.link_text]
        assert not flags & {"not_suggested", "duplicate"}, (item.link.link_text, flags)
        assert ("excluded" in flags) == (item.link.link_target == excluded)
    frame = queue.to_frame()
    assert set(frame["link_text"]) >= {"hero", "redirected", "the", "again"}
    html = queue._repr_html_()
    assert "red_link" in html and "<script" not in html

    # The fix of the links the model did not suggest unlinks exactly the planted ones.
    fix = edit_audit.fix(kinds={"not_suggested", "duplicate"})
    for markup in plants.values():
        assert markup not in fix.wikitext
    for item in applied.applied:
        assert item.markup in fix.wikitext
    dry = edit_audit.save(wiki, kinds={"not_suggested", "duplicate"})
    assert dry.dry_run and not dry.saved and "-" in dry.diff
    assert wiki.page("Achilles").revid == saved.new_revid  # type: ignore[union-attr]
    done = edit_audit.save(wiki, kinds={"not_suggested", "duplicate"},
                           dry_run=False)  # fmt: skip
    assert done.saved and done.old_revid == saved.new_revid
    now = wiki.page("Achilles")
    assert now is not None and now.wikitext == fix.wikitext.rstrip()
    assert " hero redirected the again" in now.wikitext
