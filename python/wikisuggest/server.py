"""The reference server: the whole service contract (link and translation recommendations,
OAuth 2.0, gateway token checks and rate limits) served locally from one base URL.

>>> import wikisuggest
>>> with wikisuggest.Server(translation={"enwiki": catalog_path}) as server:  # doctest: +SKIP
...     client = wikisuggest.Client("Me/1.0 (me@example.org)", base_url=server.url)
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypedDict, Union, overload

from ._native import NativeServer

if TYPE_CHECKING:
    from typing_extensions import Unpack

PathLike = Union[str, "os.PathLike[str]"]
TranslationShape = Literal["array", "envelope"]
#: Translation catalogs: a catalog folder or a folder of them, several of those (each may be a
#: ``(wiki id, folder)`` pair), or wiki id → catalog folder.
TranslationCatalogs = Union[  # noqa: UP007 (PathLike is a Union of a string and a class)
    PathLike, Sequence[PathLike | tuple[str | None, PathLike]], Mapping[str, PathLike]
]


class ServerOptions(TypedDict, total=False):
    """The keyword arguments of :class:`Server` other than ``port`` (defaults there); what
    :func:`serve` passes on, so the two cannot drift apart."""

    host: str
    datasets: PathLike | None
    pages: PathLike | None
    wiki_apis: Mapping[str, str] | None
    rules: Mapping[str, PathLike] | None
    translation: TranslationCatalogs | None
    translation_shape: TranslationShape
    clients: PathLike | None
    seed: int | None
    access_token_ttl: float
    rate_limit: int
    anonymous_rate_limit: int
    max_body_bytes: int
    request_timeout: float
    threads: int
    max_connections: int
    max_connections_per_address: int
    link_time_budget: float


class Server:
    """A running server on a background thread; stops on :meth:`stop` or leaving a ``with``.

    ``port=0`` picks a free port (read it from :attr:`url`). ``datasets`` holds one folder
    per wiki (``enwiki/``) in the native or published format; ``pages`` is a MediaWiki XML
    dump (``.xml``/``.xml.bz2``) or a folder of ``Title.wikitext`` files that GET link
    requests read; ``wiki_apis`` maps wiki ids to MediaWiki Action API URLs
    (``{"enwiki": "https://en.wikipedia.org/w/api.php"}``) from which GET link requests fetch
    the page's current (or requested) revision instead, as production does; ``rules`` maps
    wiki ids to rule files (see :class:`~wikisuggest.LinkRules`) applied to every link request
    for that wiki; ``translation`` the translation catalogs (built from the public dumps, see
    :class:`~wikisuggest.TranslationEngine`): a catalog folder, a folder of them, several, or
    a mapping of wiki ids to catalog folders; answered as the contract's bare array
    (``translation_shape="array"``) or as the service's envelope with every item field and
    the continuation (``"envelope"``); ``clients`` a TOML file of OAuth clients and personal
    tokens. ``seed`` makes shuffled translation results reproducible. ``access_token_ttl`` is
    in seconds; rate limits are requests per minute per app and per anonymous User-Agent.
    ``max_connections`` (0: sized from the process's descriptor limit),
    ``max_connections_per_address`` (0: an eighth of that) and ``link_time_budget`` (seconds
    of engine time per link request) are described in the self-hosting guide, with
    :meth:`reload_datasets`.
    """

    __slots__ = ("_native",)

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        datasets: PathLike | None = None,
        pages: PathLike | None = None,
        wiki_apis: Mapping[str, str] | None = None,
        rules: Mapping[str, PathLike] | None = None,
        translation: TranslationCatalogs | None = None,
        clients: PathLike | None = None,
        seed: int | None = None,
        access_token_ttl: float = 14400.0,
        rate_limit: int = 200,
        anonymous_rate_limit: int = 200,
        translation_shape: TranslationShape = "array",
        max_body_bytes: int = 4 * 1024 * 1024,
        request_timeout: float = 30.0,
        threads: int = 2,
        max_connections: int = 0,
        max_connections_per_address: int = 0,
        link_time_budget: float = 5.0,
    ) -> None:
        self._native = NativeServer(
            host=host,
            port=port,
            datasets=_path(datasets),
            pages=_path(pages),
            wiki_apis=[(str(k), str(v)) for k, v in (wiki_apis or {}).items()],
            rules=[(str(k), os.fspath(v)) for k, v in (rules or {}).items()],
            translation_catalogs=_catalogs(translation),
            clients=_path(clients),
            seed=seed,
            access_token_ttl=float(access_token_ttl),
            rate_limit=rate_limit,
            anonymous_rate_limit=anonymous_rate_limit,
            translation_shape=translation_shape,
            max_body_bytes=max_body_bytes,
            request_timeout=float(request_timeout),
            threads=threads,
            max_connections=max_connections,
            max_connections_per_address=max_connections_per_address,
            link_time_budget=float(link_time_budget),
        )

    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:41234``."""
        return self._native.url

    @property
    def wikis(self) -> tuple[str, ...]:
        """The wiki ids served with link datasets, in order (empty without ``datasets``)."""
        return tuple(self._native.wikis)

    @property
    def running(self) -> bool:
        return self._native.running

    def reload_datasets(self) -> dict[str, str]:
        """Open again the link datasets whose files were replaced since they were opened
        (a new file renamed into place, or one copied over in place), each verified and then
        swapped in; a wiki whose new files fail keeps answering from its old ones. Returns
        ``{wiki id: "unchanged" | "reopened" | "failed: <reason>"}``."""
        return dict(self._native.reload_datasets())

    def stop(self) -> None:
        """Stop accepting, finish requests in flight, and wait. Safe to call twice."""
        self._native.stop()

    def close(self) -> None:
        """The same as :meth:`stop`, for code that closes what it opens."""
        self.stop()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<wikisuggest.Server {self.url} {state}>"


def _catalogs(value: TranslationCatalogs | None) -> list[tuple[str | None, str]]:
    """The translation catalogs as ``(wiki or None, path)`` pairs."""
    if value is None:
        return []
    if isinstance(value, Mapping):
        return [(str(wiki), os.fspath(path)) for wiki, path in value.items()]
    if isinstance(value, (str, os.PathLike)):
        return [(None, os.fspath(value))]
    out: list[tuple[str | None, str]] = []
    for item in value:
        if isinstance(item, tuple):
            wiki, path = item
            out.append((None if wiki is None else str(wiki), os.fspath(path)))
        else:
            out.append((None, os.fspath(item)))
    return out


def _path(value: PathLike | None) -> str | None:
    return None if value is None else os.fspath(value)


@overload
def serve(
    *, port: int = ..., background: Literal[False] = ..., **options: Unpack[ServerOptions]
) -> None: ...
@overload
def serve(
    *, port: int = ..., background: Literal[True], **options: Unpack[ServerOptions]
) -> Server: ...
def serve(
    *, port: int = 8080, background: bool = False, **options: Unpack[ServerOptions]
) -> Server | None:
    """Serve until interrupted (Ctrl-C), or with ``background=True`` return the running
    :class:`Server` (use it in a ``with`` block). Every other argument is :class:`Server`'s,
    with its default; only ``port`` defaults to 8080 here instead of a free port. In the
    foreground, SIGHUP calls :meth:`Server.reload_datasets`."""
    server = Server(port=port, **options)
    if background:
        return server
    hangup = getattr(signal, "SIGHUP", None)
    if threading.current_thread() is not threading.main_thread():
        hangup = None  # signal handlers are the main thread's
    previous = signal.signal(hangup, lambda *_: _reload(server)) if hangup else None
    try:
        # Inside the `try`: an interrupt sent as soon as this line is read is caught too.
        # The address alone on the first line: scripts read it from there.
        print(f"Serving on {server.url}", flush=True)
        print(f"Link datasets: {', '.join(server.wikis) or 'none'}", flush=True)
        while server.running:
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        if hangup:
            # `None`: the previous handler was not Python's; the default is the best guess.
            signal.signal(hangup, signal.SIG_DFL if previous is None else previous)
    return None


def _reload(server: Server) -> None:
    for wiki, outcome in server.reload_datasets().items():
        print(f"dataset of {wiki}: {outcome}", file=sys.stderr, flush=True)
