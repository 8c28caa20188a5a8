"""Configuration from environment variables, for bots deployed with their settings outside the
code. An explicit argument always wins over the environment.

``WIKISUGGEST_USER_AGENT``      the User-Agent (``<app>/<version> (<contact>)``)
``WIKISUGGEST_BASE_URL``        where the services live (default ``https://api.wikimedia.org``)
``WIKISUGGEST_AUTH_URL``        the OAuth 2.0 server (default ``https://meta.wikimedia.org``)
``WIKISUGGEST_TOKEN``           a personal API token
``WIKISUGGEST_CLIENT_ID`` and ``WIKISUGGEST_CLIENT_SECRET``
                                 client credentials; tokens are requested and renewed as needed
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from ..auth.manager import TokenManager


def setting(name: str, explicit: str | None, default: str) -> str:
    if explicit is not None:
        return explicit
    return os.environ.get(name) or default


def auth(explicit: TokenManager | str | None, auth_url: str) -> TokenManager | str | None:
    """The explicit ``auth``, else credentials from the environment, else None."""
    if explicit is not None:
        return explicit
    token = os.environ.get("WIKISUGGEST_TOKEN")
    if token:
        return token
    client_id = os.environ.get("WIKISUGGEST_CLIENT_ID")
    client_secret = os.environ.get("WIKISUGGEST_CLIENT_SECRET")
    if client_id and client_secret:
        from ..auth.manager import TokenManager

        return TokenManager.client_credentials(client_id, client_secret, auth_url=auth_url)
    if client_id or client_secret:
        raise ConfigurationError(
            "WIKISUGGEST_CLIENT_ID and WIKISUGGEST_CLIENT_SECRET must be set together"
        )
    return None
