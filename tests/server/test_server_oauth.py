"""An independent OAuth 2.0 client (Authlib) completes every grant against the reference
server, and its tokens open the POST link route."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
import requests
from authlib.integrations.requests_client import OAuth2Session
from support import reference_server as ref

import wikisuggest

AUTHORIZE = "/w/rest.php/oauth2/authorize"
TOKEN = "/w/rest.php/oauth2/access_token"
LINKS = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/Anarchism"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wikisuggest.Server]:
    with ref.start(tmp_path_factory.mktemp("oauth"), datasets=ref.DATASETS) as running:
        yield running


def post_links(server: wikisuggest.Server, access_token: str) -> requests.Response:
    return requests.post(
        server.url + LINKS,
        json={"wikitext": ref.ANARCHISM, "revid": 1, "pageid": 2},
        headers={"Authorization": f"Bearer {access_token}"},
        timeout=30,
    )


def authorize(session: OAuth2Session, server: wikisuggest.Server, **extra: str) -> str:
    """Follows the authorization request; returns the callback URL the browser would open."""
    url, state = session.create_authorization_url(server.url + AUTHORIZE, **extra)
    reply = requests.get(url, allow_redirects=False, timeout=10)
    assert reply.status_code == 302
    location = reply.headers["Location"]
    assert location.startswith(ref.REDIRECT_URI + "?")
    assert f"state={state}" in location
    return location


def test_client_credentials(server: wikisuggest.Server) -> None:
    session = OAuth2Session(
        ref.CONFIDENTIAL_ID,
        ref.CONFIDENTIAL_SECRET,
        token_endpoint_auth_method="client_secret_post",
    )
    token = session.fetch_token(server.url + TOKEN, grant_type="client_credentials")
    assert token["token_type"] == "Bearer" and token["expires_in"] == 14400
    assert "refresh_token" not in token
    assert post_links(server, token["access_token"]).status_code == 200
    # HTTP Basic client authentication works too.
    basic = OAuth2Session(ref.CONFIDENTIAL_ID, ref.CONFIDENTIAL_SECRET)
    assert basic.fetch_token(server.url + TOKEN, grant_type="client_credentials")["access_token"]


def test_authorization_code_with_pkce_and_refresh(server: wikisuggest.Server) -> None:
    verifier = secrets.token_urlsafe(48)
    session = OAuth2Session(
        ref.PUBLIC_ID,
        redirect_uri=ref.REDIRECT_URI,
        code_challenge_method="S256",
        token_endpoint_auth_method="none",
    )
    callback = authorize(session, server, code_verifier=verifier)
    token = session.fetch_token(
        server.url + TOKEN, authorization_response=callback, code_verifier=verifier
    )
    assert token["refresh_token"] and token["expires_in"] == 14400
    reply = post_links(server, token["access_token"])
    assert reply.status_code == 200 and reply.json()["pageid"] == 2

    refreshed = session.refresh_token(server.url + TOKEN, refresh_token=token["refresh_token"])
    assert refreshed["access_token"] != token["access_token"]
    assert refreshed["refresh_token"] != token["refresh_token"]
    assert post_links(server, refreshed["access_token"]).status_code == 200


def test_confidential_client_with_plain_pkce(server: wikisuggest.Server) -> None:
    verifier = secrets.token_urlsafe(48)
    session = OAuth2Session(
        ref.CONFIDENTIAL_ID,
        ref.CONFIDENTIAL_SECRET,
        redirect_uri=ref.REDIRECT_URI,
        token_endpoint_auth_method="client_secret_post",
    )
    # Authlib computes only S256 challenges: a plain one is passed as given.
    plain = {"code_challenge": verifier, "code_challenge_method": "plain"}
    callback = authorize(session, server, **plain)
    token = session.fetch_token(
        server.url + TOKEN, authorization_response=callback, code_verifier=verifier
    )
    assert token["refresh_token"]
    # A wrong verifier on a fresh code is refused with the OAuth error body.
    callback = authorize(session, server, **plain)
    code = callback.split("code=")[1].split("&")[0]
    reply = requests.post(
        server.url + TOKEN,
        data={
            "grant_type": "authorization_code",
            "code": code,
            "client_id": ref.CONFIDENTIAL_ID,
            "client_secret": ref.CONFIDENTIAL_SECRET,
            "redirect_uri": ref.REDIRECT_URI,
            "code_verifier": secrets.token_urlsafe(48),
        },
        timeout=10,
    )
    assert reply.status_code == 400
    assert reply.json()["error"] == "invalid_grant"


def test_multipart_token_request_is_415(server: wikisuggest.Server) -> None:
    reply = requests.post(
        server.url + TOKEN,
        files={"grant_type": (None, "client_credentials")},
        timeout=10,
    )
    assert reply.status_code == 415
    body = reply.json()
    assert body["errorKey"] == "rest-unsupported-content-type"
    assert (body["httpCode"], body["httpReason"]) == (415, "Unsupported Media Type")


@pytest.mark.parametrize(
    "redirect",
    [
        "http://127.0.0.1:80@evil.example/callback",
        "http://127.0.0.1@evil.example/callback",
        "http://127.0.0.1.evil.example/callback",
        "http://user@127.0.0.1:5000/callback",
    ],
)
def test_code_is_never_redirected_to_a_host_that_only_looks_loopback(
    server: wikisuggest.Server, redirect: str
) -> None:
    verifier = secrets.token_urlsafe(48)
    session = OAuth2Session(
        ref.PUBLIC_ID,
        redirect_uri=redirect,
        code_challenge_method="S256",
        token_endpoint_auth_method="none",
    )
    url, _ = session.create_authorization_url(server.url + AUTHORIZE, code_verifier=verifier)
    reply = requests.get(url, allow_redirects=False, timeout=10)
    assert reply.status_code == 401, reply.headers.get("Location")
    assert "Location" not in reply.headers
    # The loopback rule itself still holds: any port of the registered loopback URI.
    session.redirect_uri = "http://127.0.0.1:5000/callback"
    url, _ = session.create_authorization_url(server.url + AUTHORIZE, code_verifier=verifier)
    reply = requests.get(url, allow_redirects=False, timeout=10)
    assert reply.status_code == 302
    assert reply.headers["Location"].startswith("http://127.0.0.1:5000/callback?code=")


def test_refresh_replays_within_grace_get_one_successor(server: wikisuggest.Server) -> None:
    verifier = secrets.token_urlsafe(48)
    session = OAuth2Session(
        ref.PUBLIC_ID,
        redirect_uri=ref.REDIRECT_URI,
        code_challenge_method="S256",
        token_endpoint_auth_method="none",
    )
    callback = authorize(session, server, code_verifier=verifier)
    token = session.fetch_token(
        server.url + TOKEN, authorization_response=callback, code_verifier=verifier
    )
    form = {
        "grant_type": "refresh_token",
        "refresh_token": token["refresh_token"],
        "client_id": ref.PUBLIC_ID,
    }
    successors = set()
    for _ in range(5):
        reply = requests.post(server.url + TOKEN, data=form, timeout=10)
        assert reply.status_code == 200
        successors.add(reply.json()["refresh_token"])
        assert post_links(server, reply.json()["access_token"]).status_code == 200
    # Five replays of one refresh token: one chain, not five.
    assert len(successors) == 1
    assert token["refresh_token"] not in successors
