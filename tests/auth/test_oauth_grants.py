"""The three grants, the authorization-code flow with PKCE, and OAuth error bodies."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import urllib.error
import urllib.parse
import urllib.request

import pytest
from support.oauth_server import (
    BOT_SECRET,
    REGISTERED_REDIRECT,
    USER_AGENT,
    WEBAPP_SECRET,
    OAuthTestServer,
    authorize_query,
    open_url,
    s256,
    visit_authorize,
)

import wikisuggest
from wikisuggest import (
    AsyncClient,
    Client,
    DecodeError,
    InvalidClient,
    InvalidGrant,
    InvalidParameter,
    InvalidRequest,
    InvalidScope,
    StateMismatch,
    Token,
    UnauthorizedClient,
    UnsupportedGrantType,
    UnsupportedMediaType,
)


@pytest.fixture
def client(oauth_server: OAuthTestServer) -> Client:
    return Client(USER_AGENT, base_url=oauth_server.url, auth_url=oauth_server.url)


@pytest.fixture
def aclient(oauth_server: OAuthTestServer) -> AsyncClient:
    return AsyncClient(USER_AGENT, base_url=oauth_server.url, auth_url=oauth_server.url)


# -- client credentials --------------------------------------------------------------------


def test_client_credentials_sync(client: Client, oauth_server: OAuthTestServer) -> None:
    before = dt.datetime.now(tz=dt.timezone.utc)
    token = client.client_credentials("bot", BOT_SECRET)
    assert isinstance(token, Token)
    assert token.token_type == "Bearer"
    assert token.access_token in oauth_server.access_tokens
    assert token.refresh_token is None
    assert token.expires_in == 14_400
    assert (
        before - dt.timedelta(seconds=1) <= token.obtained_at <= dt.datetime.now(tz=dt.timezone.utc)
    )
    assert token.expires_at == token.obtained_at + dt.timedelta(seconds=14_400)
    assert not token.is_expired()
    assert token.is_expired(leeway=14_401)
    form = oauth_server.token_forms[-1]
    assert form == {
        "grant_type": "client_credentials",
        "client_id": "bot",
        "client_secret": BOT_SECRET,
    }


async def test_client_credentials_async(
    aclient: AsyncClient, oauth_server: OAuthTestServer
) -> None:
    token = await aclient.client_credentials("bot", BOT_SECRET)
    assert token.access_token in oauth_server.access_tokens
    assert token.refresh_token is None
    assert oauth_server.grant_counts["client_credentials"] == 1


def test_token_round_trips_through_its_dict(client: Client) -> None:
    token = client.client_credentials("bot", BOT_SECRET)
    again = Token.from_dict(token.to_dict())
    assert again == token


# -- authorization code with PKCE ----------------------------------------------------------


def test_rfc7636_appendix_b_vector_and_our_challenge() -> None:
    # The vector from RFC 7636, Appendix B, checks the test server's S256 ...
    verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    assert s256(verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    # ... and our URL carries exactly that transform of our own verifier.
    request = wikisuggest.authorization_url("webapp", auth_url="http://127.0.0.1:9")
    query = authorize_query(request.url)
    expected = base64.urlsafe_b64encode(hashlib.sha256(request.code_verifier.encode()).digest())
    assert query["code_challenge"] == expected.rstrip(b"=").decode()
    assert query["code_challenge_method"] == "S256"


def test_authorization_url_shape() -> None:
    request = wikisuggest.authorization_url(
        "webapp",
        redirect_uri="http://127.0.0.1:8123/callback",
        scope=["basic", "editpage"],
        auth_url="http://127.0.0.1:9/",
    )
    assert request.url.startswith("http://127.0.0.1:9/w/rest.php/oauth2/authorize?")
    query = authorize_query(request.url)
    assert query["response_type"] == "code"
    assert query["client_id"] == "webapp"
    assert query["redirect_uri"] == "http://127.0.0.1:8123/callback"
    assert query["scope"] == "basic editpage"
    assert query["state"] == request.state
    assert 43 <= len(request.code_verifier) <= 128
    assert set(request.code_verifier) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    )
    assert request.code_verifier not in request.url
    assert request.code_verifier not in repr(request)
    other = wikisuggest.authorization_url("webapp", auth_url="http://127.0.0.1:9")
    assert (other.state, other.code_verifier) != (request.state, request.code_verifier)
    assert "redirect_uri" not in authorize_query(other.url)
    assert (
        authorize_query(
            wikisuggest.authorization_url("webapp", state="mine", auth_url="http://127.0.0.1:9").url
        )["state"]
        == "mine"
    )


@pytest.mark.parametrize("client_id,secret", [("webapp", WEBAPP_SECRET), ("public", None)])
def test_authorization_code_flow_sync(
    client: Client, oauth_server: OAuthTestServer, client_id: str, secret: str | None
) -> None:
    redirect_uri = "http://127.0.0.1:8765/callback"  # any port: loopback
    request = client.authorization_url(client_id, redirect_uri=redirect_uri)
    code = request.parse_redirect(visit_authorize(request.url))
    token = client.authorization_code(
        code, client_id, secret, code_verifier=request.code_verifier, redirect_uri=redirect_uri
    )
    assert token.access_token in oauth_server.access_tokens
    assert token.refresh_token in oauth_server.refresh_tokens
    form = oauth_server.token_forms[-1]
    assert form["code_verifier"] == request.code_verifier
    assert ("client_secret" in form) == (secret is not None)
    # Codes are single use.
    with pytest.raises(InvalidGrant):
        client.authorization_code(
            code, client_id, secret, code_verifier=request.code_verifier, redirect_uri=redirect_uri
        )


async def test_authorization_code_flow_async(
    aclient: AsyncClient, oauth_server: OAuthTestServer
) -> None:
    request = aclient.authorization_url("public")
    code = wikisuggest.parse_redirect(visit_authorize(request.url), request.state)
    token = await aclient.authorization_code(code, "public", code_verifier=request.code_verifier)
    assert token.refresh_token in oauth_server.refresh_tokens


def test_wrong_verifier_is_invalid_grant(client: Client) -> None:
    request = client.authorization_url("public")
    code = request.parse_redirect(visit_authorize(request.url))
    other = wikisuggest.authorization_url("public", auth_url="http://127.0.0.1:9").code_verifier
    with pytest.raises(InvalidGrant) as info:
        client.authorization_code(code, "public", code_verifier=other)
    assert info.value.status == 400
    assert info.value.error == "invalid_grant"
    assert "code_verifier" in str(info.value)
    assert other not in str(info.value)


def test_server_takes_plain_when_method_is_left_out(
    oauth_server: OAuthTestServer, client: Client
) -> None:
    # Why we always send S256: without a method the challenge is compared as plain text.
    verifier = "v" * 50
    query = {"response_type": "code", "client_id": "public", "code_challenge": verifier}
    url = f"{oauth_server.url}/w/rest.php/oauth2/authorize?{urllib.parse.urlencode(query)}"
    code = authorize_query(visit_authorize(url))["code"]
    token = client.authorization_code(code, "public", code_verifier=verifier)
    assert token.refresh_token is not None


def test_state_mismatch(client: Client) -> None:
    request = client.authorization_url("webapp", redirect_uri=REGISTERED_REDIRECT)
    redirect = visit_authorize(request.url)
    forged = redirect.replace(f"state={request.state}", "state=forged")
    with pytest.raises(StateMismatch):
        request.parse_redirect(forged)
    without_state = redirect.replace(f"&state={request.state}", "")
    with pytest.raises(StateMismatch):
        request.parse_redirect(without_state)
    with pytest.raises(StateMismatch):
        wikisuggest.parse_redirect(redirect, request.state[:-1])
    assert request.parse_redirect(redirect).startswith("code-")


def test_user_cancel_is_unauthorized_client(client: Client, oauth_server: OAuthTestServer) -> None:
    oauth_server.authorize_decision = "cancel"
    request = client.authorization_url("webapp", redirect_uri=REGISTERED_REDIRECT)
    redirect = visit_authorize(request.url)
    assert "state=" not in redirect  # MediaWiki leaves it out on cancel
    with pytest.raises(UnauthorizedClient) as info:
        request.parse_redirect(redirect)
    assert info.value.error == "unauthorized_client"
    assert info.value.error_description == "User has rejected the request from client application"
    assert isinstance(info.value, wikisuggest.OAuthError)
    assert info.value.status == 0  # a redirect, not an HTTP error


def test_redirect_with_neither_code_nor_error(client: Client) -> None:
    request = client.authorization_url("webapp")
    with pytest.raises(InvalidParameter):
        request.parse_redirect(f"http://127.0.0.1/callback?state={request.state}")


# -- refresh tokens ------------------------------------------------------------------------


def _user_token(client: Client) -> Token:
    request = client.authorization_url("webapp")
    code = request.parse_redirect(visit_authorize(request.url))
    return client.authorization_code(
        code, "webapp", WEBAPP_SECRET, code_verifier=request.code_verifier
    )


def test_refresh_rotates_with_grace_period(client: Client, oauth_server: OAuthTestServer) -> None:
    first = _user_token(client)
    assert first.refresh_token is not None
    second = client.refresh_token(first.refresh_token, "webapp", WEBAPP_SECRET)
    assert second.refresh_token not in (None, first.refresh_token)
    assert second.access_token != first.access_token
    # The previous refresh token stays usable for 600 s (a client that lost an answer) ...
    oauth_server.advance(599)
    again = client.refresh_token(first.refresh_token, "webapp", WEBAPP_SECRET)
    assert again.refresh_token is not None
    # ... and not after.
    oauth_server.advance(2)
    with pytest.raises(InvalidGrant) as info:
        client.refresh_token(first.refresh_token, "webapp", WEBAPP_SECRET)
    assert info.value.hint == "Token has been revoked"
    assert first.refresh_token not in str(info.value)
    assert client.refresh_token(second.refresh_token, "webapp", WEBAPP_SECRET).access_token


async def test_refresh_async(
    client: Client, aclient: AsyncClient, oauth_server: OAuthTestServer
) -> None:
    first = _user_token(client)
    assert first.refresh_token is not None
    second = await aclient.refresh_token(first.refresh_token, "webapp", WEBAPP_SECRET)
    assert second.refresh_token in oauth_server.refresh_tokens
    assert oauth_server.token_forms[-1]["refresh_token"] == first.refresh_token
    with pytest.raises(InvalidGrant):
        await aclient.refresh_token("rt-unknown", "webapp", WEBAPP_SECRET)


# -- errors --------------------------------------------------------------------------------


def test_wrong_secret_is_invalid_client_401(client: Client) -> None:
    with pytest.raises(InvalidClient) as info:
        client.client_credentials("bot", "not-the-secret")
    e = info.value
    assert e.status == 401
    assert e.error == "invalid_client"
    assert e.error_description == "Client authentication failed"
    assert "not-the-secret" not in str(e) and "not-the-secret" not in repr(e.args)


def test_missing_secret_is_invalid_request(client: Client) -> None:
    with pytest.raises(InvalidRequest) as info:
        client.refresh_token("rt-x", "webapp")
    assert info.value.status == 400
    assert info.value.hint == "Check the `client_secret` parameter"


@pytest.mark.parametrize(
    "error,cls",
    [("invalid_scope", InvalidScope), ("unsupported_grant_type", UnsupportedGrantType)],
)
def test_other_oauth_errors(
    client: Client, oauth_server: OAuthTestServer, error: str, cls: type[Exception]
) -> None:
    oauth_server.next_token_response = (400, {"error": error, "error_description": "nope"})
    with pytest.raises(cls) as info:
        client.client_credentials("bot", BOT_SECRET)
    assert info.value.status == 400  # type: ignore[attr-defined]
    assert info.value.error_description == "nope"  # type: ignore[attr-defined]


def test_message_key_is_read_when_description_is_missing(
    client: Client, oauth_server: OAuthTestServer
) -> None:
    # Servers before league/oauth2-server 9 sent the description as `message`.
    body = {"error": "invalid_grant", "message": "The refresh token is invalid.", "hint": "h"}
    oauth_server.next_token_response = (400, body)
    with pytest.raises(InvalidGrant) as info:
        client.refresh_token("rt-unknown", "webapp", WEBAPP_SECRET)
    assert info.value.error_description == "The refresh token is invalid."
    assert info.value.hint == "h"


def test_multipart_is_rejected_with_415(oauth_server: OAuthTestServer, client: Client) -> None:
    # What the server does with the multipart bodies old examples produced (curl -F) ...
    boundary = "xyz"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="grant_type"\r\n\r\n'
        f"client_credentials\r\n--{boundary}--\r\n"
    ).encode()
    request = urllib.request.Request(
        oauth_server.url + "/w/rest.php/oauth2/access_token",
        data=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    with pytest.raises(urllib.error.HTTPError) as raw:
        open_url(request)
    assert raw.value.code == 415
    raw.value.close()
    # ... our client always sends a form, so it gets a token ...
    assert client.client_credentials("bot", BOT_SECRET).access_token
    # ... and a 415 in MediaWiki's REST shape becomes UnsupportedMediaType.
    oauth_server.reject_forms = True
    with pytest.raises(UnsupportedMediaType) as info:
        client.client_credentials("bot", BOT_SECRET)
    e = info.value
    assert e.status == 415
    assert e.error_key == "rest-unsupported-content-type"
    assert e.reason == "Unsupported Media Type"
    assert "Unsupported Content-Type" in e.message_translations["en"]


def test_success_without_access_token_is_a_decode_error(
    client: Client, oauth_server: OAuthTestServer
) -> None:
    oauth_server.next_token_response = (
        200,
        {"status": "ok", "refresh_token": "rt-should-not-leak"},
    )
    with pytest.raises(DecodeError) as info:
        client.client_credentials("bot", BOT_SECRET)
    assert "access_token" in str(info.value)
    assert "rt-should-not-leak" not in str(info.value)
    assert "rt-should-not-leak" not in (info.value.snippet or "")


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.client_credentials("", "s"),
        lambda c: c.client_credentials("bot", ""),
        lambda c: c.authorization_code("code", "webapp", code_verifier="short"),
        lambda c: c.refresh_token("", "webapp"),
    ],
)
def test_arguments_are_checked_before_sending(
    client: Client, oauth_server: OAuthTestServer, call: object
) -> None:
    with pytest.raises(InvalidParameter):
        call(client)  # type: ignore[operator]
    assert oauth_server.token_requests == 0
