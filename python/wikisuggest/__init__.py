"""wikisuggest: Wikimedia's link and translation recommendations from Python.

>>> import wikisuggest
>>> client = wikisuggest.Client("MyTool/1.0 (https://example.org; me@example.org)")
>>> result = client.link_recommendations("wikipedia", "en", "Cat")  # doctest: +SKIP

The same recommendations computed locally, offline (see :mod:`wikisuggest.engine`):

>>> engine = wikisuggest.LinkEngine.default()  # doctest: +SKIP
>>> result = engine.recommend(wikitext, "Cat")  # doctest: +SKIP
"""

from __future__ import annotations

from . import datasets
from ._native import __version__
from .apply import AppliedLink, AppliedLinks, SkippedLink, SkipReason, apply_links
from .batch import AsyncBatch, BatchInterrupted, BatchItem, BatchResults
from .client import DEFAULT_AUTH_URL, DEFAULT_BASE_URL, AsyncClient, Client
from .edit import EditResult, Page, Wiki
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
from .models import (
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
from .oauth import (
    AuthorizationRequest,
    FileTokenStore,
    LoopbackServer,
    Token,
    TokenManager,
    TokenStore,
    authorization_url,
    authorize_with_loopback,
    parse_redirect,
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
    "AuthorizationRequest",
    "BatchInterrupted",
    "BatchItem",
    "BatchResults",
    "Cancelled",
    "CandidateScore",
    "Client",
    "ClientClosed",
    "ConfigurationError",
    "CollectionMembership",
    "DatasetChecksums",
    "DatasetError",
    "DecodeError",
    "EditConflict",
    "EditResult",
    "FileTokenStore",
    "EngineInfo",
    "HTTPError",
    "InvalidClient",
    "InvalidGrant",
    "InvalidParameter",
    "InvalidRequest",
    "InvalidScope",
    "LinkEngine",
    "LinkRecommendation",
    "LinkRecommendationSet",
    "LoopbackServer",
    "MediaWikiError",
    "Meta",
    "NotFound",
    "OAuthError",
    "Page",
    "PageCollection",
    "PageCollectionGroups",
    "PageCollectionMetadata",
    "RateLimited",
    "ReadDenied",
    "ReauthorizationRequired",
    "ResponseTooLarge",
    "Server",
    "ServerError",
    "SkipReason",
    "SkippedLink",
    "StateMismatch",
    "Timeout",
    "Token",
    "TokenManager",
    "TokenStore",
    "TransportError",
    "TranslationPage",
    "TranslationRecommendation",
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
    "parse_redirect",
    "datasets",
    "serve",
]
