"""The surface a newcomer meets: misuse is refused clearly, results behave like data, clients
close, the blocking client is the generated twin of the asyncio one, the CLI speaks in lines."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import USER_AGENT, client_for
from contract_server import ContractServer

import wikisuggest
from wikisuggest import InvalidParameter, LinkEngine
from wikisuggest.engine import Page, PageSpec, default_dataset_path, demo_articles
from wikisuggest.server import ServerOptions

ROOT = Path(__file__).resolve().parent.parent
LONE_SURROGATE = "Bad \udc80 title"


@pytest.fixture(scope="module")
def engine() -> LinkEngine:
    return LinkEngine.default()


@pytest.fixture(scope="module")
def aardvark() -> str:
    return demo_articles()["Aardvark"]


def async_client_for(server: ContractServer) -> wikisuggest.AsyncClient:
    return wikisuggest.AsyncClient(USER_AGENT, base_url=server.url, max_retries=0)


# --- a string where pages are expected ------------------------------------------------------


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


# --- one validation for client and engine ---------------------------------------------------


@pytest.mark.parametrize(
    ("options", "parameter"),
    [
        ({"threshold": math.nan}, "threshold"),
        ({"threshold": 2.0}, "threshold"),
        ({"threshold": -0.1}, "threshold"),
        ({"max_recommendations": -1}, "max_recommendations"),
        ({"sections_to_exclude": [""]}, "sections_to_exclude"),
    ],
)
def test_engine_refuses_what_the_client_refuses(
    contract_server: ContractServer,
    engine: LinkEngine,
    aardvark: str,
    options: dict[str, Any],
    parameter: str,
) -> None:
    with pytest.raises(InvalidParameter) as by_client:
        client_for(contract_server).link_recommendations("wikipedia", "en", "Aardvark", **options)
    with pytest.raises(InvalidParameter) as by_engine:
        engine.recommend(aardvark, "Aardvark", **options)
    with pytest.raises(InvalidParameter) as by_batch:
        engine.recommend_many([Page(aardvark, "Aardvark")], **options)
    assert by_client.value.parameter == by_engine.value.parameter == parameter
    assert by_batch.value.parameter == parameter
    assert contract_server.requests == []


async def test_engine_async_refuses_nan(engine: LinkEngine, aardvark: str) -> None:
    with pytest.raises(InvalidParameter):
        await engine.recommend_async(aardvark, "Aardvark", threshold=math.nan)
    result = await engine.recommend_async(aardvark, "Aardvark", threshold=0.2)
    assert result == engine.recommend(aardvark, "Aardvark", threshold=0.2)
    with pytest.raises(InvalidParameter):
        await engine.recommend_async(aardvark, "Aardvark", treshold=0.2)  # type: ignore[call-arg]


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


def _datasets() -> Path:
    return ROOT / "tests" / "data" / "parity" / "datasets"


# --- one bad item does not lose the batch ---------------------------------------------------


def test_a_lone_surrogate_fails_only_its_page(engine: LinkEngine, aardvark: str) -> None:
    pages: list[PageSpec] = [
        Page(aardvark, "Aardvark"),
        Page(aardvark + "\ud800", "Aardvark"),
        {"wikitext": aardvark, "page_title": LONE_SURROGATE},
        Page(aardvark, "Aardvark"),
    ]
    results = engine.recommend_many(pages, workers=1)
    assert [item.ok for item in results] == [True, False, False, True]
    assert isinstance(results[1].error, InvalidParameter)
    assert results[1].error.parameter == "wikitext"
    assert isinstance(results[2].error, InvalidParameter)
    assert results[0].unwrap() == results[3].unwrap() and len(results[0].unwrap()) > 0
    assert [item.ok for item in engine.recommend_iter(pages)] == [True, False, False, True]
    with pytest.raises(InvalidParameter):
        engine.recommend(aardvark + "\udc80", "Aardvark")


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


# --- pages in the order recommend takes them ------------------------------------------------


def test_swapped_title_and_wikitext_are_refused(engine: LinkEngine, aardvark: str) -> None:
    with pytest.raises(InvalidParameter) as caught:
        engine.recommend("Aardvark", aardvark)  # (title, wikitext): the wrong way round
    assert caught.value.parameter == "page_title"
    swapped = engine.recommend_many([("Aardvark", aardvark)])
    assert isinstance(swapped[0].error, InvalidParameter)
    by_keyword = engine.recommend_many([Page(page_title="Aardvark", wikitext=aardvark)])
    positional = engine.recommend_many([(aardvark, "Aardvark")])
    assert (
        by_keyword[0].unwrap() == positional[0].unwrap() == engine.recommend(aardvark, "Aardvark")
    )


# --- results behave like data ---------------------------------------------------------------


def test_results_are_json_data_and_truthy(engine: LinkEngine, aardvark: str) -> None:
    result = engine.recommend(aardvark, "Aardvark")
    as_json = json.loads(json.dumps(dataclasses.asdict(result)))
    assert [link["link_target"] for link in as_json["links"]] == [
        link.link_target for link in result.links
    ]
    assert json.loads(json.dumps(result.to_dict()))["page_title"] == "Aardvark"
    empty = engine.recommend("Nothing to link here.", "Aardvark")
    assert len(empty) == 0 and empty.links == ()
    assert bool(empty)  # an answer with no links is still an answer
    with pytest.raises(TypeError):
        empty.extra["x"] = 1  # type: ignore[index]
    assert empty.extra == {}


def test_batch_reprs_are_short(engine: LinkEngine, aardvark: str) -> None:
    pages = [Page(aardvark, "Aardvark")] * 20 + [Page(aardvark, "Not|a title")]
    results = engine.recommend_many(pages, workers=2)
    assert len(aardvark) > 10_000
    assert repr(results) == "BatchResults(21 items: 20 ok, 1 failed)"
    assert len(repr(results[0])) < 200 and "Aardvark" in repr(results[0])
    assert "InvalidParameter" in repr(results[-1]) and len(repr(results[-1])) < 250


# --- lifecycle ------------------------------------------------------------------------------


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


def test_engine_closes(aardvark: str) -> None:
    with LinkEngine.open(default_dataset_path(), "enwiki") as opened:
        assert opened.recommend(aardvark, "Aardvark").links
    assert opened.closed and "closed" in repr(opened) and opened.wiki_id == "enwiki"
    with pytest.raises(wikisuggest.ClientClosed, match="LinkEngine was closed"):
        opened.recommend(aardvark, "Aardvark")
    with pytest.raises(wikisuggest.ClientClosed):
        opened.recommend_many([Page(aardvark, "Aardvark")])
    with pytest.raises(wikisuggest.ClientClosed):
        opened.info()
    with pytest.raises(wikisuggest.ClientClosed):
        opened.score("Aardvark", "mammal")
    opened.close()  # again: nothing happens
    assert opened.closed


async def test_engine_closed_refuses_async(aardvark: str) -> None:
    engine = LinkEngine.open(default_dataset_path(), "enwiki")
    engine.close()
    with pytest.raises(wikisuggest.ClientClosed):
        await engine.recommend_async(aardvark, "Aardvark")


def test_closing_the_default_engine_reopens_it() -> None:
    # In a child process: other modules' fixtures hold this process's shared engine.
    program = (
        "from wikisuggest import LinkEngine\n"
        "shared = LinkEngine.default()\n"
        "shared.close()\n"
        "reopened = LinkEngine.default()\n"
        "assert reopened is not shared and not reopened.closed and shared.closed\n"
        "assert reopened is LinkEngine.default()\n"
        "print(reopened.info().anchors)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "20842"


def test_server_close_is_stop() -> None:
    server = wikisuggest.serve(port=0, background=True, threads=1, request_timeout=5.0)
    with server:
        assert server.running
    assert not server.running
    server.close()


# --- one definition per operation -----------------------------------------------------------


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


def test_serve_takes_every_server_option() -> None:
    server_options = set(inspect.signature(wikisuggest.Server).parameters) - {"port"}
    assert server_options == set(ServerOptions.__annotations__)
    assert {"max_body_bytes", "request_timeout", "threads"} <= server_options


# --- the command line -----------------------------------------------------------------------


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wikisuggest", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    missing = cli("convert", str(tmp_path / "nothing"), "enwiki", str(tmp_path / "out"))
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr
    assert missing.stderr.count("\n") == 1 and missing.stderr.startswith("wikisuggest convert: ")
    debug = cli("--debug", "convert", str(tmp_path / "nothing"), "enwiki", str(tmp_path / "out"))
    assert debug.returncode == 1 and "Traceback" in debug.stderr  # raised: Python's status


def test_cli_token_without_client_id_is_a_usage_error() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WIKISUGGEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "token"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "usage:" in done.stderr and "--client-id" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_closed_pipe_ends_quietly() -> None:
    done = subprocess.run(
        f"{sys.executable} -m wikisuggest demo | head -n 1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.startswith("Local link engine")
    assert done.stderr == ""


def test_cli_missing_extra_names_the_install_line(tmp_path: Path) -> None:
    # An environment without the `train` extra: xgboost cannot be imported.
    (tmp_path / "xgboost.py").write_text("raise ImportError('No module named xgboost')\n")
    env = {"PYTHONPATH": str(tmp_path)}
    done = cli("build", str(tmp_path / "dump.xml"), "--wiki", "x", "--out", str(tmp_path), env=env)
    assert done.returncode == 1
    assert "pip install 'wikisuggest[train]'" in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


# --- typed surface --------------------------------------------------------------------------


def test_typed_results_under_mypy(tmp_path: Path) -> None:
    """The README-style uses type-check under --strict: raw picks the type, batches are typed."""
    sample = tmp_path / "typed_use.py"
    sample.write_text(
        "import wikisuggest\n"
        "from typing import Any\n"
        "async def main(c: wikisuggest.AsyncClient, s: wikisuggest.Client) -> None:\n"
        "    r = await c.link_recommendations('wikipedia', 'en', 'Cat')\n"
        "    n: int = len(r.links)\n"
        "    d: dict[str, Any] = await c.link_recommendations('wikipedia', 'en', 'Cat', raw=True)\n"
        "    many = await c.link_recommendations_many(['Cat'], domain='en')\n"
        "    titles: list[str | None] = [x.page_title for x in many.results]\n"
        "    for item in s.link_recommendations_many(['Cat'], domain='en').as_completed():\n"
        "        t: wikisuggest.LinkRecommendationSet = item.unwrap()\n"
        "    async for done in c.link_recommendations_many(['Cat'], domain='en', raw=True):\n"
        "        raw: dict[str, Any] | None = done.result\n"
        "    ordered: wikisuggest.BatchResults[wikisuggest.LinkRecommendationSet] = (\n"
        "        s.link_recommendations_many(['Cat'], domain='en').wait()\n"
        "    )\n"
        "    pages = await wikisuggest.LinkEngine.default().recommend_many_async([('x', 'Cat')])\n"
        "    found: list[wikisuggest.LinkRecommendationSet] = pages.results\n"
        "    recs = s.translation_recommendations('en', 'fr')\n"
        "    first: str = recs[0].title\n"
        "    e = await wikisuggest.LinkEngine.default().recommend_async('x', 'Cat')\n"
        "    links: int = len(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(sample)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout


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


def test_build_scan_is_interruptible(tmp_path: Path) -> None:
    """Ctrl-C during `wikisuggest build`'s scan of a dump ends it (the dump here is a pipe that
    never ends, so only an interruptible wait can return)."""
    import signal

    dump = tmp_path / "endless-pages-articles.xml"
    os.mkfifo(dump)
    out = str(tmp_path / "out")
    process = subprocess.Popen(
        [sys.executable, "-m", "wikisuggest", "build", str(dump), "--wiki", "x", "--out", out],
        stderr=subprocess.PIPE,
        text=True,
    )
    # Opening the writing end waits until the scan has opened the reading end.
    with open(dump, "w") as writer:
        writer.write('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">\n<page>')
        writer.flush()
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        try:
            status = process.wait(timeout=30)
        finally:
            process.kill()
    assert process.stderr is not None
    assert status == 130, process.stderr.read()
    assert "interrupted" in process.stderr.read()
    process.stderr.close()


# --- no public method returns Any -----------------------------------------------------------

#: Types whose argument is what the caller gets: awaited, iterated, collected or unwrapped.
_VALUE_OF = {
    "Awaitable",
    "AsyncIterator",
    "AsyncGenerator",
    "Iterator",
    "Iterable",
    "Generator",
    "list",
    "BatchResults",
    "AsyncBatch",
    "BatchItem",
    "NativeCall",
}
#: Dunders a caller's value comes from (the others are protocol plumbing).
_VALUE_DUNDERS = {"__enter__", "__aenter__", "__iter__", "__next__", "__getitem__", "__await__"}


def _leaves_any(node: ast.expr, awaited: bool = False) -> bool:
    """Whether a return annotation leaves the caller's value untyped: ``Any`` itself, in a
    union, or as what is awaited, iterated or collected (``dict[str, Any]``, a JSON object,
    is typed)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _leaves_any(ast.parse(node.value, mode="eval").body, awaited)
    if isinstance(node, ast.Name):
        return node.id == "Any"
    if isinstance(node, ast.BinOp):
        return _leaves_any(node.left) or _leaves_any(node.right)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        if node.value.id not in _VALUE_OF:
            return False
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        # `__await__` is a generator whose *return* value is the awaited one.
        return _leaves_any(args[-1] if awaited else args[0])
    return False


def _public_returns(path: Path) -> Iterator[tuple[str, ast.expr | None]]:
    """``(name, return annotation)`` of every public function and method in ``path``; of an
    overloaded one, its overloads (what callers see), not its implementation."""
    tree = ast.parse(path.read_text())
    scopes: list[tuple[str, list[ast.stmt]]] = []
    if not path.stem.startswith("_") or path.suffix == ".pyi":
        scopes.append((path.stem, tree.body))
    scopes += [
        (f"{path.stem}.{node.name}", node.body)
        for node in tree.body
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
    ]
    for scope, body in scopes:
        functions = [f for f in body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
        overloaded = {
            f.name
            for f in functions
            if any(ast.unparse(d).endswith("overload") for d in f.decorator_list)
        }
        for f in functions:
            if f.name.startswith("_") and f.name not in _VALUE_DUNDERS:
                continue
            if f.name in overloaded and not f.decorator_list:
                continue
            yield f"{scope}.{f.name}", f.returns


def test_no_public_method_returns_any() -> None:
    """Every public function and method of the package and of its native module's stub says
    what it returns (``raw=True`` picks ``dict``; batches carry their item type)."""
    package = ROOT / "python" / "wikisuggest"
    checked, untyped = 0, []
    for path in sorted([*package.rglob("*.py"), package / "_native.pyi"]):
        for name, returns in _public_returns(path):
            checked += 1
            awaited = name.endswith("__await__")
            if returns is None or _leaves_any(returns, awaited):
                untyped.append(f"{name} -> {returns and ast.unparse(returns)}")
    assert untyped == []
    assert checked > 200  # the scan sees the whole surface


def test_leaves_any_reads_annotations_as_callers_do() -> None:
    def leaves(annotation: str, awaited: bool = False) -> bool:
        return _leaves_any(ast.parse(annotation, mode="eval").body, awaited)

    assert leaves("Any") and leaves("Awaitable[Any]") and leaves("AsyncBatch[Any] | None")
    assert leaves("NativeCall[Any]") and leaves("'BatchResults[Any]'")
    assert not leaves("dict[str, Any]") and not leaves("list[dict[str, Any]]")
    assert not leaves("Generator[Any, None, BatchResults[T]]", awaited=True)


# --- one list of arguments per operation ----------------------------------------------------


def test_unknown_keyword_arguments_are_refused(
    contract_server: ContractServer, engine: LinkEngine, aardvark: str
) -> None:
    """The operations that take their options as one typed set refuse a misspelt one before
    sending, as Python refuses an unknown keyword."""
    client = client_for(contract_server)
    misspelt: dict[str, Any] = {"treshold": 0.2}
    with pytest.raises(InvalidParameter) as caught:
        client.link_recommendations("wikipedia", "en", "Cat", **misspelt)
    assert caught.value.parameter == "treshold"
    with pytest.raises(InvalidParameter):
        client.link_recommendations_many(["Cat"], domain="en", **misspelt)
    with pytest.raises(InvalidParameter):
        client.translation_recommendations("en", "fr", cuont=3)  # type: ignore[call-overload]
    with pytest.raises(InvalidParameter):
        client.translation_recommendations_many([("en", "fr")], cuont=3)  # type: ignore[call-overload]
    with pytest.raises(InvalidParameter):
        engine.recommend(aardvark, "Aardvark", **misspelt)
    with pytest.raises(InvalidParameter):
        engine.recommend_many([Page(aardvark, "Aardvark")], **misspelt)
    assert contract_server.requests == []


def test_defaults_are_applied_once_for_every_form(
    contract_server: ContractServer, engine: LinkEngine, aardvark: str
) -> None:
    """Leaving an option out means its one default, whichever form of the operation is used."""
    client = client_for(contract_server)
    single = client.link_recommendations("wikipedia", "en", "Cat")
    batch = client.link_recommendations_many(["Cat"], domain="en")
    assert batch[0].unwrap() == single
    query = [request.query for request in contract_server.requests]
    assert query[0] == query[1]
    assert query[0]["threshold"] == ["0.5"] and query[0]["max_recommendations"] == ["15"]
    translations = client.translation_recommendations("en", "fr")
    paged = client.translation_page("en", "fr")
    assert list(paged.items) == translations
    assert contract_server.requests[2].query == contract_server.requests[3].query
    assert contract_server.requests[2].query["count"] == ["12"]
    explicit = engine.recommend(aardvark, "Aardvark", threshold=0.5, max_recommendations=15)
    assert engine.recommend(aardvark, "Aardvark") == explicit
    assert engine.recommend_many([Page(aardvark, "Aardvark")])[0].unwrap() == explicit


# --- installing -----------------------------------------------------------------------------


def test_readme_states_what_the_build_needs() -> None:
    """The README names the Rust toolchain the build needs (the workspace's ``rust-version``,
    which clippy holds the code to), how to see the build's progress, the one abi3 wheel for
    every Python from 3.10 (as the build and the package metadata declare it), and what the
    suite costs."""
    import tomllib

    readme = (ROOT / "README.md").read_text()
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    stated = re.search(r"Rust toolchain ≥ (\d+)\.(\d+)", readme)
    assert stated, "the README names no Rust toolchain"
    manifest = cargo["workspace"]["package"]["rust-version"].split(".")
    assert (int(stated[1]), int(stated[2])) == (int(manifest[0]), int(manifest[1]))
    assert "pip\ninstall -v ." in readme or "pip install -v ." in readme
    assert cargo["features"]["abi3"] == ["pyo3/abi3-py310"]
    assert pyproject["project"]["requires-python"] == ">=3.10"
    assert "maturin build --release --features abi3" in readme and "cp310-abi3" in readme
    assert re.search(r"`bash \.ci/run`.*took [\d.]+ minutes", readme, re.S)
    assert re.search(r"used [\d.]+ GB of disk", readme)


def test_shared_dependencies_are_pinned_once() -> None:
    """A third-party crate two workspace crates use is declared once, in
    ``[workspace.dependencies]``, so that it is built in one version."""
    import tomllib

    manifests = [ROOT / "Cargo.toml", *sorted((ROOT / "crates").glob("*/Cargo.toml"))]
    users: dict[str, list[str]] = {}
    loose: list[str] = []
    for manifest in manifests:
        data = tomllib.loads(manifest.read_text())
        tables = [data.get(k, {}) for k in ("dependencies", "dev-dependencies")]
        tables += [t.get("dependencies", {}) for t in data.get("target", {}).values()]
        for table in tables:
            for name, spec in table.items():
                if isinstance(spec, dict) and "path" in spec:
                    continue
                users.setdefault(name, []).append(manifest.parent.name)
                if not (isinstance(spec, dict) and spec.get("workspace")):
                    loose.append(f"{manifest.parent.name}: {name}")
    shared = {name for name, crates in users.items() if len(set(crates)) > 1}
    assert shared, "the scan found no shared dependency"
    assert [entry for entry in loose if entry.split(": ")[1] in shared] == []
    lock = tomllib.loads((ROOT / "Cargo.lock").read_text())
    versions = [p["version"] for p in lock["package"] if p["name"] == "base64"]
    assert len(versions) == 1, versions


def test_native_exception_handles_name_classes_of_the_tree() -> None:
    """The binding raises the classes of ``wikisuggest.errors`` through typed handles; each
    handle's name is a class of the one exception tree (a misspelt one would surface only when
    that error is raised)."""
    source = (ROOT / "src" / "errors.rs").read_text()
    names = re.findall(r"import_exception!\(wikisuggest\.errors, (\w+)\)", source)
    assert len(names) >= 20
    for name in names:
        cls = getattr(wikisuggest.errors, name)
        assert issubclass(cls, wikisuggest.WikisuggestError), name
    assert 'getattr("' not in source  # no look-up by a class-name string


def test_each_options_list_is_written_once() -> None:
    """The link and translation options (and the engine's) are one typed set per operation
    family, not a list of parameters repeated in every signature."""
    from wikisuggest.client._base import LinkOptions, TranslationOptions
    from wikisuggest.engine import PassOptions

    families = {
        LinkOptions: [
            "link_recommendations",
            "link_recommendations_for_revision",
            "link_recommendations_many",
            "link_recommendations_for_revision_many",
        ],
        TranslationOptions: [
            "translation_recommendations",
            "translation_page",
            "iter_translation_recommendations",
            "translation_recommendations_many",
        ],
    }
    for options, methods in families.items():
        for cls in (wikisuggest.Client, wikisuggest.AsyncClient):
            for name in methods:
                parameters = inspect.signature(getattr(cls, name)).parameters
                assert parameters["options"].kind is inspect.Parameter.VAR_KEYWORD, name
                assert not set(parameters) & set(options.__annotations__), name
    for name in ("recommend", "recommend_async", "recommend_iter", "recommend_many"):
        parameters = inspect.signature(getattr(LinkEngine, name)).parameters
        assert not set(parameters) & set(PassOptions.__annotations__), name
