"""The pieces of the authorization-code grant with PKCE: the address that asks a user to
authorize an app (:func:`authorization_url`), the code read from the redirect
(:func:`parse_redirect`), and a :class:`LoopbackServer` that receives the browser's redirect.
The whole flow in a browser is :func:`wikisuggest.authorize_with_loopback`
(:mod:`wikisuggest.client.browser_flow`).
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import _args
from .._native import authorization_url as native_authorization_url
from .._native import parse_redirect as native_parse_redirect
from ..errors import InvalidParameter, WikisuggestError
from .manager import DEFAULT_AUTH_URL

__all__ = ["AuthorizationRequest", "LoopbackServer", "authorization_url", "parse_redirect"]


@dataclass(frozen=True, slots=True)
class AuthorizationRequest:
    """Result of :func:`authorization_url`: open ``url`` in a browser, keep the rest.

    ``state`` is checked when the browser comes back; ``code_verifier`` goes with the code to
    the token endpoint (``Client.authorization_code(..., code_verifier=...)``).
    """

    url: str
    state: str
    code_verifier: str = field(repr=False)
    redirect_uri: str | None = None

    def parse_redirect(self, redirect: str) -> str:
        """The authorization code from the redirect, checked against this request's state."""
        return parse_redirect(redirect, self.state)


def _scope(scope: str | Iterable[str] | None) -> str | None:
    if scope is None:
        return None
    return " ".join(_args.text_list("scope", scope)) or None


def authorization_url(
    client_id: str,
    redirect_uri: str | None = None,
    scope: str | Iterable[str] | None = None,
    state: str | None = None,
    *,
    auth_url: str = DEFAULT_AUTH_URL,
) -> AuthorizationRequest:
    """Build the URL that asks a user to authorize the app, with PKCE (S256) and a ``state``.

    ``scope`` is a space-separated string or a list of grant names (MediaWiki uses every grant
    the app was registered with when it is omitted). ``state`` is generated unless given.
    """
    url, state_out, verifier = native_authorization_url(
        _args.text("auth_url", auth_url),
        _args.text("client_id", client_id),
        _args.optional_text("redirect_uri", redirect_uri),
        _scope(scope),
        _args.optional_text("state", state),
    )
    return AuthorizationRequest(url, state_out, verifier, redirect_uri)


def parse_redirect(redirect: str, expected_state: str) -> str:
    """The authorization code in ``redirect`` (the URL the browser was sent back to, or its
    query string).

    Raises :class:`StateMismatch` when its ``state`` is not ``expected_state`` (compared in
    constant time), and an :class:`OAuthError` subclass when the server sent an error instead:
    a user who refuses arrives as :class:`UnauthorizedClient` (MediaWiki's code for it) or
    :class:`AccessDenied`.
    """
    return native_parse_redirect(
        _args.text("redirect", redirect), _args.text("expected_state", expected_state)
    )


_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>wikisuggest</title>"
    b"<p>Authorization finished. You can close this window.</p>"
)


class _RedirectHandler(http.server.BaseHTTPRequestHandler):
    server: _RedirectServer

    def do_GET(self) -> None:
        path, _, _ = self.path.partition("?")
        if path != self.server.callback_path:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(_DONE_PAGE)))
        self.end_headers()
        self.wfile.write(_DONE_PAGE)
        self.server.deliver(self.path)

    def log_message(self, format: str, *args: Any) -> None:
        # The request line holds the authorization code: never log it.
        pass


class _RedirectServer(http.server.HTTPServer):
    def __init__(self, callback_path: str) -> None:
        super().__init__(("127.0.0.1", 0), _RedirectHandler)
        self.callback_path = callback_path
        self.received: str | None = None
        self.arrived = threading.Event()

    def deliver(self, path: str) -> None:
        if self.received is None:
            self.received = path
            self.arrived.set()


class LoopbackServer:
    """Receives the authorization redirect on ``http://127.0.0.1:<ephemeral port>/callback``.

    Register ``http://127.0.0.1/callback`` as the app's redirect URI: MediaWiki ignores the
    port of loopback redirect URIs (for ``127.0.0.1`` and ``[::1]``, not ``localhost``).

    >>> with LoopbackServer() as server:  # doctest: +SKIP
    ...     request = authorization_url(CLIENT_ID, redirect_uri=server.redirect_uri)
    ...     webbrowser.open(request.url)
    ...     code = request.parse_redirect(server.wait(timeout=300))
    """

    __slots__ = ("_server", "_thread")

    def __init__(self, path: str = "/callback") -> None:
        if not path.startswith("/"):
            raise InvalidParameter("path must start with '/'", parameter="path")
        self._server = _RedirectServer(path)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="wikisuggest-loopback",
            daemon=True,
        )
        self._thread.start()

    @property
    def redirect_uri(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self._server.callback_path}"

    def wait(self, timeout: float | None = 300.0) -> str:
        """Block until the browser arrives; return the redirect URL it brought."""
        deadline = None if timeout is None else time.monotonic() + timeout
        # Short waits keep Ctrl-C responsive in a notebook or terminal.
        while not self._server.arrived.wait(0.1):
            if deadline is not None and time.monotonic() >= deadline:
                raise WikisuggestError(f"no authorization redirect arrived within {timeout:g} s")
        return f"http://127.0.0.1:{self._server.server_address[1]}{self._server.received}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
