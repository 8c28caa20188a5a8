"""Every error response and transport failure becomes a typed exception; retries are polite."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.clients import USER_AGENT, client_of
from support.contract_server import EXPIRED_TOKEN, VALID_TOKEN, ContractServer, Scripted

import wikisuggest

ClientFactory = Callable[..., wikisuggest.Client]


@pytest.fixture
def make_client(client_kind: str) -> ClientFactory:
    """Clients of one kind per run: every error test runs blocking and asyncio."""

    def make(server: ContractServer, **kwargs: Any) -> wikisuggest.Client:
        options: dict[str, Any] = {"max_retries": 0, "backoff": 0.01}
        options.update(kwargs)
        return client_of(client_kind, base_url=server.url, **options)

    return make


def test_page_not_found(make_client: ClientFactory, contract_server: ContractServer) -> None:
    with pytest.raises(wikisuggest.NotFound) as info:
        make_client(contract_server).link_recommendations("wikipedia", "en", "Missing page")
    err = info.value
    assert err.status == 404 and err.reason == "Not Found" and err.method == "GET"
    assert err.detail == "Page not found: Missing_page"
    assert "Page not found" in str(err)
    assert err.url.endswith("/wikipedia/en/Missing_page")


@pytest.mark.parametrize(("domain", "status"), [("xx", 404), ("yy", 400)])
def test_unsupported_domain(
    make_client: ClientFactory, contract_server: ContractServer, domain: str, status: int
) -> None:
    with pytest.raises(wikisuggest.UnsupportedDomain) as info:
        make_client(contract_server).link_recommendations("wikipedia", domain, "Cat")
    assert info.value.status == status
    assert info.value.valid_project_domain_pairs == ["wikipedia/en", "wikipedia/simple"]


def test_post_without_token_is_unauthorized_with_remedy(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    with pytest.raises(wikisuggest.Unauthorized) as info:
        make_client(contract_server).link_recommendations_for_revision(
            "wikipedia", "en", "Cat", wikitext="x", revid=1, pageid=1
        )
    assert info.value.status == 401
    assert info.value.reason == "Jwt is missing"
    assert "auth=" in str(info.value)
    assert info.value.body == {"httpCode": 401, "httpReason": "Jwt is missing"}


def test_expired_personal_token_is_not_replayed_and_not_leaked(
    make_client: ClientFactory,
    contract_server: ContractServer,
) -> None:
    client = make_client(contract_server, auth=EXPIRED_TOKEN)
    with pytest.raises(wikisuggest.Unauthorized) as info:
        client.link_recommendations("wikipedia", "en", "Cat")
    assert info.value.reason == "Jwt is expired"
    assert "invalid_token" in (info.value.www_authenticate or "")
    assert len(contract_server.requests) == 1
    for text in (str(info.value), repr(info.value), repr(client), repr(info.value.__dict__)):
        assert EXPIRED_TOKEN not in text


def test_415_rest_body(make_client: ClientFactory, contract_server: ContractServer) -> None:
    contract_server.then(
        Scripted(
            415,
            {
                "errorKey": "rest-unsupported-content-type",
                "messageTranslations": {"en": "Unsupported Content-Type: multipart/form-data"},
                "httpCode": 415,
                "httpReason": "Unsupported Media Type",
            },
        )
    )
    with pytest.raises(wikisuggest.UnsupportedMediaType) as info:
        make_client(contract_server).link_recommendations("wikipedia", "en", "Cat")
    assert info.value.error_key == "rest-unsupported-content-type"
    assert info.value.message_translations == {
        "en": "Unsupported Content-Type: multipart/form-data"
    }
    assert info.value.reason == "Unsupported Media Type"


def test_422_detail(make_client: ClientFactory, contract_server: ContractServer) -> None:
    contract_server.then(
        Scripted(
            422,
            {
                "detail": [
                    {
                        "type": "int_parsing",
                        "loc": ["query", "count"],
                        "msg": "Input should be a valid integer",
                        "input": "x",
                    }
                ]
            },
        )
    )
    with pytest.raises(wikisuggest.UnprocessableEntity) as info:
        make_client(contract_server).translation_recommendations("en", "fr")
    assert info.value.errors[0]["loc"] == ["query", "count"]
    assert "count: Input should be a valid integer" in str(info.value)


def test_read_denied_explains_the_remedy(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    contract_server.then(
        Scripted(403, {"errorKey": "rest-read-denied", "httpCode": 403, "httpReason": "Forbidden"})
    )
    with pytest.raises(wikisuggest.ReadDenied) as info:
        make_client(contract_server).link_recommendations("wikipedia", "en", "Cat")
    assert "log in to that project" in str(info.value)


def test_server_error_with_text_body(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    contract_server.then(
        Scripted(
            500,
            b'/translation?x" 500 Internal Server Error <KeyError: boom>',
            {"Content-Type": "text/plain"},
        )
    )
    with pytest.raises(wikisuggest.ServerError) as info:
        make_client(contract_server).translation_recommendations("en", "fr")
    assert info.value.status == 500
    assert "KeyError" in info.value.body


def test_html_rate_limit_page_with_http_date(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    when = email.utils.formatdate(time.time() + 90, usegmt=True)
    contract_server.then(
        Scripted(
            429,
            "<html><head><title>Wikimedia Error</title></head>"
            "<body><p>Too many requests</p></body></html>",
            {"Retry-After": when, "x-request-id": "req-123"},
        )
    )
    with pytest.raises(wikisuggest.RateLimited) as info:
        make_client(contract_server).link_recommendations("wikipedia", "en", "Cat")
    err = info.value
    assert err.retry_after is not None and 85 <= err.retry_after <= 90
    assert err.request_id == "req-123"
    assert "Too many requests" in str(err)
    assert err.headers["x-request-id"] == "req-123"


def test_retry_after_seconds_is_honoured(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    contract_server.then(Scripted(503, b"", {"Retry-After": "1"}))
    client = make_client(contract_server, max_retries=2)
    started = time.monotonic()
    result = client.link_recommendations("wikipedia", "en", "Cat")
    elapsed = time.monotonic() - started
    assert result.page_title == "Cat"
    assert len(contract_server.requests) == 2
    assert 1.0 <= elapsed < 3.0


def test_retry_after_beyond_the_cap_is_raised_not_waited(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    contract_server.then(
        Scripted(429, {"httpCode": 429, "httpReason": "Too Many Requests"}, {"Retry-After": "3600"})
    )
    client = make_client(contract_server, max_retries=3, max_retry_after=60)
    started = time.monotonic()
    with pytest.raises(wikisuggest.RateLimited) as info:
        client.link_recommendations("wikipedia", "en", "Cat")
    assert time.monotonic() - started < 1.0
    assert info.value.retry_after == 3600
    assert len(contract_server.requests) == 1


def test_retries_stop_after_max_retries(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    contract_server.then(*[Scripted(502, b"bad gateway", {"Content-Type": "text/plain"})] * 3)
    with pytest.raises(wikisuggest.ServerError) as info:
        make_client(contract_server, max_retries=2).link_recommendations("wikipedia", "en", "Cat")
    assert info.value.status == 502
    assert len(contract_server.requests) == 3


@pytest.mark.parametrize("status", [500, 404, 400])
def test_non_transient_statuses_are_not_retried(
    make_client: ClientFactory, contract_server: ContractServer, status: int
) -> None:
    contract_server.then(Scripted(status, {"message": "no"}))
    with pytest.raises(wikisuggest.HTTPError):
        make_client(contract_server, max_retries=3).link_recommendations("wikipedia", "en", "Cat")
    assert len(contract_server.requests) == 1


def test_post_is_not_retried_after_the_server_saw_it(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    contract_server.then(Scripted(503, b""))
    client = make_client(contract_server, max_retries=3, auth=VALID_TOKEN)
    with pytest.raises(wikisuggest.ServerError):
        client.link_recommendations_for_revision(
            "wikipedia", "en", "Cat", wikitext="x", revid=1, pageid=1
        )
    assert len(contract_server.requests) == 1


def test_post_is_retried_after_429(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    contract_server.then(Scripted(429, b"slow down", {"Retry-After": "0"}))
    client = make_client(contract_server, max_retries=3, auth=VALID_TOKEN)
    result = client.link_recommendations_for_revision(
        "wikipedia", "en", "Cat", wikitext="x", revid=1, pageid=2
    )
    assert result.pageid == 2
    assert [r.method for r in contract_server.requests] == ["POST", "POST"]


def test_timeout(make_client: ClientFactory, contract_server: ContractServer) -> None:
    contract_server.then(Scripted(200, {"links": []}, delay=2.0))
    client = make_client(contract_server, timeout=0.3)
    started = time.monotonic()
    with pytest.raises(wikisuggest.Timeout) as info:
        client.link_recommendations("wikipedia", "en", "Cat")
    assert time.monotonic() - started < 1.5
    assert isinstance(info.value, TimeoutError)
    assert isinstance(info.value, wikisuggest.TransportError)


def test_dropped_connection(make_client: ClientFactory, contract_server: ContractServer) -> None:
    contract_server.then(Scripted(drop=True))
    with pytest.raises(wikisuggest.TransportError):
        make_client(contract_server).link_recommendations("wikipedia", "en", "Cat")


def test_truncated_body(make_client: ClientFactory, contract_server: ContractServer) -> None:
    contract_server.then(Scripted(200, b'{"links": [', truncate=True))
    with pytest.raises(wikisuggest.TransportError):
        make_client(contract_server).link_recommendations("wikipedia", "en", "Cat")


def test_get_is_retried_after_a_dropped_connection(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    contract_server.then(Scripted(drop=True))
    result = make_client(contract_server, max_retries=2).link_recommendations(
        "wikipedia", "en", "Cat"
    )
    assert result.page_title == "Cat"
    assert len(contract_server.requests) == 2


def test_connection_refused() -> None:
    client = wikisuggest.Client(USER_AGENT, base_url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(wikisuggest.TransportError) as info:
        client.link_recommendations("wikipedia", "en", "Cat")
    assert "127.0.0.1:9" in str(info.value)


def test_errors_pickle_with_their_attributes(
    make_client: ClientFactory, contract_server: ContractServer
) -> None:
    import pickle

    with pytest.raises(wikisuggest.UnsupportedDomain) as info:
        make_client(contract_server).link_recommendations("wikipedia", "xx", "Cat")
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is wikisuggest.UnsupportedDomain
    assert (
        copy.status == 404
        and copy.valid_project_domain_pairs == info.value.valid_project_domain_pairs
    )
    assert str(copy) == str(info.value)


def test_all_errors_share_one_base() -> None:
    for name in wikisuggest.errors.__all__:
        assert issubclass(getattr(wikisuggest.errors, name), wikisuggest.WikisuggestError)
