"""pywikibot with wikisuggest's OAuth 2.0 tokens, against the real local MediaWiki.

pywikibot sends every request through one ``requests.Session``
(``pywikibot.comms.http.session``); with ``RequestsAuth`` as that session's ``auth``, its
requests carry the ``TokenManager``'s bearer token, renewed once (and the request replayed
once) on a 401. Debian's MediaWiki cannot check bearer tokens (no OAuth extension), so the
bot talks to it through a gate that checks each token with the issuer, the reference server,
and runs good ones as the bot user, as the OAuth extension would (tests/support/bearer_gate.py): so
the token is the bot's login, and no password is configured. pywikibot runs offline in its own
process, configured only by the ``user-config.py`` written here (``PYWIKIBOT_DIR``), with
``HOME`` an empty folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from support import reference_server as ref
from support.bearer_gate import OPENER, BearerGate, gate, issuer, stale_token_file
from support.local_mediawiki import LocalWiki, mediawiki
from support.paths import SUPPORT

import wikisuggest

__all__ = ["gate", "issuer", "mediawiki"]

BOT = SUPPORT / "pywikibot_bot.py"
STALE = "token-from-an-earlier-run-0001"


def pywikibot_dir(folder: Path, gate: BearerGate) -> Path:
    """A pywikibot configuration for the local wiki: a family made from its API URL, the bot's
    user name (no password: the token is the login), no throttling (the wiki is ours)."""
    folder.mkdir()
    (folder / "user-config.py").write_text(
        f"family_files['localwiki'] = {gate.url + '/api.php'!r}\n"
        "family = 'localwiki'\n"
        "mylang = 'localwiki'\n"
        "usernames['localwiki']['*'] = 'Bot'\n"
        "put_throttle = 0\n"
        "max_retries = 0\n",
        "utf-8",
    )
    return folder


def run_bot(
    tmp_path: Path, gate: BearerGate, auth_url: str, *args: str
) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir()
    config = pywikibot_dir(tmp_path / "pywikibot", gate)
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "PYWIKIBOT_DIR": str(config),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        # Only 127.0.0.1 is ever contacted; no proxy may stand in between.
        "NO_PROXY": "*",
    }
    done = subprocess.run(
        [sys.executable, str(BOT), auth_url, str(tmp_path / "token.json"), *args],
        cwd=tmp_path,
        env=environment,
        stdin=subprocess.DEVNULL,  # pywikibot would ask for a password it should not need
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    # pywikibot read no configuration and wrote nothing outside its folder.
    assert list(home.iterdir()) == []
    return done


def report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr[-3000:]
    answer: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return answer


def test_pywikibot_edits_with_bearer_tokens_renewed_on_401(
    tmp_path: Path, issuer: wikisuggest.Server, gate: BearerGate, mediawiki: LocalWiki
) -> None:
    # A bot restarted with a token the issuer no longer knows.
    stale_token_file(tmp_path / "token.json", STALE)
    gate.clear()
    done = run_bot(tmp_path, gate, issuer.url, "client", "edit", "Alchemy")
    result = report(done)

    stored = wikisuggest.FileTokenStore(tmp_path / "token.json").load()
    assert stored is not None
    issued = stored["access_token"]
    assert issued != STALE
    seen = gate.seen
    # The first request went out with the stale token and was refused; it was replayed once
    # with the one token the manager obtained, which every later request to the wiki carried,
    # pywikibot's and wikisuggest's alike.
    assert (seen[0].token, seen[0].status) == (STALE, 401)
    assert seen[1].token == issued and seen[1].path == seen[0].path
    wiki_calls, elsewhere = seen[1:-1], seen[-1]
    assert {(s.token, s.status) for s in wiki_calls} == {(issued, 200)}
    assert len(wiki_calls) > 5  # siteinfo, the page, user info, tokens, the edit
    actions = {s.action for s in wiki_calls}
    assert "edit" in actions and "login" not in actions  # the token is the login
    # A request to another host went out without the token.
    assert (elsewhere.token, elsewhere.status) == (None, 401) and result["elsewhere"] == 401

    # pywikibot read the page and saved its edit in the real wiki, as the bot user.
    current = mediawiki.query(
        action="query",
        prop="revisions",
        rvprop="ids|user|comment|content",
        rvslots="main",
        titles="Alchemy",
    )["query"]["pages"][0]["revisions"][0]
    assert result["site"] == "localwiki:localwiki" and result["user"] == "Bot"
    assert current["revid"] == result["new_revid"] > result["revid"]
    # wikisuggest's Wiki, on the same manager in the same bot, read it back with that token.
    assert result["wikisuggest_revid"] == result["new_revid"]
    assert current["user"] == "Bot" and current["comment"] == "Add links (pywikibot test)"
    assert result["markup"]
    for markup in result["markup"]:
        assert markup in current["slots"]["main"]["content"]


def test_pywikibot_with_a_personal_token(
    tmp_path: Path, issuer: wikisuggest.Server, gate: BearerGate, mediawiki: LocalWiki
) -> None:
    gate.clear()
    result = report(run_bot(tmp_path, gate, issuer.url, "personal", "read", "Abacus"))
    raw = mediawiki.query(action="query", prop="revisions", rvprop="ids", titles="Abacus")
    assert result["revid"] == raw["query"]["pages"][0]["revisions"][0]["revid"]
    assert {(s.token, s.status) for s in gate.seen} == {(ref.PERSONAL_TOKEN, 200)}


def test_without_a_token_the_gate_refuses_pywikibot(
    tmp_path: Path, issuer: wikisuggest.Server, gate: BearerGate, mediawiki: LocalWiki
) -> None:
    gate.clear()
    done = run_bot(tmp_path, gate, issuer.url, "none", "read", "Abacus")
    assert done.returncode != 0
    assert "mwoauth-invalid-authorization" in done.stderr
    assert gate.seen and all((s.token, s.status) == (None, 401) for s in gate.seen)
    # And a token the issuer does not know is refused too, before the wiki is reached.
    request = urllib.request.Request(
        gate.url + "/api.php?action=query&meta=siteinfo&format=json",
        headers={"Authorization": "Bearer not-issued-by-anyone"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        OPENER.open(request, timeout=30)
    with refused.value:
        assert refused.value.code == 401
