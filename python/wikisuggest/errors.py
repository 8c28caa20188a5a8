"""The exception tree of wikisuggest.

Every error the package raises derives from :class:`WikisuggestError`. Errors also derive from
the built-in class a generic handler would expect (``ValueError`` for bad arguments,
``TimeoutError`` for timeouts), so ``except ValueError`` keeps working.

Messages and attributes never contain credentials: URLs are shown without their query string,
tokens are never part of a request URL, and every credential a request carried (bearer token,
client secret, refresh token, code, verifier) is replaced by ``***`` in whatever the server
sent back, before it becomes a message, a ``body``, a ``detail`` or a log line.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AccessDenied",
    "Cancelled",
    "ClientClosed",
    "ConfigurationError",
    "DatasetError",
    "DecodeError",
    "EditConflict",
    "HTTPError",
    "InvalidClient",
    "InvalidGrant",
    "InvalidParameter",
    "InvalidRequest",
    "InvalidScope",
    "MediaWikiError",
    "MissingCatalogPart",
    "NotFound",
    "OAuthError",
    "RateLimited",
    "ReadDenied",
    "ReauthorizationRequired",
    "ResponseTooLarge",
    "ServerError",
    "StateMismatch",
    "Timeout",
    "TransportError",
    "Unauthorized",
    "UnauthorizedClient",
    "UnprocessableEntity",
    "UnsupportedDomain",
    "UnsupportedGrantType",
    "UnsupportedLanguage",
    "UnsupportedMediaType",
    "WikisuggestError",
    "WikitextError",
]


class WikisuggestError(Exception):
    """Base class of every error raised by wikisuggest."""

    def __init__(self, message: str = "", **attributes: Any) -> None:
        super().__init__(message)
        self.message = message
        for name, value in attributes.items():
            setattr(self, name, value)

    def __str__(self) -> str:
        return self.message


class InvalidParameter(WikisuggestError, ValueError):
    """An argument was rejected before anything was sent. ``parameter`` names it."""

    parameter: str | None = None


class ConfigurationError(WikisuggestError, ValueError):
    """The client is misconfigured (for example a User-Agent without operator contact)."""


class TransportError(WikisuggestError):
    """The request did not get a complete answer: connection refused, reset or dropped."""

    url: str | None = None


class Timeout(TransportError, TimeoutError):
    """No complete answer within the configured timeout."""


class ResponseTooLarge(TransportError):
    """The response body grew past the client's ``max_body_size`` (counted after
    decompression, so a small gzip that inflates without end stops here too). ``limit`` is
    the limit in bytes; reading stopped there and the rest was not received."""

    limit: int | None = None


class DecodeError(WikisuggestError, ValueError):
    """A successful response whose body is not what the contract describes.

    ``snippet`` holds the start of the body.
    """

    url: str | None = None
    status: int | None = None
    snippet: str | None = None


class ReauthorizationRequired(WikisuggestError):
    """The refresh token is no longer accepted; the user must authorize the app again."""


class Cancelled(WikisuggestError):
    """The work was cancelled (Ctrl-C or task cancellation) before this item finished."""


class ClientClosed(WikisuggestError, RuntimeError):
    """The client or :class:`~wikisuggest.LinkEngine` was closed (``close()`` or the end of its
    ``with`` block) before this call."""


class StateMismatch(WikisuggestError, ValueError):
    """The ``state`` of an authorization redirect is not the one that was sent."""


class DatasetError(WikisuggestError):
    """A local engine dataset is missing, unreadable, corrupt or fails its checksums."""


class MissingCatalogPart(DatasetError):
    """The translation catalog was built without the part a request needs (``pageviews`` for
    popular mode, ``cirrus`` for topics, countries and seeds, ``collections`` for page
    collections): fetch it with that part."""


class WikitextError(WikisuggestError, ValueError):
    """The local engine cannot process this page: the wikitext is not a string, or it holds
    markup on which the production engine fails too (it answers HTTP 500 there)."""


class UnsupportedLanguage(WikisuggestError, ValueError):
    """The local engine cannot tokenize this language. ``language`` is the code given.

    Every language code production accepts is tokenized (the 13 written without spaces with
    their SentencePiece models), so the engine does not raise this for them."""

    language: str | None = None


class MediaWikiError(WikisuggestError):
    """A wiki's Action API refused a request. ``code`` is MediaWiki's error code
    (``maxlag`` once the retries are used up, ``protectedpage``, ``login-failed``, ...)."""

    code: str | None = None


class EditConflict(WikisuggestError):
    """The page changed after the revision an edit was based on; nothing was saved.
    ``title`` and ``baserevid`` name the page and that revision: fetch the page again,
    recommend and apply on the new text."""

    title: str | None = None
    baserevid: int | None = None


class HTTPError(WikisuggestError):
    """The server answered with a status of 400 or more.

    Attributes: ``status``, ``reason`` (``httpReason`` when the body has one), ``method``,
    ``url`` (without query), ``body`` (decoded JSON, or the text of a non-JSON body),
    ``retry_after`` (seconds, when sent), ``request_id``, ``www_authenticate``, ``detail``
    (the explanation found in the body) and ``error_key`` (MediaWiki REST errors).
    """

    status: int = 0
    reason: str = ""
    method: str = ""
    url: str = ""
    body: Any = None
    retry_after: float | None = None
    request_id: str | None = None
    www_authenticate: str | None = None
    detail: str | None = None
    error_key: str | None = None

    @property
    def headers(self) -> dict[str, str]:
        """The response headers that matter for handling the error."""
        found = {
            "retry-after": None if self.retry_after is None else f"{self.retry_after:g}",
            "x-request-id": self.request_id,
            "www-authenticate": self.www_authenticate,
        }
        return {k: v for k, v in found.items() if v is not None}


class Unauthorized(HTTPError):
    """401: credentials missing, invalid or expired (``reason`` is the gateway's ``httpReason``)."""


class ReadDenied(HTTPError):
    """``rest-read-denied``: the project does not recognise the account yet.

    Logging in to that project once with the same account resolves it.
    """


class NotFound(HTTPError):
    """404."""


class UnsupportedDomain(HTTPError):
    """The wiki has no link-recommendation model (400 or 404 naming the supported wikis)."""

    @property
    def valid_project_domain_pairs(self) -> list[str]:
        body = self.body if isinstance(self.body, dict) else {}
        pairs = body.get("valid_project_domain_pairs") or []
        return [str(p) for p in pairs]


class UnsupportedMediaType(HTTPError):
    """415, e.g. ``rest-unsupported-content-type`` from the token endpoint."""

    @property
    def message_translations(self) -> dict[str, str]:
        body = self.body if isinstance(self.body, dict) else {}
        translations = body.get("messageTranslations") or {}
        return {str(k): str(v) for k, v in translations.items()}


class UnprocessableEntity(HTTPError):
    """422: the service rejected a parameter; ``errors`` lists its validation entries."""

    @property
    def errors(self) -> list[dict[str, Any]]:
        body = self.body if isinstance(self.body, dict) else {}
        detail = body.get("detail")
        return [d for d in detail if isinstance(d, dict)] if isinstance(detail, list) else []


class RateLimited(HTTPError):
    """429. ``retry_after`` is the wait the server asked for, in seconds (or None)."""


class ServerError(HTTPError):
    """5xx."""


class OAuthError(HTTPError):
    """An OAuth 2.0 error: ``error``, ``error_description``, ``hint``.

    From the token endpoint it carries the HTTP attributes too; from an authorization redirect
    (see :func:`wikisuggest.parse_redirect`) there was no HTTP error, and ``status`` is 0.
    """

    error: str | None = None
    error_description: str | None = None
    hint: str | None = None


class InvalidClient(OAuthError):
    """401 ``invalid_client``: unknown client id, wrong secret, or grant not allowed."""


class InvalidGrant(OAuthError):
    """``invalid_grant``: the code or refresh token is expired, revoked or not this client's."""


class InvalidRequest(OAuthError):
    """``invalid_request``: a parameter is missing or malformed."""


class InvalidScope(OAuthError):
    """``invalid_scope``."""


class UnsupportedGrantType(OAuthError):
    """``unsupported_grant_type``."""


class UnauthorizedClient(OAuthError):
    """``unauthorized_client``; at the authorize step this is how a user's cancel arrives."""


class AccessDenied(OAuthError):
    """``access_denied``."""
