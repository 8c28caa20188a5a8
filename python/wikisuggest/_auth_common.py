"""Shared by the HTTP-library adapters: the bearer header and the token source."""

from __future__ import annotations

from .oauth import Token, TokenManager

#: Marks a request already replayed after a 401, so that it is replayed at most once.
REPLAYED = "_wikisuggest_replayed"


def bearer(token: Token) -> str:
    return f"Bearer {token.access_token}"


def manager(auth: TokenManager | str) -> TokenManager:
    """A token manager, or a personal API token wrapped as one."""
    return auth if isinstance(auth, TokenManager) else TokenManager.personal(auth)
