"""The package's layout, as a rule: each wing imports only the floors below it, no two modules
import each other, and the module paths of 0.1 still import (with a warning) for one release."""

from __future__ import annotations

import ast
import importlib
import re
import sys
import warnings
from pathlib import Path

import pytest

import wikisuggest
from wikisuggest import _aliases

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "wikisuggest"

#: The floors, from the ground up: a module may import from its own floor's rooms and any
#: floor below, never from a floor above. A room is a top-level module or a wing (folder).
FLOORS: list[set[str]] = [
    {"errors", "_args", "_html", "_dataframes", "_progress", "_aliases"},
    {"records", "batch"},
    {"_native"},
    {"auth", "datasets", "server"},
    {"client", "engine", "translation"},
    {"edits"},
    {"__init__"},
    {"cli"},
    {"__main__"},
]
#: Wings on one floor that may not import each other, whatever their floor allows.
APART = {
    ("auth", "datasets"),
    ("auth", "server"),
    ("datasets", "server"),
    ("client", "engine"),
    ("engine", "translation"),
}


def _room(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return parts[0]


def _imported_rooms(path: Path) -> set[str]:
    """The rooms a module imports from, by its relative and absolute imports."""
    tree = ast.parse(path.read_text("utf-8"))
    depth = len(path.relative_to(PACKAGE).parts) - 1
    rooms: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                up = node.level - 1
                if up > depth:
                    continue
                base = list(path.relative_to(PACKAGE).parts[: depth - up])
                target = [*base, *(node.module.split(".") if node.module else [])]
                if target:
                    rooms.add(target[0])
                else:  # `from .. import x`: each name is a room of the package
                    rooms.update(alias.name for alias in node.names)
            elif node.module and node.module.split(".")[0] == "wikisuggest":
                names = node.module.split(".")[1:]
                rooms.update([names[0]] if names else [a.name for a in node.names])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "wikisuggest":
                    rooms.add(names[1] if len(names) > 1 else "__init__")
    return rooms


def _floor(room: str) -> int:
    for level, rooms in enumerate(FLOORS):
        if room in rooms:
            return level
    raise AssertionError(f"room {room!r} is on no floor: add it to FLOORS")


def test_every_import_runs_down_or_across() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py*")):
        if path.suffix not in (".py", ".pyi"):
            continue
        room = _room(path)
        for target in _imported_rooms(path) - {room}:
            if _floor(target) > _floor(room) or (room, target) in APART:
                wrong.append(f"{path.relative_to(PACKAGE)} imports {target}")
            if (target, room) in APART:
                wrong.append(f"{path.relative_to(PACKAGE)} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_the_rule_sees_an_upward_import(tmp_path: Path) -> None:
    """The check above is not vacuous: an import from a record module into a wing is seen."""
    module = PACKAGE / "records.py"
    assert "engine" not in _imported_rooms(module)
    fake = tmp_path / "records.py"
    fake.write_text("from .engine import LinkEngine\n")
    rooms = set()
    tree = ast.parse(fake.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            rooms.add(node.module.split(".")[0])
    assert _floor("engine") > _floor("records") and rooms == {"engine"}


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_imports(package: Path) -> dict[str, set[str]]:
    """Each module of ``package`` and the package's modules it imports, at its top or inside
    a function, typing-only imports included: ``from .x import y`` names ``x.y`` when that is
    a module, else ``x``."""
    files = {_module_name(p, package): p for p in package.rglob("*.py")}
    modules = set(files) | {_module_name(p, package) for p in package.glob("*.pyi")}
    root = package.name

    def known(name: str) -> str:
        while name not in modules and "." in name:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        own = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = own.split(".")[: len(own.split(".")) - max(node.level - 1, 0)]
                target = (
                    ".".join([*base, *([node.module] if node.module else [])])
                    if node.level
                    else node.module or ""
                )
                if target.split(".")[0] == root:
                    found.update(known(f"{target}.{alias.name}") for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(known(a.name) for a in node.names if a.name.split(".")[0] == root)
        graph[name] = found - {name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that reach each other through their imports."""
    reach = {m: set(targets) for m, targets in graph.items()}
    changed = True
    while changed:
        changed = False
        for targets in reach.values():
            more = set().union(*(reach.get(t, set()) for t in targets)) - targets
            if more:
                targets |= more
                changed = True
    groups = {frozenset({m, *(t for t in reach[m] if m in reach.get(t, ()))}) for m in reach}
    return sorted(sorted(g) for g in groups if len(g) > 1)


def test_no_module_imports_one_that_imports_it_back() -> None:
    """Within a wing as between them, the imports draw no circle, lazy and typing-only
    imports included: a module that needs another's types takes what it reads as a protocol
    instead (as the applied links' HTML view does)."""
    assert _circles(_module_imports(PACKAGE)) == []


def test_the_rule_sees_a_circle(tmp_path: Path) -> None:
    package = tmp_path / "wikisuggest"
    (package / "edits").mkdir(parents=True)
    (package / "__init__.py").write_text("from .edits.apply import apply_links\n")
    (package / "edits" / "__init__.py").write_text("")
    (package / "edits" / "apply.py").write_text(
        "def view():\n    from .review import html\n    return html\n"
    )
    (package / "edits" / "review.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .apply import view\n"
    )
    assert _circles(_module_imports(package)) == [
        ["wikisuggest.edits.apply", "wikisuggest.edits.review"]
    ]


def _binding_uses(src: Path) -> dict[str, set[str]]:
    """Each module of the extension (``src/*.rs``) and the modules it names as ``crate::x``
    in its code (comments left out)."""
    modules = {p.stem for p in src.glob("*.rs")} - {"lib"}
    graph: dict[str, set[str]] = {}
    for name in modules:
        code = re.sub(r"//[^\n]*", "", (src / f"{name}.rs").read_text("utf-8"))
        named = set(re.findall(r"\bcrate::(\w+)", code))
        for group in re.findall(r"\buse crate::\{([^}]*)\}", code):
            named.update(part.strip().split("::")[0] for part in group.split(","))
        graph[name] = (named & modules) - {name}
    return graph


def test_no_binding_module_uses_one_that_uses_it_back(tmp_path: Path) -> None:
    """The extension's modules draw no circle either (see the architecture page)."""
    assert _circles(_binding_uses(PACKAGE.parent.parent / "src")) == []
    (tmp_path / "call.rs").write_text("use crate::{awaitable::awaitable, errors};\n")
    (tmp_path / "awaitable.rs").write_text("// crate::errors\nfn f() -> crate::call::Deliver {}\n")
    (tmp_path / "errors.rs").write_text("")
    assert _circles(_binding_uses(tmp_path)) == [["awaitable", "call"]]


@pytest.mark.parametrize(("old", "new"), sorted(_aliases.MOVED.items()))
def test_old_module_paths_still_import_with_a_warning(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    if old == "wikisuggest.spark":
        pytest.importorskip("pyspark")
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    replacement = importlib.import_module(new)
    names = getattr(replacement, "__all__", [])
    assert names and module.__all__ == names
    for name in names:
        assert getattr(module, name) is getattr(replacement, name)


def test_the_old_page_name_is_the_revision_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="wikisuggest.Revision"):
        old = wikisuggest.Page
    assert old is wikisuggest.Revision
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine_page: object = wikisuggest.engine.Page
        assert engine_page is not wikisuggest.Revision
    with pytest.raises(AttributeError):
        _ = wikisuggest.NoSuchName


def test_tests_mirror_the_wings() -> None:
    """The tests live in a folder per wing of the package (and one for the reference server);
    at most a dozen files stay at the top, and the helpers they share are in one place."""
    tests = PACKAGE.parent.parent / "tests"
    wings = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    folders = {
        p.name
        for p in tests.iterdir()
        if p.is_dir() and any(p.glob("test_*.py")) and p.name != "support"
    }
    assert wings - {"data"} <= folders, f"wings without a test folder: {wings - folders}"
    assert folders <= wings | {"server"}, f"test folders that mirror no wing: {folders - wings}"
    assert len(list(tests.glob("test_*.py"))) <= 12
    stray = [
        str(p.relative_to(tests))
        for p in tests.rglob("*.py")
        if not p.name.startswith(("test_", "conftest"))
        and not {"support", "fixtures_builder"} & set(p.relative_to(tests).parts[:-1])
    ]
    assert stray == [], "helpers belong in tests/support"
