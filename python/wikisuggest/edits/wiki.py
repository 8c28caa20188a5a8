"""Read pages from a wiki and save applied links as edits, through its Action API.

>>> wiki = wikisuggest.Wiki("https://en.wikipedia.org/w/api.php", USER_AGENT)  # doctest: +SKIP
>>> page = wiki.page("Aardvark")  # doctest: +SKIP
>>> result = engine.recommend(page.wikitext, page.title, revid=page.revid)  # doctest: +SKIP
>>> wiki.save(wikisuggest.apply_links(page.wikitext, result), summary="Add links")  # doctest: +SKIP

An edit is based on the revision the recommendations were made for (``AppliedLinks.revid``):
if anyone saved the page since, the wiki refuses it and :class:`~wikisuggest.EditConflict` is
raised instead of overwriting their work. Writes send ``maxlag`` (5 s by default) and wait as
long as the wiki asks while its database replicas lag. Log in with a bot password
(:meth:`Wiki.login`), or pass ``auth`` (a :class:`TokenManager` or an OAuth 2.0 access token,
sent as a bearer token, for wikis with the OAuth extension).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from .. import _args
from .._native import NativeWiki
from ..auth.manager import TokenManager, native_credentials
from ..errors import InvalidParameter
from .apply import AppliedLinks

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["EditResult", "Revision", "Wiki"]

DEFAULT_SUMMARY = "Add links"


@dataclass(frozen=True, slots=True)
class Revision:
    """One revision of a page: what link recommendations are computed from."""

    title: str
    pageid: int
    revid: int
    wikitext: str


@dataclass(frozen=True, slots=True)
class EditResult:
    """What :meth:`Wiki.save` did. ``saved`` is False for a dry run and for an edit that
    changed nothing (``nochange``)."""

    title: str
    saved: bool
    #: Unified diff from the base revision's text to the saved (or, dry run, proposed) text.
    diff: str
    pageid: int | None = None
    old_revid: int | None = None
    new_revid: int | None = None
    nochange: bool = False
    dry_run: bool = False


class SaveOptions(TypedDict, total=False):
    """Keyword arguments of :meth:`Wiki.save` and :meth:`Wiki.save_async`; the defaults are
    ``_SAVE_DEFAULTS``."""

    #: The page to save (default: ``applied.page_title``).
    title: str | None
    #: The revision the edit is based on (default: ``applied.revid``).
    baserevid: int | None
    summary: str
    tags: Iterable[str]
    minor: bool
    bot: bool
    #: Return the diff without contacting the wiki.
    dry_run: bool


#: The defaults of the save arguments: the one place they are written.
_SAVE_DEFAULTS: dict[str, Any] = {
    "title": None,
    "baserevid": None,
    "summary": DEFAULT_SUMMARY,
    "tags": (),
    "minor": True,
    "bot": False,
    "dry_run": False,
}


@dataclass(frozen=True, slots=True)
class _Edit:
    """The arguments of one save, checked once for the sync and async forms."""

    title: str
    text: str
    baserevid: int
    summary: str
    tags: list[str]
    minor: bool
    bot: bool
    diff: str
    dry_run: bool

    def native_args(self) -> tuple[str, str, int, str, list[str], bool, bool]:
        return (
            self.title,
            self.text,
            self.baserevid,
            self.summary,
            self.tags,
            self.minor,
            self.bot,
        )

    def result(self, done: tuple[str, int, int | None, int | None, bool]) -> EditResult:
        title, pageid, old_revid, new_revid, nochange = done
        return EditResult(
            title=title,
            saved=not nochange,
            diff="" if nochange else self.diff,
            pageid=pageid,
            old_revid=old_revid,
            new_revid=new_revid,
            nochange=nochange,
        )

    def proposed(self) -> EditResult:
        """What a dry run returns: the diff, nothing saved."""
        return EditResult(title=self.title, saved=False, diff=self.diff, dry_run=True)


def _page(found: tuple[str, int, int, str] | None) -> Revision | None:
    return None if found is None else Revision(*found)


class Wiki:
    """A wiki's Action API (``…/api.php``): pages in, edits out."""

    __slots__ = ("_native",)

    def __init__(
        self,
        api_url: str,
        user_agent: str | None = None,
        *,
        auth: TokenManager | str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        maxlag: int | None = 5,
    ) -> None:
        """``user_agent`` (``<app>/<version> (<contact>)``) defaults to
        ``WIKISUGGEST_USER_AGENT``. ``maxlag``: seconds of replica lag at which the wiki should
        refuse writes (``None`` leaves the parameter out); a refusal is retried after the
        wiki's ``Retry-After``, ``max_retries`` times."""
        retries = _args.retries(max_retries)
        token, manager = native_credentials(auth)
        self._native = NativeWiki(
            api_url=_args.text("api_url", api_url),
            user_agent=_args.user_agent(user_agent),
            timeout=_args.seconds("timeout", timeout),
            max_retries=retries,
            maxlag=None if maxlag is None else _args.integer("maxlag", maxlag),
            token=token,
            manager=manager,
        )

    @property
    def api_url(self) -> str:
        return self._native.api_url

    def __repr__(self) -> str:
        return f"Wiki({self.api_url!r})"

    def page(self, title: str | None = None, *, revid: int | None = None) -> Revision | None:
        """The page's current revision, or revision ``revid``; ``None`` if it does not exist."""
        return _page(self._native.page(*_page_args(title, revid)).send())

    async def page_async(
        self, title: str | None = None, *, revid: int | None = None
    ) -> Revision | None:
        """:meth:`page` for asyncio."""
        return _page(await self._native.page(*_page_args(title, revid)).send_async())

    def login(self, username: str, password: str) -> None:
        """Log in with a bot password (``User@appid`` and the generated password); later
        edits assert that the session is still logged in."""
        self._native.login(
            _args.text("username", username), _args.text("password", password)
        ).send()

    async def login_async(self, username: str, password: str) -> None:
        """:meth:`login` for asyncio."""
        await self._native.login(
            _args.text("username", username), _args.text("password", password)
        ).send_async()

    def save(self, applied: AppliedLinks, **options: Unpack[SaveOptions]) -> EditResult:
        """Save ``applied.wikitext`` as a new revision of the page (``title``, default
        ``applied.page_title``), based on ``applied.revid`` (or ``baserevid``), with
        ``summary`` (default ``"Add links"``), ``tags``, ``minor=True`` and ``bot=False``.
        ``dry_run=True`` returns the diff without contacting the wiki."""
        edit = _prepare(applied, options)
        if edit.dry_run:
            return edit.proposed()
        return edit.result(self._native.edit(*edit.native_args()).send())

    async def save_async(self, applied: AppliedLinks, **options: Unpack[SaveOptions]) -> EditResult:
        """:meth:`save` for asyncio."""
        edit = _prepare(applied, options)
        if edit.dry_run:
            return edit.proposed()
        return edit.result(await self._native.edit(*edit.native_args()).send_async())


def _page_args(title: Any, revid: Any) -> tuple[str | None, int | None]:
    if title is None and revid is None:
        raise InvalidParameter("give a title or a revision id", parameter="title")
    return _args.optional_text("title", title), _args.optional_integer("revid", revid)


def _prepare(applied: AppliedLinks, given: Mapping[str, Any]) -> _Edit:
    if not isinstance(applied, AppliedLinks):
        raise TypeError(f"applied must be AppliedLinks, got {type(applied).__name__}")
    options = _args.with_defaults(_SAVE_DEFAULTS, given)
    title, baserevid = options["title"], options["baserevid"]
    name = title if title is not None else applied.page_title
    if not name:
        raise InvalidParameter("the page title is unknown: pass title=", parameter="title")
    base = baserevid if baserevid is not None else applied.revid
    if base is None or _args.integer("baserevid", base) <= 0:
        # Without a base revision a concurrent edit would be overwritten silently.
        raise InvalidParameter(
            "the base revision is unknown: recommend with revid= or pass baserevid=",
            parameter="baserevid",
        )
    return _Edit(
        title=_args.text("title", name),
        text=applied.wikitext,
        baserevid=_args.integer("baserevid", base),
        summary=_args.text("summary", options["summary"]),
        tags=_args.text_list("tags", options["tags"]),
        minor=_args.flag("minor", options["minor"]),
        bot=_args.flag("bot", options["bot"]),
        diff=applied.diff(),
        dry_run=_args.flag("dry_run", options["dry_run"]),
    )
