"""The authorization-code flow in a browser, from a notebook or a script: the page opened,
the redirect received on a loopback port, the code exchanged through a client's token
endpoint (:func:`authorize_with_loopback`). The grant's pieces are
:mod:`wikisuggest.auth.code_grant`'s."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TextIO

from .. import _args
from ..auth.code_grant import LoopbackServer, authorization_url
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
    output: TextIO | None = None,
) -> Token:
    """Run the whole authorization-code flow from a notebook or script (blocking).

    Starts a :class:`LoopbackServer`, opens the authorization page with ``open_browser``
    (default: :func:`webbrowser.open`), waits for the redirect, checks its state and exchanges
    the code (with the PKCE verifier) through ``client``'s token endpoint. Returns the
    :class:`Token`; pass it to :meth:`TokenManager.from_refresh_token` to keep it alive.

    When no browser opens (a headless machine, a remote notebook), the address to open and
    the redirect it waits for are printed to ``output`` (default: standard error): open the
    address in any browser that can reach this machine's loopback port (on a remote machine,
    forward it first: ``ssh -L PORT:127.0.0.1:PORT host``).
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
        try:
            opened = open_browser(request.url)
        except Exception:  # a browser that cannot start is the headless case
            opened = False
        if opened is False:
            _print_manual_steps(request.url, server.redirect_uri, timeout, output)
        code = request.parse_redirect(server.wait(timeout))
    # The native call, blocking for either client: the browser step has already waited here.
    grant = _args.code_grant(
        code, client_id, client_secret, request.code_verifier, request.redirect_uri
    )
    return Token.from_dict(client.native.authorization_code(grant).send())


def _print_manual_steps(url: str, redirect_uri: str, timeout: float, output: TextIO | None) -> None:
    out = sys.stderr if output is None else output
    print(
        f"No browser opened. To authorize, open this address in a browser:\n\n    {url}\n\n"
        f"After you allow access, the wiki redirects the browser to {redirect_uri}; waiting "
        f"{timeout:.0f} s for it. On a remote machine, forward that port first "
        "(ssh -L PORT:127.0.0.1:PORT host, with the port above).",
        file=out,
        flush=True,
    )
