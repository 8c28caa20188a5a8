"""The clients' surface: misuse refused before sending, one bad item fails alone, clients close,
the blocking client is the generated twin of the asyncio one, asyncio programs exit cleanly."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.clients import USER_AGENT, client_for
from support.contract_server import ContractServer
from support.paths import PARITY, REPO

import wikisuggest
from wikisuggest import InvalidParameter, LinkEngine
from wikisuggest.engine import demo_articles

ROOT = REPO


LONE_SURROGATE = "Bad \udc80 title"


@pytest.fixture(scope="module")
def engine() -> LinkEngine:
    return LinkEngine.default()


@pytest.fixture(scope="module")
def aardvark() -> str:
    return demo_articles()["Aardvark"]


def async_client_for(server: ContractServer) -> wikisuggest.AsyncClient:
    return wikisuggest.AsyncClient(USER_AGENT, base_url=server.url, max_retries=0)


def test_a_string_is_not_a_list_of_pages(
    contract_server: ContractServer, engine: LinkEngine
) -> None:
    client = client_for(contract_server)
    with pytest.raises(InvalidParameter) as caught:
        client.link_recommendations_many("Aardvark", domain="en")
    assert caught.value.parameter == "pages"
    with pytest.raises(InvalidParameter):
        client.translation_recommendations_many("Aardvark", source="en", target="fr")
    with pytest.raises(InvalidParameter):
        engine.recommend_many("The aardvark is a mammal.")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameter):
        next(engine.recommend_iter("The aardvark is a mammal."))  # type: ignore[arg-type]
    assert contract_server.requests == []  # not one request per character


async def test_a_string_is_not_a_list_of_pages_async(contract_server: ContractServer) -> None:
    client = async_client_for(contract_server)
    with pytest.raises(InvalidParameter):
        await client.link_recommendations_many("Aardvark", domain="en")
    assert contract_server.requests == []


def test_a_lone_surrogate_fails_only_its_request(contract_server: ContractServer) -> None:
    client = client_for(contract_server)
    results = client.link_recommendations_many(["Cat", LONE_SURROGATE, "Dog"], domain="en")
    assert [item.ok for item in results] == [True, False, True]
    assert isinstance(results[1].error, InvalidParameter)
    assert len(contract_server.requests) == 2
    revisions = client.link_recommendations_for_revision_many(
        [
            {"page_title": "Cat", "wikitext": "x", "revid": 1, "pageid": 2},
            {"page_title": "Dog", "wikitext": "\udc80", "revid": 1, "pageid": 2},
        ],
        domain="en",
    )
    assert isinstance(revisions[1].error, InvalidParameter)
    translations = client.translation_recommendations_many(
        ["Douglas Adams", LONE_SURROGATE], source="en", target="fr"
    )
    assert [item.ok for item in translations] == [True, False]
    with pytest.raises(InvalidParameter):
        client.link_recommendations("wikipedia", "en", LONE_SURROGATE)


def test_client_closes(contract_server: ContractServer) -> None:
    with client_for(contract_server) as client:
        assert client.link_recommendations("wikipedia", "en", "Cat").page_title == "Cat"
    assert client.closed and "closed" in repr(client)
    with pytest.raises(wikisuggest.ClientClosed):
        client.link_recommendations("wikipedia", "en", "Cat")
    with pytest.raises(wikisuggest.ClientClosed):
        client.link_recommendations_many(["Cat"], domain="en")
    client.close()  # again: nothing happens
    assert len(contract_server.requests) == 1


async def test_async_client_closes(contract_server: ContractServer) -> None:
    async with async_client_for(contract_server) as client:
        assert (await client.link_recommendations("wikipedia", "en", "Cat")).page_title == "Cat"
    with pytest.raises(wikisuggest.ClientClosed):
        await client.translation_recommendations("en", "fr")
    client.close()
    assert len(contract_server.requests) == 1


def test_blocking_client_is_generated_from_the_async_one() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "unasync.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_stale_blocking_client_fails_the_check(tmp_path: Path) -> None:
    """Editing the asyncio client without regenerating is caught."""
    import shutil

    (tmp_path / "scripts").mkdir()
    package = tmp_path / "python" / "wikisuggest" / "client"
    package.mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "unasync.py", tmp_path / "scripts")
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    shutil.copy(ROOT / "python" / "wikisuggest" / "client" / "_sync.py", package)
    edits = package.parent / "edits"
    edits.mkdir()
    for name in ("_wiki_async.py", "_wiki_sync.py"):
        shutil.copy(ROOT / "python" / "wikisuggest" / "edits" / name, edits)
    source = (ROOT / "python" / "wikisuggest" / "client" / "_async.py").read_text()
    (package / "_async.py").write_text(source.replace("the service recommends from", "there are"))
    script = [sys.executable, str(tmp_path / "scripts" / "unasync.py")]
    stale = subprocess.run([*script, "--check"], capture_output=True, text=True, check=False)
    assert stale.returncode == 1 and "stale" in stale.stderr
    subprocess.run(script, capture_output=True, check=True)
    assert "Every page collection there are" in (package / "_sync.py").read_text()
    fresh = subprocess.run([*script, "--check"], capture_output=True, text=True, check=False)
    assert fresh.returncode == 0, fresh.stderr


def test_sync_and_async_clients_have_the_same_methods() -> None:
    def public(cls: type) -> dict[str, object]:
        return {
            name: inspect.signature(member).parameters
            for name, member in vars(cls).items()
            if callable(member) and not name.startswith("_")
        }

    sync, asynchronous = public(wikisuggest.Client), public(wikisuggest.AsyncClient)
    assert sync == asynchronous and len(sync) == 14
    sync, asynchronous = public(wikisuggest.Wiki), public(wikisuggest.AsyncWiki)
    assert sync == asynchronous and set(sync) == {"page", "siteinfo", "read", "login", "save"}


def test_asyncio_program_exits_cleanly() -> None:
    """An asyncio program that used the client ends with status 0: the I/O threads finish
    handing results to asyncio before the interpreter is finalized (it used to abort about
    one exit in four)."""
    script = (
        "import asyncio, wikisuggest\n"
        "async def main():\n"
        "    async with wikisuggest.AsyncClient('T/1.0 (t@example.org)') as client:\n"
        "        calls = [client.link_recommendations('wikipedia', 'en', t)\n"
        "                 for t in ('Aardvark', 'Apollo 11')]\n"
        "        return await asyncio.gather(*calls)\n"
        "print(sum(len(r) for r in asyncio.run(main())))\n"
    )
    pages = ROOT / "tests" / "data" / "parity" / "articles" / "enwiki"
    with wikisuggest.Server(datasets=_datasets(), pages=pages) as server:
        env = {**os.environ, "WIKISUGGEST_BASE_URL": server.url}
        codes = [
            subprocess.run(
                [sys.executable, "-c", script], env=env, capture_output=True, timeout=60
            ).returncode
            for _ in range(12)
        ]
    assert codes == [0] * 12


def _datasets() -> Path:
    return PARITY / "datasets"
