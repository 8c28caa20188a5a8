"""wikisuggest: Wikimedia's link and translation recommendations from Python.

>>> import wikisuggest
>>> client = wikisuggest.Client("MyTool/1.0 (https://example.org; me@example.org)")
>>> result = client.link_recommendations("wikipedia", "en", "Cat")  # doctest: +SKIP

The same recommendations computed locally, offline (see :mod:`wikisuggest.engine`):

>>> engine = wikisuggest.LinkEngine.default()  # doctest: +SKIP
>>> result = engine.recommend(wikitext, "Cat")  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from typing import Any

from . import _aliases, datasets
from ._native import __version__
from .auth import (
    AuthorizationRequest,
    FileTokenStore,
    LoopbackServer,
    Token,
    TokenManager,
    TokenStore,
    authorization_url,
    parse_redirect,
)
from .batch import AsyncBatch, BatchInterrupted, BatchItem, BatchResults
from .client import (
    DEFAULT_AUTH_URL,
    DEFAULT_BASE_URL,
    AsyncClient,
    Client,
    authorize_with_loopback,
)
from .edits import (
    AppliedLink,
    AppliedLinks,
    AsyncWiki,
    EditResult,
    InvalidTitle,
    Revision,
    SiteInfo,
    SkippedLink,
    SkipReason,
    Wiki,
    apply_links,
)
from .engine import CandidateScore, EngineInfo, LinkEngine
from .errors import (
    AccessDenied,
    Cancelled,
    ClientClosed,
    ConfigurationError,
    DatasetError,
    DecodeError,
    EditConflict,
    HTTPError,
    InvalidClient,
    InvalidGrant,
    InvalidParameter,
    InvalidRequest,
    InvalidScope,
    MediaWikiError,
    NotFound,
    OAuthError,
    RateLimited,
    ReadDenied,
    ReauthorizationRequired,
    ResponseTooLarge,
    ServerError,
    StateMismatch,
    Timeout,
    TransportError,
    Unauthorized,
    UnauthorizedClient,
    UnprocessableEntity,
    UnsupportedDomain,
    UnsupportedGrantType,
    UnsupportedLanguage,
    UnsupportedMediaType,
    WikisuggestError,
    WikitextError,
)
from .records import (
    CollectionMembership,
    DatasetChecksums,
    LinkRecommendation,
    LinkRecommendationSet,
    Meta,
    PageCollection,
    PageCollectionGroups,
    PageCollectionMetadata,
    TranslationPage,
    TranslationRecommendation,
)
from .server import Server, serve

__all__ = [
    "DEFAULT_AUTH_URL",
    "DEFAULT_BASE_URL",
    "AccessDenied",
    "AppliedLink",
    "AppliedLinks",
    "AsyncBatch",
    "AsyncClient",
    "AsyncWiki",
    "AuthorizationRequest",
    "BatchInterrupted",
    "BatchItem",
    "BatchResults",
    "Cancelled",
    "CandidateScore",
    "Client",
    "ClientClosed",
    "CollectionMembership",
    "ConfigurationError",
    "DatasetChecksums",
    "DatasetError",
    "DecodeError",
    "EditConflict",
    "EditResult",
    "EngineInfo",
    "FileTokenStore",
    "HTTPError",
    "InvalidClient",
    "InvalidGrant",
    "InvalidParameter",
    "InvalidRequest",
    "InvalidScope",
    "InvalidTitle",
    "LinkEngine",
    "LinkRecommendation",
    "LinkRecommendationSet",
    "LoopbackServer",
    "MediaWikiError",
    "Meta",
    "NotFound",
    "OAuthError",
    "PageCollection",
    "PageCollectionGroups",
    "PageCollectionMetadata",
    "RateLimited",
    "ReadDenied",
    "ReauthorizationRequired",
    "ResponseTooLarge",
    "Revision",
    "Server",
    "ServerError",
    "SiteInfo",
    "SkipReason",
    "SkippedLink",
    "StateMismatch",
    "Timeout",
    "Token",
    "TokenManager",
    "TokenStore",
    "TranslationPage",
    "TranslationRecommendation",
    "TransportError",
    "Unauthorized",
    "UnauthorizedClient",
    "UnprocessableEntity",
    "UnsupportedDomain",
    "UnsupportedGrantType",
    "UnsupportedLanguage",
    "UnsupportedMediaType",
    "Wiki",
    "WikisuggestError",
    "WikitextError",
    "__version__",
    "apply_links",
    "authorization_url",
    "authorize_with_loopback",
    "datasets",
    "parse_redirect",
    "serve",
]

_aliases.install()


def __getattr__(name: str) -> Any:
    if name == "Page":
        warnings.warn(
            "wikisuggest.Page is deprecated: it is wikisuggest.Revision (a wiki's revision, "
            "as Wiki.page returns it); the engine's input is wikisuggest.engine.Page",
            DeprecationWarning,
            stacklevel=2,
        )
        return Revision
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
