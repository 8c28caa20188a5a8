"""``Wiki(auth=…)``: OAuth 2.0 bearer tokens on the Action API, against the real MediaWiki.

Debian's MediaWiki has no OAuth extension and ignores bearer tokens, so the wiki is reached
through a gate (tests/support/bearer_gate.py) that stands in for the extension: it checks every
token with its issuer (the reference server), refuses a bad one with 401, runs a good one's request
as the bot user, and records what each request carried. What this proves is the client's side:
which token each request carried and how a refusal is handled; not MediaWiki's own OAuth.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import reference_server as ref
from support.bearer_gate import BearerGate, gate, issuer, stale_token_file
from support.local_mediawiki import USER_AGENT, LocalWiki, mediawiki

import wikisuggest
from wikisuggest import LinkEngine, Wiki

__all__ = ["gate", "issuer", "mediawiki"]

STALE = "token-from-an-earlier-run-0002"


def test_wiki_sends_the_managers_token_and_renews_it_once_on_401(
    tmp_path: Path, issuer: wikisuggest.Server, gate: BearerGate, mediawiki: LocalWiki
) -> None:
    store = stale_token_file(tmp_path / "token.json", STALE)
    manager = wikisuggest.TokenManager.client_credentials(
        ref.CONFIDENTIAL_ID,
        ref.CONFIDENTIAL_SECRET,
        auth_url=issuer.url,
        user_agent=USER_AGENT,
        store=store,
    )
    wiki = Wiki(gate.url + "/api.php", USER_AGENT, auth=manager)
    gate.clear()
    page = wiki.page("Agriculture")
    assert page is not None
    raw = mediawiki.query(action="query", prop="revisions", rvprop="ids", titles="Agriculture")
    assert page.revid == raw["query"]["pages"][0]["revisions"][0]["revid"]

    stored = store.load()
    assert stored is not None and stored["access_token"] != STALE
    issued = stored["access_token"]
    seen = gate.seen
    # Refused with the stale token, renewed once, replayed once.
    assert [(s.token, s.status) for s in seen] == [(STALE, 401), (issued, 200)]
    assert seen[0].path == seen[1].path

    # The edit (a CSRF token, then action=edit) carries the renewed token, as every later call.
    result = LinkEngine.default().recommend(
        page.wikitext, page.title, revid=page.revid, threshold=0.3
    )
    saved = wiki.save(
        wikisuggest.apply_links(page.wikitext, result), summary="Add links (bearer test)"
    )
    assert saved.saved and saved.old_revid == page.revid
    assert {(s.token, s.status) for s in gate.seen[2:]} == {(issued, 200)}
    assert len(gate.seen) >= 4
    revision = mediawiki.query(
        action="query", prop="revisions", rvprop="user|comment", revids=str(saved.new_revid)
    )["query"]["pages"][0]["revisions"][0]
    assert revision["comment"] == "Add links (bearer test)" and revision["user"] == "Bot"
    assert "login" not in {s.action for s in gate.seen}  # the token is the login


def test_wiki_with_a_personal_token_and_without_one(gate: BearerGate, mediawiki: LocalWiki) -> None:
    gate.clear()
    page = Wiki(gate.url + "/api.php", USER_AGENT, auth=ref.PERSONAL_TOKEN).page("Abacus")
    assert page is not None and page.title == "Abacus"
    assert {(s.token, s.status) for s in gate.seen} == {(ref.PERSONAL_TOKEN, 200)}

    # A token that cannot be renewed, or none: the gate's 401 comes back as a typed error.
    for wiki in (
        Wiki(gate.url + "/api.php", USER_AGENT, auth="not-a-registered-personal-token"),
        Wiki(gate.url + "/api.php", USER_AGENT),
    ):
        with pytest.raises(wikisuggest.WikisuggestError) as refused:
            wiki.page("Abacus")
        assert "not-a-registered" not in str(refused.value)
        assert "401" in str(refused.value) or getattr(refused.value, "status", None) == 401
