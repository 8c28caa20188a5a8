"""A local OAuth 2.0 authorization server and protected resource for the tests.

It behaves like MediaWiki's OAuth extension where the client can tell the difference:
form-only token endpoint (415 in the MediaWiki REST error shape otherwise), OAuth error bodies
and status codes, PKCE with ``S256`` and ``plain`` (``plain`` when no method is sent), single-use
authorization codes, refresh-token rotation with a grace period for the previous refresh token,
a user's cancel reported as ``unauthorized_client`` without ``state``, and the gateway's 401 for
stale bearer tokens on the link-recommendation POST route.

Every knob is a plain attribute; ``clock_offset`` moves the server's clock forward.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import secrets
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

TOKEN_PATH = "/w/rest.php/oauth2/access_token"
AUTHORIZE_PATH = "/w/rest.php/oauth2/authorize"
LINKS_PREFIX = "/service/linkrecommendation/v1/linkrecommendations/"

REGISTERED_REDIRECT = "http://127.0.0.1/callback"
USER_AGENT = "oauth-tests/1.0 (https://example.org/oauth-tests; tests@example.org)"
BOT_SECRET = "bot-secret-value"
WEBAPP_SECRET = "webapp-secret-value"

# Never through a proxy, never following redirects: the tests look at them.
_opener = urllib.request.build_opener(
    urllib.request.ProxyHandler({}),
    type(
        "NoRedirect",
        (urllib.request.HTTPRedirectHandler,),
        {"redirect_request": lambda *args, **kwargs: None},
    ),
)


def open_url(request: str | urllib.request.Request) -> Any:
    return _opener.open(request, timeout=10)


def visit_authorize(url: str) -> str:
    """What a browser does on the authorize page after the user decides: the redirect URL."""
    try:
        open_url(url).close()
    except urllib.error.HTTPError as e:
        with e:
            assert e.code == 302, e.read()
            return str(e.headers["Location"])
    raise AssertionError("the authorize endpoint did not redirect")


def authorize_query(url: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def s256(verifier: str) -> str:
    """The RFC 7636 S256 code challenge of ``verifier``."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass
class RegisteredClient:
    secret: str | None
    redirect_uri: str = REGISTERED_REDIRECT

    @property
    def confidential(self) -> bool:
        return self.secret is not None


@dataclass
class Grant:
    client_id: str
    expires: float
    revoked_at: float | None = None
    access_token: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class OAuthError(Exception):
    def __init__(self, status: int, error: str, description: str, hint: str | None = None):
        super().__init__(error)
        self.status = status
        self.body = {"error": error, "error_description": description}
        if hint:
            self.body["hint"] = hint


def _redirect_matches(registered: str, given: str) -> bool:
    """Exact match, except that the port of a 127.0.0.1 / [::1] redirect is ignored."""
    if registered == given:
        return True
    a, b = urllib.parse.urlsplit(registered), urllib.parse.urlsplit(given)
    loopback = a.hostname in ("127.0.0.1", "::1") and a.hostname == b.hostname
    return loopback and (a.scheme, a.path, a.query) == (b.scheme, b.path, b.query)


class OAuthTestServer:
    """Owns the state; the handler below only translates HTTP to method calls."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.clients: dict[str, RegisteredClient] = {
            "bot": RegisteredClient(BOT_SECRET),
            "webapp": RegisteredClient(WEBAPP_SECRET),
            "public": RegisteredClient(None),
        }
        self.expires_in = 14_400
        self.grace = 600.0
        self.clock_offset = 0.0
        self.token_delay = 0.0
        self.authorize_decision = "approve"
        # Failure injection.
        self.drop_token_responses = 0
        self.next_token_response: tuple[int, dict[str, Any]] | None = None
        self.reject_forms = False
        self.reject_all_bearers = False
        # Observations.
        self.token_requests = 0
        self.grant_counts: Counter[str] = Counter()
        self.token_forms: list[dict[str, str]] = []
        self.resource_requests = 0
        self.bearers_seen: list[str | None] = []
        # Issued credentials.
        self.access_tokens: dict[str, Grant] = {}
        self.refresh_tokens: dict[str, Grant] = {}
        self.codes: dict[str, Grant] = {}
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.app = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> OAuthTestServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def now(self) -> float:
        return time.time() + self.clock_offset

    def advance(self, seconds: float) -> None:
        self.clock_offset += seconds

    def expire_access_tokens(self) -> None:
        """Make every issued access token stale on the server (the client does not know)."""
        with self.lock:
            for grant in self.access_tokens.values():
                grant.revoked_at = self.now()

    # -- token endpoint --------------------------------------------------------------------

    def _issue(self, client_id: str, with_refresh: bool) -> dict[str, Any]:
        access = "at-" + secrets.token_urlsafe(24)
        self.access_tokens[access] = Grant(client_id, self.now() + self.expires_in)
        body: dict[str, Any] = {
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "access_token": access,
        }
        if with_refresh:
            refresh = "rt-" + secrets.token_urlsafe(24)
            self.refresh_tokens[refresh] = Grant(
                client_id, self.now() + 365 * 86_400, access_token=access
            )
            body["refresh_token"] = refresh
        return body

    def _authenticate(self, form: dict[str, str], basic: tuple[str, str] | None) -> str:
        client_id = form.get("client_id") or (basic[0] if basic else None)
        secret = form.get("client_secret") or (basic[1] if basic else None)
        if not client_id:
            raise OAuthError(
                400,
                "invalid_request",
                "The request is missing a required parameter",
                "Check the `client_id` parameter",
            )
        client = self.clients.get(client_id)
        if client is None:
            raise OAuthError(401, "invalid_client", "Client authentication failed")
        if client.confidential:
            if not secret:
                raise OAuthError(
                    400,
                    "invalid_request",
                    "The request is missing a required parameter",
                    "Check the `client_secret` parameter",
                )
            if not secrets.compare_digest(secret, client.secret or ""):
                raise OAuthError(401, "invalid_client", "Client authentication failed")
        return client_id

    def token(self, form: dict[str, str], basic: tuple[str, str] | None) -> tuple[int, Any]:
        with self.lock:
            self.token_requests += 1
            self.grant_counts[form.get("grant_type", "")] += 1
            self.token_forms.append(form)
        if self.token_delay:
            time.sleep(self.token_delay)
        with self.lock:
            if self.next_token_response is not None:
                response, self.next_token_response = self.next_token_response, None
                return response
            try:
                return 200, self._grant(form, basic)
            except OAuthError as e:
                return e.status, e.body

    def _grant(self, form: dict[str, str], basic: tuple[str, str] | None) -> dict[str, Any]:
        grant_type = form.get("grant_type")
        if grant_type not in ("client_credentials", "authorization_code", "refresh_token"):
            raise OAuthError(
                400,
                "unsupported_grant_type",
                "The authorization grant type is not supported by the authorization server.",
                "Check that all required parameters have been provided",
            )
        client_id = self._authenticate(form, basic)
        if grant_type == "client_credentials":
            if not self.clients[client_id].confidential:
                raise OAuthError(401, "invalid_client", "Client authentication failed")
            return self._issue(client_id, with_refresh=False)
        if grant_type == "authorization_code":
            return self._exchange_code(client_id, form)
        return self._refresh(client_id, form)

    def _exchange_code(self, client_id: str, form: dict[str, str]) -> dict[str, Any]:
        code = form.get("code")
        if not code:
            raise OAuthError(400, "invalid_request", "Missing code", "Check the `code` parameter")
        grant = self.codes.get(code)
        if grant is None or grant.revoked_at is not None or grant.expires < self.now():
            raise OAuthError(400, "invalid_grant", "Authorization code has been revoked")
        if grant.client_id != client_id:
            raise OAuthError(
                400, "invalid_request", "Authorization code was not issued to this client"
            )
        sent_uri = grant.extra.get("redirect_uri")
        if sent_uri is not None and form.get("redirect_uri") != sent_uri:
            raise OAuthError(401, "invalid_client", "Client authentication failed")
        challenge = grant.extra.get("code_challenge")
        verifier = form.get("code_verifier")
        if challenge is None:
            if verifier is not None:
                raise OAuthError(
                    400,
                    "invalid_request",
                    "Failed to verify `code_verifier`.",
                    "Check the `code_verifier` parameter",
                )
        else:
            if not verifier:
                raise OAuthError(
                    400,
                    "invalid_request",
                    "The request is missing a required parameter",
                    "Check the `code_verifier` parameter",
                )
            method = grant.extra.get("code_challenge_method", "plain")
            computed = s256(verifier) if method == "S256" else verifier
            if not secrets.compare_digest(computed, challenge):
                raise OAuthError(400, "invalid_grant", "Failed to verify `code_verifier`.")
        grant.revoked_at = self.now()
        return self._issue(client_id, with_refresh=True)

    def _refresh(self, client_id: str, form: dict[str, str]) -> dict[str, Any]:
        refresh = form.get("refresh_token")
        if not refresh:
            raise OAuthError(
                400,
                "invalid_request",
                "Missing refresh token",
                "Check the `refresh_token` parameter",
            )
        grant = self.refresh_tokens.get(refresh)
        if grant is None:
            raise OAuthError(
                400,
                "invalid_grant",
                "The refresh token is invalid.",
                "Cannot decrypt the refresh token",
            )
        if grant.client_id != client_id:
            raise OAuthError(
                400,
                "invalid_grant",
                "The refresh token is invalid.",
                "Token is not linked to client",
            )
        now = self.now()
        if grant.revoked_at is not None and now - grant.revoked_at > self.grace:
            raise OAuthError(
                400, "invalid_grant", "The refresh token is invalid.", "Token has been revoked"
            )
        if grant.revoked_at is None:
            grant.revoked_at = now
        previous = self.access_tokens.get(grant.access_token or "")
        if previous is not None and previous.revoked_at is None:
            previous.revoked_at = now
        return self._issue(client_id, with_refresh=True)

    # -- authorize endpoint ----------------------------------------------------------------

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], str]:
        """Returns (status, headers, text)."""
        client = self.clients.get(query.get("client_id", ""))
        if query.get("response_type") != "code" or client is None:
            return 400, {}, "invalid_request or invalid_client"
        redirect = query.get("redirect_uri") or client.redirect_uri
        if not _redirect_matches(client.redirect_uri, redirect):
            return 401, {}, "invalid_client: redirect_uri mismatch"
        challenge = query.get("code_challenge")
        if challenge is None and not client.confidential:
            return 400, {}, "invalid_request: public clients must use PKCE"
        sep = "&" if "?" in redirect else "?"
        if self.authorize_decision != "approve":
            params = {
                "error": "unauthorized_client",
                "error_description": "User has rejected the request from client application",
            }
            return 302, {"Location": redirect + sep + urllib.parse.urlencode(params)}, ""
        code = "code-" + secrets.token_urlsafe(24)
        extra: dict[str, Any] = {}
        if "redirect_uri" in query:
            extra["redirect_uri"] = query["redirect_uri"]
        if challenge is not None:
            extra["code_challenge"] = challenge
            extra["code_challenge_method"] = query.get("code_challenge_method", "plain")
        with self.lock:
            self.codes[code] = Grant(query["client_id"], self.now() + 600, extra=extra)
        params = {"code": code}
        if "state" in query:
            params["state"] = query["state"]
        return 302, {"Location": redirect + sep + urllib.parse.urlencode(params)}, ""

    # -- protected resource ----------------------------------------------------------------

    def links(
        self, bearer: str | None, title: str, body: dict[str, Any]
    ) -> tuple[int, dict[str, str], Any]:
        with self.lock:
            self.resource_requests += 1
            self.bearers_seen.append(bearer)
            if bearer is None:
                return 401, {}, {"httpCode": 401, "httpReason": "Jwt is missing"}
            grant = self.access_tokens.get(bearer)
            stale = (
                self.reject_all_bearers
                or grant is None
                or grant.revoked_at is not None
                or grant.expires <= self.now()
            )
        if stale:
            headers = {"WWW-Authenticate": 'Bearer realm="127.0.0.1", error="invalid_token"'}
            return 401, headers, {"httpCode": 401, "httpReason": "Jwt is expired"}
        return (
            200,
            {},
            {
                "links": [],
                "links_count": 0,
                "page_title": title,
                "pageid": body.get("pageid"),
                "revid": body.get("revid"),
            },
        )


class _Server(http.server.ThreadingHTTPServer):
    # The listen backlog is set when the socket is bound, so it must be a class attribute:
    # with the default of 5, a burst of concurrent connections overflows the accept queue
    # and some of them stall for seconds in the kernel's retransmission back-off.
    request_queue_size = 1024
    daemon_threads = True
    app: OAuthTestServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up (a cancelled request) are part of the tests; anything else
        # is a bug in this server and is shown.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    @property
    def app(self) -> OAuthTestServer:
        return self.server.app

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        content_type = "text/plain" if isinstance(body, str) else "application/json"
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        if path != AUTHORIZE_PATH:
            self._send(404, {"httpCode": 404, "httpReason": "Not Found"})
            return
        params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        status, headers, text = self.app.authorize(params)
        self._send(status, text, headers)

    def do_POST(self) -> None:
        path, _, _ = self.path.partition("?")
        raw = self._body()
        if path == TOKEN_PATH:
            self._token(raw)
        elif path.startswith(LINKS_PREFIX):
            auth = self.headers.get("Authorization")
            bearer = auth[7:] if auth and auth.startswith("Bearer ") else None
            title = urllib.parse.unquote(path.rsplit("/", 1)[-1])
            status, headers, body = self.app.links(bearer, title, json.loads(raw or b"{}"))
            self._send(status, body, headers)
        else:
            self._send(404, {"httpCode": 404, "httpReason": "Not Found"})

    def _token(self, raw: bytes) -> None:
        app = self.app
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded" or app.reject_forms:
            self._send(
                415,
                {
                    "errorKey": "rest-unsupported-content-type",
                    "messageTranslations": {"en": f"Unsupported Content-Type: {content_type}"},
                    "httpCode": 415,
                    "httpReason": "Unsupported Media Type",
                },
            )
            return
        form = dict(urllib.parse.parse_qsl(raw.decode(), keep_blank_values=True))
        basic = None
        auth = self.headers.get("Authorization") or ""
        if auth.startswith("Basic "):
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            basic = (user, password)
        status, body = app.token(form, basic)
        with app.lock:
            drop = app.drop_token_responses > 0
            if drop:
                app.drop_token_responses -= 1
        if drop:
            # The server did the work but the answer never arrives.
            self.close_connection = True
            return
        self._send(status, body)
