"""One list of arguments per operation: unknown keywords refused, defaults applied once, each
options list written once."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.clients import client_for
from support.contract_server import ContractServer
from support.paths import REPO

import wikisuggest
from wikisuggest import InvalidParameter, LinkEngine
from wikisuggest.engine import Page, demo_articles

ROOT = REPO


@pytest.fixture(scope="module")
def engine() -> LinkEngine:
    return LinkEngine.default()


@pytest.fixture(scope="module")
def aardvark() -> str:
    return demo_articles()["Aardvark"]


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


#: Where each default is written: the options' type in the crate every side shares.
DEFAULTS_OWNER = ROOT / "crates" / "wikisuggest-records" / "src" / "params.rs"

#: An option's name followed closely by its default's value, in any spelling: ``threshold:
#: 0.5``, ``threshold=0.5``, ``"threshold": 0.5``, ``--threshold`` … ``default=0.5``, "threshold
#: of 0.5", "at most 15 links", ``count=12``, ``unwrap_or(12)`` after ``count``.
_WRITTEN_DEFAULTS = [
    re.compile(r"threshold\W[^\n|]{0,40}?(?<![\w.])0\.5(?![\w.])", re.IGNORECASE),
    re.compile(r"(?:max_recommendations|--max\b|at most)[^\n|]{0,40}?(?<![\w.])15(?![\w.])"),
    re.compile(r"\bcount\b[^\n|]{0,40}?(?<![\w.])(?<!, )12(?![\w.])"),
    re.compile(r"search_algorithm[\"']?\s*(?:[:=]|default=)\s*[\"']morelike"),
    re.compile(r"rank_method[\"']?\s*(?:[:=]|default=)\s*[\"']default"),
]


def _shipped_sources() -> Iterator[Path]:
    """The code and docs that ship: the package, the binding, the crates' sources (their
    tests apart), the README and the docs."""
    yield from (ROOT / "python" / "wikisuggest").rglob("*.py")
    yield from (ROOT / "src").rglob("*.rs")
    for crate in (ROOT / "crates").iterdir():
        yield from (crate / "src").rglob("*.rs")
    yield ROOT / "README.md"
    yield from (ROOT / "docs").glob("*.md")


def _without_tests(path: Path, text: str) -> str:
    """A Rust file's text before its test module (tests write values on purpose)."""
    if path.suffix == ".rs":
        return text.split("#[cfg(test)]", 1)[0]
    return text


def test_each_default_is_written_once_in_rust() -> None:
    """A default is written in one place, the options' type in Rust; every other place reads
    it (Python from ``wikisuggest.LINK_DEFAULTS`` and its siblings), so none can drift."""
    written = []
    for path in _shipped_sources():
        if path == DEFAULTS_OWNER or path.name in ("tests.rs",) or "tests" in path.parts:
            continue
        text = _without_tests(path, path.read_text(encoding="utf-8"))
        for pattern in _WRITTEN_DEFAULTS:
            for found in pattern.finditer(text):
                line = text.count("\n", 0, found.start()) + 1
                written.append(f"{path.relative_to(ROOT)}:{line}: {found.group()}")
    assert written == []
    # The pattern finds the defaults where they are written.
    owner = DEFAULTS_OWNER.read_text(encoding="utf-8")
    assert "DEFAULT_THRESHOLD: f64 = 0.5" in owner
    assert "DEFAULT_MAX_RECOMMENDATIONS: i64 = 15" in owner
    assert "DEFAULT_COUNT: i64 = 12" in owner
    for sample in ["threshold: float = 0.5", '"--max", type=int, default=15', "count=12"]:
        assert any(p.search(sample) for p in _WRITTEN_DEFAULTS), sample


def test_every_front_end_reads_the_exported_defaults() -> None:
    """The extension's defaults are what the signatures, the command line and the engine use,
    and nobody can change them for everybody else."""
    from wikisuggest.cli import parser as build_parser
    from wikisuggest.datasets.diff import THRESHOLD
    from wikisuggest.engine.preview import preview_rules

    link = wikisuggest.LINK_DEFAULTS
    assert dict(link) == {
        "language_code": None,
        "threshold": link["threshold"],
        "max_recommendations": link["max_recommendations"],
        "sections_to_exclude": (),
    }
    assert set(wikisuggest.ENGINE_DEFAULTS) == set(link) | {"time_budget", "rules"}
    assert {k: wikisuggest.ENGINE_DEFAULTS[k] for k in link} == dict(link)
    assert wikisuggest.TRANSLATION_DEFAULTS["search_algorithm"] == "morelike"
    with pytest.raises(TypeError):
        link["threshold"] = 0.9  # type: ignore[index]
    parameters = inspect.signature(preview_rules).parameters
    assert parameters["threshold"].default == link["threshold"]
    assert parameters["max_recommendations"].default == link["max_recommendations"]
    assert link["threshold"] == THRESHOLD
    parser = build_parser()
    for argv in (
        ["links", "en", "Cat"],
        ["demo"],
        ["recommend-dump", "d.xml", "--datasets", "x", "--wiki", "enwiki", "--out", "o"],
        ["rules", "preview", "--dump", "d.xml", "--datasets", "x", "--rules", "r.toml"],
    ):
        args = parser.parse_args(argv)
        assert (args.threshold, args.max_recommendations) == (
            link["threshold"],
            link["max_recommendations"],
        ), argv
    translate = parser.parse_args(["translate", "en", "fr"])
    assert translate.count == wikisuggest.TRANSLATION_DEFAULTS["count"]
    assert translate.rank_method == wikisuggest.TRANSLATION_DEFAULTS["rank_method"]
