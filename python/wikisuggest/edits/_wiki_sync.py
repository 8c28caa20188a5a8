"""``Wiki``, blocking: written by ``scripts/unasync.py`` from ``_wiki_async.py``.

Change the operations there and run the script again; the suite fails while this file is stale.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._wiki_base import (
    DeprecatedAsyncMethods,
    EditResult,
    Revision,
    SaveOptions,
    WikiBase,
    login_args,
    page_args,
    prepare,
    read_args,
    read_body,
    revision,
    site_info,
)
from .apply import AppliedLinks
from .titles import SiteInfo

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Wiki"]


class Wiki(DeprecatedAsyncMethods, WikiBase):
    """A wiki's Action API (``…/api.php``), pages in, edits out. Safe to share between threads.

    Requests run on one shared I/O runtime, without the GIL.
    Interrupting a call with Ctrl-C aborts its request.
    """

    __slots__ = ()

    def page(self, title: str | None = None, *, revid: int | None = None) -> Revision | None:
        """The page's current revision, or revision ``revid``; ``None`` if it does not exist."""
        return revision(self._native.page(*page_args(title, revid)).send())

    def siteinfo(self) -> SiteInfo:
        """What the wiki calls its namespaces, interwiki prefixes and behaviour switches
        (asked once, then kept): pass it to :func:`apply_links` as ``site=``."""
        if self._site is None:
            self._site = site_info(self._native.siteinfo().send())
        return self._site

    def read(self, params: Mapping[str, str]) -> dict[str, Any]:
        """One read of the wiki's Action API (``action`` ``query``, ``parse`` or
        ``wbgetentities``; ``format`` is set here): its decoded JSON body. Writes go through
        :meth:`save` only."""
        return read_body(self._native.read(read_args(params)).send())

    def login(self, username: str, password: str) -> None:
        """Log in with a bot password (``User@appid`` and the generated password); later
        edits assert that the session is still logged in."""
        self._native.login(*login_args(username, password)).send()

    def save(self, applied: AppliedLinks, **options: Unpack[SaveOptions]) -> EditResult:
        """Save ``applied.wikitext`` as a new revision of the page (``title``, default
        ``applied.page_title``), based on ``applied.revid`` (or ``baserevid``), with
        ``summary`` (default ``"Add links"``), ``tags``, ``minor=True`` and ``bot=False``.
        ``dry_run=True`` returns the diff without contacting the wiki.

        Before saving, every placed link's target is checked against the wiki's own
        namespace names and interwiki prefixes (:meth:`siteinfo`): a link the wiki would read
        as a category, a file or a language link is refused with
        :class:`~wikisuggest.edits.titles.InvalidTitle`, and nothing is saved."""
        edit = prepare(applied, options)
        if edit.dry_run:
            return edit.proposed()
        edit.check_targets(self.siteinfo())
        return edit.result(self._native.edit(*edit.native_args()).send())
