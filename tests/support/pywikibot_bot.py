"""A pywikibot bot whose HTTP requests carry wikisuggest's OAuth 2.0 bearer tokens.

Run by tests/auth/test_pywikibot.py in a process of its own, because pywikibot reads its
configuration (``$PYWIKIBOT_DIR/user-config.py``, which the test writes) when it is imported.

    pywikibot_bot.py AUTH_URL STORE_PATH (client | personal | none) (read | edit) TITLE

It prints one JSON object: what it read, and with ``edit`` the revision it saved.
"""

from __future__ import annotations

import json
import sys
import urllib.parse
from typing import Any

import pywikibot
from pywikibot.comms import http

import wikisuggest
from wikisuggest.auth import RequestsAuth

USER_AGENT = "PywikibotTests/1.0 (https://example.org/pywikibot-tests; tests@example.org)"
CLIENT_ID = "example-confidential-app"
CLIENT_SECRET = "example-confidential-secret"
PERSONAL_TOKEN = "example-personal-api-token-0001"


#: The wiki's host: only requests to it carry the token (pywikibot fetches other sites through
#: the same session).
WIKI_HOSTS = ["127.0.0.1"]


def main(auth_url: str, store: str, kind: str, mode: str, title: str) -> dict[str, Any]:
    manager: wikisuggest.TokenManager | str | None = None
    if kind == "client":
        manager = wikisuggest.TokenManager.client_credentials(
            CLIENT_ID,
            CLIENT_SECRET,
            auth_url=auth_url,
            user_agent=USER_AGENT,
            store=wikisuggest.FileTokenStore(store),
        )
        http.session.auth = RequestsAuth(manager, hosts=WIKI_HOSTS)
    elif kind == "personal":
        manager = PERSONAL_TOKEN
        http.session.auth = RequestsAuth(manager, hosts=WIKI_HOSTS)
    site = pywikibot.Site()  # the family and user of user-config.py
    page = pywikibot.Page(site, title)
    wikitext, revid = page.text, page.latest_revision_id
    report: dict[str, Any] = {"site": str(site), "revid": revid, "length": len(wikitext)}
    if mode == "edit":
        # The token is the login: pywikibot sees the user it names and asks for no password.
        site.login()
        result = wikisuggest.LinkEngine.default().recommend(
            wikitext, title, pageid=page.pageid, revid=revid, threshold=0.3
        )
        applied = wikisuggest.apply_links(wikitext, result)
        page.text = applied.wikitext
        page.save(summary="Add links (pywikibot test)", bot=True, minor=True)
        report |= {
            "user": site.user(),
            "new_revid": page.latest_revision_id,
            "markup": [item.markup for item in applied.applied],
        }
        # wikisuggest's own calls share the manager, and so its one token.
        api_url = site.base_url(site.apipath())
        again = wikisuggest.Wiki(api_url, USER_AGENT, auth=manager).page(title)
        report["wikisuggest_revid"] = None if again is None else again.revid
        # Another site (the same gate under another name): fetched without the token.
        api = urllib.parse.urlsplit(api_url)
        elsewhere = api._replace(netloc=f"localhost:{api.port}", query="action=query&format=json")
        report["elsewhere"] = http.fetch(elsewhere.geturl()).status_code
    return report


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:6])))
