"""wikisuggest: Wikimedia's link and translation recommendations from Python.

>>> import wikisuggest
>>> client = wikisuggest.Client("MyTool/1.0 (https://example.org; me@example.org)")
>>> result = client.link_recommendations("wikipedia", "en", "Cat")  # doctest: +SKIP

Translation recommendations for any wiki pair from the public dumps, locally (see
:mod:`wikisuggest.translation`): ``wikisuggest.TranslationEngine.published("enwiki")``.

The same link recommendations computed locally, offline (see :mod:`wikisuggest.engine`):

>>> engine = wikisuggest.LinkEngine.default()  # doctest: +SKIP
>>> result = engine.recommend(wikitext, "Cat")  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from typing import Any

from . import _aliases, datasets, errors
from ._native import (
    ENGINE_DEFAULTS,
    LINK_DEFAULTS,
    SIMILAR_DEFAULTS,
    TRANSLATION_DEFAULTS,
    __version__,
)
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
from .batch import AsyncBatch, Batch, BatchInterrupted, BatchItem, BatchResults
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
from .edits.audit import AuditQueue, audit_edits
from .edits.community import CommunityConfiguration
from .edits.wikidata import fill_classes
from .engine import CandidateScore, EngineInfo, LinkEngine
from .engine.preview import RulesPreview, preview_rules
from .engine.rules import (
    ENWIKI_CLASSES,
    PRODUCTION_CLASSES,
    ExcludedLink,
    Exclusion,
    ExplainedResult,
    LinkRules,
)
from .errors import *  # noqa: F403 (every error class, listed once in errors.__all__)
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
from .translation import TranslationEngine

__all__ = [
    "DEFAULT_AUTH_URL",
    "DEFAULT_BASE_URL",
    "ENGINE_DEFAULTS",
    "ENWIKI_CLASSES",
    "LINK_DEFAULTS",
    "PRODUCTION_CLASSES",
    "SIMILAR_DEFAULTS",
    "TRANSLATION_DEFAULTS",
    "AppliedLink",
    "AppliedLinks",
    "AsyncBatch",
    "AsyncClient",
    "AsyncWiki",
    "AuditQueue",
    "AuthorizationRequest",
    "Batch",
    "BatchInterrupted",
    "BatchItem",
    "BatchResults",
    "CandidateScore",
    "Client",
    "CollectionMembership",
    "CommunityConfiguration",
    "DatasetChecksums",
    "EditResult",
    "EngineInfo",
    "ExcludedLink",
    "Exclusion",
    "ExplainedResult",
    "FileTokenStore",
    "InvalidTitle",
    "LinkEngine",
    "LinkRecommendation",
    "LinkRecommendationSet",
    "LinkRules",
    "LoopbackServer",
    "Meta",
    "PageCollection",
    "PageCollectionGroups",
    "PageCollectionMetadata",
    "Revision",
    "RulesPreview",
    "Server",
    "SiteInfo",
    "SkipReason",
    "SkippedLink",
    "Token",
    "TokenManager",
    "TokenStore",
    "TranslationEngine",
    "TranslationPage",
    "TranslationRecommendation",
    "Wiki",
    "__version__",
    "apply_links",
    "audit_edits",
    "authorization_url",
    "authorize_with_loopback",
    "datasets",
    "fill_classes",
    "parse_redirect",
    "preview_rules",
    "serve",
]
# Every error class, at the top as in ``wikisuggest.errors``.
__all__ += errors.__all__

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
