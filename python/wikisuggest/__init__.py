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
from .batch import AsyncBatch, BatchInterrupted, BatchItem, BatchResults
from .client import DEFAULT_AUTH_URL, DEFAULT_BASE_URL, AsyncClient, Client
from .engine import CandidateScore, EngineInfo, LinkEngine
from .errors import (
    AccessDenied,
    Cancelled,
    ClientClosed,
    ConfigurationError,
    DatasetError,
    DecodeError,
    HTTPError,
    InvalidClient,
    InvalidGrant,
    InvalidParameter,
    InvalidRequest,
    InvalidScope,
    NotFound,
    OAuthError,
    RateLimited,
    ReadDenied,
    ReauthorizationRequired,
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
    DatasetChecksums,
    LinkRecommendation,
    LinkRecommendationSet,
    Meta,
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
    "DatasetChecksums",
    "DatasetError",
    "DecodeError",
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
    "Meta",
    "NotFound",
    "OAuthError",
    "RateLimited",
    "ReadDenied",
    "ReauthorizationRequired",
    "Server",
    "ServerError",
    "StateMismatch",
    "Timeout",
    "Token",
    "TokenManager",
    "TokenStore",
    "TransportError",
    "TranslationRecommendation",
    "Unauthorized",
    "UnauthorizedClient",
    "UnprocessableEntity",
    "UnsupportedDomain",
    "UnsupportedGrantType",
    "UnsupportedLanguage",
    "UnsupportedMediaType",
    "WikisuggestError",
    "WikitextError",
    "__version__",
    "authorization_url",
    "authorize_with_loopback",
    "parse_redirect",
    "datasets",
    "serve",
]
