"""The whole authorization-code flow from a notebook or script, through a client's token
endpoint: :func:`authorize_with_loopback`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .. import _args
from ..auth.authorize import LoopbackServer, authorization_url
from ..auth.tokens import Token

if TYPE_CHECKING:
    from ._async import AsyncClient
    from ._sync import Client

__all__ = ["authorize_with_loopback"]


def authorize_with_loopback(
    client: Client | AsyncClient,
    client_id: str,
    client_secret: str | None = None,
    *,
    scope: str | Iterable[str] | None = None,
    open_browser: Callable[[str], Any] | None = None,
    timeout: float = 300.0,
) -> Token:
    """Run the whole authorization-code flow from a notebook or script (blocking).

    Starts a :class:`LoopbackServer`, opens the authorization page with ``open_browser``
    (default: :func:`webbrowser.open`), waits for the redirect, checks its state and exchanges
    the code (with the PKCE verifier) through ``client``'s token endpoint. Returns the
    :class:`Token`; pass it to :meth:`TokenManager.from_refresh_token` to keep it alive.
    """
    if open_browser is None:
        import webbrowser

        open_browser = webbrowser.open
    with LoopbackServer() as server:
        request = authorization_url(
            client_id,
            redirect_uri=server.redirect_uri,
            scope=scope,
            auth_url=client.auth_url,
        )
        open_browser(request.url)
        code = request.parse_redirect(server.wait(timeout))
    return Token.from_dict(
        client._open()
        .authorization_code(
            code,
            _args.text("client_id", client_id),
            _args.optional_text("client_secret", client_secret),
            request.code_verifier,
            request.redirect_uri,
        )
        .send()
    )
