"""The reference server's surface: it refuses what the client refuses, closing is stopping, and
`serve` takes every option."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from support.clients import USER_AGENT
from support.paths import PARITY, REPO

import wikisuggest
from wikisuggest import LinkEngine
from wikisuggest.server import ServerOptions

ROOT = REPO


@pytest.fixture(scope="module")
def engine() -> LinkEngine:
    return LinkEngine.default()


def test_reference_server_refuses_nan_threshold(engine: LinkEngine) -> None:
    import urllib.error
    import urllib.request

    pages = ROOT / "python" / "wikisuggest" / "data" / "articles"
    with wikisuggest.Server(datasets=_datasets(), pages=pages) as server:
        path = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/Aardvark"
        request = urllib.request.Request(
            f"{server.url}{path}?threshold=nan", headers={"User-Agent": USER_AGENT}
        )
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=30)
        assert caught.value.code == 400
        assert "threshold" in caught.value.read().decode()


def test_server_close_is_stop() -> None:
    server = wikisuggest.serve(port=0, background=True, threads=1, request_timeout=5.0)
    with server:
        assert server.running
    assert not server.running
    server.close()


def test_serve_takes_every_server_option() -> None:
    server_options = set(inspect.signature(wikisuggest.Server).parameters) - {"port"}
    assert server_options == set(ServerOptions.__annotations__)
    assert {"max_body_bytes", "request_timeout", "threads"} <= server_options


def _datasets() -> Path:
    return PARITY / "datasets"


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("port", 99999, "a port number from 0 to 65535, got 99999"),
        ("port", -1, "a port number from 0 to 65535, got -1"),
        ("threads", -2, "a whole number, 0 or more, got -2"),
        ("rate_limit", -5, "a whole number, 0 or more, got -5"),
        ("max_body_bytes", -1, "a whole number, 0 or more, got -1"),
    ],
)
def test_server_names_an_integer_out_of_range(option: str, value: int, said: str) -> None:
    with pytest.raises(wikisuggest.InvalidParameter, match=f"^{option}: must be {said}$") as err:
        wikisuggest.Server(**{option: value})  # type: ignore[arg-type]
    assert err.value.parameter == option
