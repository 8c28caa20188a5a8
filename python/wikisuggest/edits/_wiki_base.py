"""What ``Wiki`` and ``AsyncWiki`` share: construction, the records they return and the checks
of a save's arguments, written once for both."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from .. import _args
from .._native import NativeWiki
from ..auth.manager import TokenManager, native_credentials
from ..errors import DecodeError, InvalidParameter
from .apply import AppliedLinks
from .titles import InvalidTitle, SiteInfo, link_title

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["EditResult", "Revision", "SaveOptions", "WikiBase"]

DEFAULT_SUMMARY = "Add links"


@dataclass(frozen=True, slots=True)
class Revision:
    """One revision of a page: what link recommendations are computed from."""

    title: str
    pageid: int
    revid: int
    wikitext: str

    def __repr__(self) -> str:
        ids = f"pageid={self.pageid}, revid={self.revid}"
        return f"Revision(title={self.title!r}, {ids}, wikitext: {len(self.wikitext):,} characters)"


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

    def __repr__(self) -> str:
        done = "dry run" if self.dry_run else "saved" if self.saved else "not saved"
        revisions = "" if self.new_revid is None else f", {self.old_revid} → {self.new_revid}"
        lines = self.diff.count("\n")
        return f"EditResult({self.title!r}, {done}{revisions}, diff: {lines} lines)"


class SaveOptions(TypedDict, total=False):
    """Keyword arguments of :meth:`Wiki.save` and :meth:`AsyncWiki.save`; the defaults are
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
class Edit:
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
    targets: tuple[str, ...]

    def check_targets(self, site: SiteInfo) -> None:
        """Refuse the edit if the wiki reads any placed link as something other than an
        article link (its own namespace names and interwiki prefixes)."""
        for target in self.targets:
            try:
                link_title(target, site)
            except InvalidTitle as err:
                raise InvalidTitle(f"not saved: on this wiki, {err}", parameter="applied") from None

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


def revision(found: tuple[str, int, int, str] | None) -> Revision | None:
    return None if found is None else Revision(*found)


def site_info(found: dict[str, Any]) -> SiteInfo:
    """The record of a ``siteinfo`` answer (the native dict holds every field by name)."""
    lists = ("namespace_names", "interwiki_prefixes", "behaviour_switches")
    fields: dict[str, Any] = {k: tuple(v) if k in lists else v for k, v in found.items()}
    return SiteInfo(**fields)


def read_args(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    if not isinstance(params, Mapping):
        raise InvalidParameter("params must be a mapping", parameter="params")
    return [(_args.text("params", k), _args.text(str(k), v)) for k, v in params.items()]


def read_body(text: str) -> dict[str, Any]:
    """The JSON body of a read, which the API always makes an object."""
    body = json.loads(text)
    if not isinstance(body, dict):
        raise DecodeError("the wiki answered with JSON that is not an object")
    return body


def page_args(title: Any, revid: Any) -> tuple[str | None, int | None]:
    if title is None and revid is None:
        raise InvalidParameter("give a title or a revision id", parameter="title")
    revid = _args.optional_integer("revid", revid)
    if revid is not None and revid <= 0:
        raise InvalidParameter(f"revid must be positive, got {revid}", parameter="revid")
    return _args.optional_text("title", title), revid


def login_args(username: Any, password: Any) -> tuple[str, str]:
    return _args.text("username", username), _args.text("password", password)


def prepare(applied: AppliedLinks, given: Mapping[str, Any]) -> Edit:
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
    return Edit(
        title=_args.text("title", name),
        text=_args.text("text", applied.wikitext),
        baserevid=_args.integer("baserevid", base),
        summary=_args.text("summary", options["summary"]),
        tags=_args.text_list("tags", options["tags"]),
        minor=_args.flag("minor", options["minor"]),
        bot=_args.flag("bot", options["bot"]),
        diff=applied.diff(),
        dry_run=_args.flag("dry_run", options["dry_run"]),
        targets=tuple(item.link.link_target for item in applied.applied),
    )


class WikiBase:
    """Construction and properties of both wiki clients."""

    __slots__ = ("_native", "_site")

    def __init__(
        self,
        api_url: str,
        user_agent: str | None = None,
        *,
        auth: TokenManager | str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        maxlag: int | None = 5,
        max_body_size: int | None = None,
        allow_insecure_http: bool = False,
    ) -> None:
        """``user_agent`` (``<app>/<version> (<contact>)``) defaults to
        ``WIKISUGGEST_USER_AGENT``. ``maxlag``: seconds of replica lag at which the wiki should
        refuse writes (``None`` leaves the parameter out); a refusal is retried after the
        wiki's ``Retry-After``, ``max_retries`` times. ``max_body_size``: the largest answer
        read, in bytes after decompression (default 64 MiB). Credentials (``auth``, a login)
        are refused over plain ``http://`` to a host other than this machine unless
        ``allow_insecure_http`` is set."""
        retries = _args.retries(max_retries)
        token, manager = native_credentials(auth)
        self._site: SiteInfo | None = None
        self._native = NativeWiki(
            api_url=_args.text("api_url", api_url),
            user_agent=_args.user_agent(user_agent) or "",
            timeout=_args.seconds("timeout", timeout),
            max_retries=retries,
            maxlag=None if maxlag is None else _args.integer("maxlag", maxlag),
            token=token,
            manager=manager,
            max_body_size=None
            if max_body_size is None
            else _args.integer("max_body_size", max_body_size),
            allow_insecure_http=_args.flag("allow_insecure_http", allow_insecure_http),
        )

    @property
    def api_url(self) -> str:
        return self._native.api_url

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.api_url!r})"


class DeprecatedAsyncMethods:
    """``Wiki.page_async``, ``save_async`` and ``login_async`` of 0.1: use ``AsyncWiki``."""

    __slots__ = ()
    _native: NativeWiki
    _site: SiteInfo | None

    @staticmethod
    def _deprecated(name: str) -> None:
        warnings.warn(
            f"Wiki.{name}_async is deprecated and will be removed in the next release: "
            f"use wikisuggest.AsyncWiki(...).{name}",
            DeprecationWarning,
            stacklevel=3,
        )

    async def page_async(
        self, title: str | None = None, *, revid: int | None = None
    ) -> Revision | None:
        """Deprecated: :meth:`AsyncWiki.page`."""
        self._deprecated("page")
        return revision(await self._native.page(*page_args(title, revid)).send_async())

    async def login_async(self, username: str, password: str) -> None:
        """Deprecated: :meth:`AsyncWiki.login`."""
        self._deprecated("login")
        await self._native.login(*login_args(username, password)).send_async()

    async def save_async(self, applied: AppliedLinks, **options: Unpack[SaveOptions]) -> EditResult:
        """Deprecated: :meth:`AsyncWiki.save`."""
        self._deprecated("save")
        edit = prepare(applied, options)
        if edit.dry_run:
            return edit.proposed()
        site = self._site or site_info(await self._native.siteinfo().send_async())
        edit.check_targets(site)
        return edit.result(await self._native.edit(*edit.native_args()).send_async())
