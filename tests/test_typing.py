"""The typed surface: results type-check under mypy --strict, and no public method returns Any."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from support.paths import REPO

ROOT = REPO


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
