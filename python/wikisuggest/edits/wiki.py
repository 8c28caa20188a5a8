"""Read pages from a wiki and save applied links as edits, through its Action API.

>>> wiki = wikisuggest.Wiki("https://en.wikipedia.org/w/api.php", USER_AGENT)  # doctest: +SKIP
>>> page = wiki.page("Aardvark")  # doctest: +SKIP
>>> result = engine.recommend(page.wikitext, page.title, revid=page.revid)  # doctest: +SKIP
>>> applied = wikisuggest.apply_links(page.wikitext, result, site=wiki.siteinfo())  # doctest: +SKIP
>>> wiki.save(applied, summary="Add links")  # doctest: +SKIP

:class:`Wiki` blocks (releasing the GIL; Ctrl-C interrupts it); :class:`AsyncWiki` has the
same methods as coroutines. An edit is based on the revision the recommendations were made
for (``AppliedLinks.revid``): if anyone saved the page since, the wiki refuses it and
:class:`~wikisuggest.EditConflict` is raised instead of overwriting their work. Writes send
``maxlag`` (5 s by default) and wait as long as the wiki asks while its database replicas
lag. Log in with a bot password (:meth:`Wiki.login`), or pass ``auth`` (a
:class:`TokenManager` or an OAuth 2.0 access token, sent as a bearer token, for wikis with the
OAuth extension).
"""

from __future__ import annotations

from ._wiki_async import AsyncWiki
from ._wiki_base import EditResult, Revision, SaveOptions
from ._wiki_sync import Wiki
from .titles import SiteInfo

__all__ = ["AsyncWiki", "EditResult", "Revision", "SaveOptions", "SiteInfo", "Wiki"]
