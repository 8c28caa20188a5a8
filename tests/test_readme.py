"""Every example in README.md and in the documentation (docs/**/*.md) runs, as written, against
local resources.

Each fenced ``python``, ``bash`` and ``sh`` block is a test (fences may be indented, as inside
an admonition or a content tab, and may carry attributes after the language, such as
``title="bot.py"``). A block runs from a scratch folder that mirrors the repository root (the
repo's top-level entries are linked into it, so relative paths such as ``tests/data/...``
resolve, and files an example writes land in the scratch folder), with an environment pointing
at a reference server this module starts:

* ``WIKISUGGEST_BASE_URL`` and ``WIKISUGGEST_AUTH_URL``: the server (link datasets and pages
  of the parity sample, the shipped translation catalogs, ``examples/clients.toml``), standing
  in for Wikimedia's, which a reader needs no setting to reach;
* ``WIKISUGGEST_CLIENT_ID`` and ``WIKISUGGEST_CLIENT_SECRET``: its confidential example app,
  given only to a block that says it needs them (below);
* ``BROWSER``: a command that follows the authorization redirect, standing in for a person.

A block that needs more than the package says so on its first line, where the reader sees it
before running it: ``# Needs: pip install 'wikisuggest[pandas,progress]' mwapi`` names the
extras and other distributions it imports, ``# Needs: WIKISUGGEST_CLIENT_ID and
WIKISUGGEST_CLIENT_SECRET`` the environment it reads. The suite holds each block to its line:
it runs with only the environment the line names, and with ``support/block_imports`` on its
``PYTHONPATH``, which refuses any third-party import the block (or the package on its behalf)
makes that the line does not name; an extra the line names must be imported.

Python blocks also pass ``mypy --strict``. Markers, on the line before a fence:

* ``<!-- readme-test: skip: <reason> -->`` leaves a block out (in README.md only the set-up
  commands and installs may be; each page has a small allowance: see ``ALLOWED_SKIPS``);
* ``<!-- readme-test: until <text> -->`` runs a block that serves until stopped: it passes
  once ``<text>`` appears in its output, and is then interrupted.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomllib

import wikisuggest
from wikisuggest import LinkEngine
from wikisuggest._aliases import MOVED
from wikisuggest.engine import spark
from wikisuggest.translation.sample import default_catalog_path

ROOT = Path(__file__).resolve().parent.parent
RUNNABLE = ("python", "bash", "sh")
FENCE = re.compile(
    r"(?:^[ \t]*<!-- readme-test: (?P<marker>[^>]*?) -->\n)?"
    r"^(?P<indent>[ \t]*)```(?P<lang>python|bash|sh)(?:[ \t]+[^\n]*)?\n"
    r"(?P<code>.*?)^(?P=indent)```[ \t]*$",
    re.S | re.M,
)
#: An opening fence of a runnable language, counted independently of ``FENCE`` so that a fence
#: the parser misses fails a test instead of silently not running.
OPENING = re.compile(r"^[ \t]*```(?:python|bash|sh)(?:[ \t]|$)", re.M)
#: How many blocks a file may leave out: the README's two set-up commands and an install; a
#: page of the documentation, two (an install, a command that needs the internet).
ALLOWED_SKIPS = {"README.md": 3}
PAGE_SKIPS = 2
#: How long one block may run. Generous: a whole-wiki or Spark example takes a few seconds on a
#: quiet machine but minutes on a loaded one, and a slow block is not a failing one.
BLOCK_TIMEOUT = 600


#: The environment a block is given only when its ``# Needs:`` line names it.
GIVEN_WHEN_NAMED = frozenset({"WIKISUGGEST_CLIENT_ID", "WIKISUGGEST_CLIENT_SECRET"})
#: What a block says it needs: ``# Needs: ...`` on its first line.
NEEDS = re.compile(r"\A# Needs: (?P<what>.+)\n")
#: The sitecustomize that holds a block's imports to its ``# Needs:`` line.
IMPORT_GUARD = ROOT / "tests" / "support" / "block_imports"
EXTRAS: dict[str, list[str]] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))[
    "project"
]["optional-dependencies"]


@dataclass(frozen=True)
class Needs:
    #: Each extra named, with the top-level modules of its distributions.
    extras: dict[str, set[str]]
    #: Every top-level module the block may import.
    modules: set[str]
    environment: set[str]


def _distribution(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0]).lower()


def _modules_of(distribution: str) -> set[str]:
    owners = importlib.metadata.packages_distributions()
    found = {
        module
        for module, dists in owners.items()
        if distribution in {_distribution(d) for d in dists} and not module.startswith("_")
    }
    assert found, f"{distribution}: not installed, or no importable module"
    return found


def block_needs(block: Block) -> Needs:
    """What a block's ``# Needs:`` line names: extras (``'wikisuggest[a,b]'``), other
    distributions after ``pip install``, and environment variables."""
    line = NEEDS.match(block.code)
    if not line:
        return Needs({}, set(), set())
    # What is needed comes first; a parenthesis adds what is optional, or why.
    what, _, _ = line["what"].partition("(")
    extras: dict[str, set[str]] = {}
    for spec in re.findall(r"wikisuggest\[([\w,-]+)\]", what):
        for extra in spec.split(","):
            assert extra in EXTRAS, f"{block.name}: no extra {extra!r} in pyproject.toml"
            extras[extra] = {m for r in EXTRAS[extra] for m in _modules_of(_distribution(r))}
    modules = {m for found in extras.values() for m in found}
    # `pip install A B` up to the first `and`, `;` or parenthesis: what is installed.
    install = re.search(r"pip install (?P<args>(?:(?!\band\b)[^;(])+)", what)
    for word in install["args"].split() if install else []:
        if not word.strip("'\"").startswith("wikisuggest"):
            modules |= _modules_of(_distribution(word))
    environment = set(re.findall(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b", line["what"]))
    return Needs(extras, modules, environment)


@dataclass(frozen=True)
class Block:
    source: str
    line: int
    lang: str
    code: str
    marker: str | None

    @property
    def name(self) -> str:
        return f"{self.source}:{self.line}:{self.lang}"


def sources() -> list[Path]:
    """README.md and every Markdown page of the documentation, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def parse(path: Path) -> list[Block]:
    return parse_text(path.read_text("utf-8"), path.relative_to(ROOT).as_posix())


def parse_text(text: str, source: str) -> list[Block]:
    blocks = []
    for m in FENCE.finditer(text):
        code = textwrap.dedent(m["code"]) if m["indent"] else m["code"]
        line = text.count("\n", 0, m.start("code"))
        blocks.append(Block(source, line, m["lang"], code, m["marker"]))
    return blocks


SOURCES = sources()
BLOCKS = [block for path in SOURCES for block in parse(path)]
RUN = [b for b in BLOCKS if not (b.marker or "").startswith("skip")]


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with wikisuggest.Server(
        datasets=ROOT / "tests" / "data" / "parity" / "datasets",
        pages=ROOT / "tests" / "data" / "parity" / "articles" / "enwiki",
        translation=default_catalog_path(),
        clients=ROOT / "examples" / "clients.toml",
    ) as server:
        helper = tmp_path_factory.mktemp("browser") / "browser.py"
        helper.write_text(
            "import sys, urllib.request\nurllib.request.urlopen(sys.argv[1], timeout=30).read()\n"
        )
        yield {
            **os.environ,
            "WIKISUGGEST_BASE_URL": server.url,
            "WIKISUGGEST_AUTH_URL": server.url,
            "WIKISUGGEST_CLIENT_ID": "example-confidential-app",
            "WIKISUGGEST_CLIENT_SECRET": "example-confidential-secret",
            "BROWSER": f"{sys.executable} {helper} %s",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }


@pytest.fixture
def repo_root(tmp_path: Path) -> Path:
    """A scratch folder that looks like the repository root."""
    for entry in ROOT.iterdir():
        if entry.name not in {".git", "target", ".venv"}:
            (tmp_path / entry.name).symlink_to(entry)
    return tmp_path


def test_every_runnable_fence_is_parsed() -> None:
    for path in SOURCES:
        text = path.read_text("utf-8")
        parsed = [b for b in BLOCKS if b.source == path.relative_to(ROOT).as_posix()]
        assert len(parsed) == len(OPENING.findall(text)), path
    assert sum(b.source == "README.md" for b in RUN) >= 2


def test_fences_inside_tabs_and_with_titles_are_read() -> None:
    page = (
        "Intro\n\n"
        '=== "Blocking"\n\n'
        "    <!-- readme-test: skip: needs the internet -->\n"
        "    ```python\n    import a\n    if a:\n        print(1)\n    ```\n\n"
        '```bash title="setup.sh"\necho hi\n```\n'
        "```toml\nnot = 'run'\n```\n"
        "```python\nx = '```'\n```\n"
    )
    blocks = parse_text(page, "page.md")
    assert [(b.line, b.lang, b.code, b.marker) for b in blocks] == [
        (6, "python", "import a\nif a:\n    print(1)\n", "skip: needs the internet"),
        (12, "bash", "echo hi\n", None),
        (18, "python", "x = '```'\n", None),
    ]
    assert len(OPENING.findall(page)) == len(blocks)


def test_markers_are_few_and_known() -> None:
    for path in SOURCES:
        source = path.relative_to(ROOT).as_posix()
        skipped = [b for b in BLOCKS if b.source == source and (b.marker or "").startswith("skip")]
        assert len(skipped) <= ALLOWED_SKIPS.get(source, PAGE_SKIPS), [b.name for b in skipped]
    for block in BLOCKS:
        marker = block.marker or ""
        assert marker == "" or re.fullmatch(r"skip: .+|until .+", marker), block.name


@pytest.mark.timeout(BLOCK_TIMEOUT + 60)
@pytest.mark.parametrize("block", RUN, ids=lambda b: b.name)
def test_example_block(
    block: Block, environment: dict[str, str], repo_root: Path, tmp_path: Path
) -> None:
    if block.lang == "python":
        command = [sys.executable, "-c", block.code]
    else:
        command = ["bash", "-euo", "pipefail", "-c", block.code]
    needs = block_needs(block)
    log = tmp_path / "imports.log"
    env = {k: v for k, v in environment.items() if k not in GIVEN_WHEN_NAMED - needs.environment}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(IMPORT_GUARD), env.get("PYTHONPATH")]))
    env["DOCS_BLOCK_ALLOWS"] = ",".join(sorted(needs.modules))
    env["DOCS_BLOCK_IMPORT_LOG"] = str(log)
    if block.marker and block.marker.startswith("until "):
        _run_until(command, block.marker.removeprefix("until "), env, repo_root)
    else:
        done = subprocess.run(
            command,
            cwd=repo_root,
            env=env,
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT,
            check=False,
        )
        assert done.returncode == 0, f"{block.name}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    imported = set(log.read_text("utf-8").split()) if log.exists() else set()
    unused = [extra for extra, modules in needs.extras.items() if not modules & imported]
    assert unused == [], f"{block.name}: names extras it does not use"


def _run_until(command: list[str], text: str, env: dict[str, str], cwd: Path) -> None:
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen = ""
    deadline = time.monotonic() + BLOCK_TIMEOUT
    try:
        assert process.stdout is not None
        while text not in seen and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            seen += line
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
    assert text in seen, seen[-3000:]


@pytest.mark.timeout(660)
def test_python_blocks_pass_mypy_strict(tmp_path: Path) -> None:
    names: dict[str, str] = {}
    for index, block in enumerate(b for b in BLOCKS if b.lang == "python"):
        file = tmp_path / f"example_{index:03d}.py"
        file.write_text(block.code)
        names[str(file)] = block.name
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    # mypy's report names each block by its page and first line (its lines count from there).
    report = done.stdout
    for path, name in names.items():
        report = report.replace(path, name)
    assert done.returncode == 0, report


# The API reference (docs/reference/): what its pages render, and what the guides call. New
# pages join by existing: every ``::: identifier`` of docs/reference/*.md is read.

#: A ``::: identifier`` line of a reference page and its indented options.
DIRECTIVE = re.compile(r"^::: (?P<ident>[\w.]+)[ \t]*\n(?P<options>(?:[ \t]+\S.*\n?)*)", re.M)
#: The ``members:`` option: ``false``, ``true`` or a list of names on the lines below it.
MEMBERS = re.compile(
    r"^(?P<indent>[ \t]+)members:[ \t]*(?P<flag>\S*)[ \t]*\n"
    r"(?P<list>(?:(?P=indent)[ \t]+- .*\n?)*)",
    re.M,
)
#: Inline code in prose naming something, as ``wikisuggest.datasets.fetch`` or
#: ``LinkEngine.published(...)``.
INLINE_NAME = re.compile(r"`(?P<path>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?P<call>\([^`]*\))?`")


def reference_directives() -> list[tuple[str, bool | list[str] | None]]:
    """Each object a reference page renders, with its ``members`` option (``None``: what the
    module exports; ``False``: none; ``True``: all; a list: those names)."""
    found: list[tuple[str, bool | list[str] | None]] = []
    for page in sorted((ROOT / "docs" / "reference").glob("*.md")):
        for m in DIRECTIVE.finditer(page.read_text("utf-8")):
            members: bool | list[str] | None = None
            option = MEMBERS.search(m["options"])
            if option and option["flag"]:
                members = {"false": False, "true": True}[option["flag"]]
            elif option:
                members = [line.split("- ", 1)[1].strip() for line in option["list"].splitlines()]
            found.append((m["ident"], members))
    return found


def resolve(path: str) -> object:
    """What a dotted path names, read as Python reads it: attributes first, a submodule
    imported where there is no such attribute. Raises ``LookupError`` if it names nothing."""
    parts = path.split(".")
    if any(".".join(parts[:n]) in MOVED for n in range(1, len(parts) + 1)):
        raise LookupError(f"{path}: a deprecated module path (wikisuggest._aliases.MOVED)")
    try:
        obj: object = importlib.import_module(parts[0])
    except ImportError as err:
        raise LookupError(path) from err
    for index, part in enumerate(parts[1:], start=2):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            if not isinstance(obj, types.ModuleType):
                raise LookupError(path) from None
            try:
                obj = importlib.import_module(".".join(parts[:index]))
            except ImportError as err:
                raise LookupError(path) from err
    return obj


def canonical(obj: object) -> str | None:
    """Where a function, class or module is defined (``module.Qual.name``)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    target = getattr(obj, "__func__", obj)
    module, name = getattr(target, "__module__", None), getattr(target, "__qualname__", None)
    return f"{module}.{name}" if isinstance(module, str) and isinstance(name, str) else None


def rendered(obj: object, members: bool | list[str] | None = None) -> set[str]:
    """The canonical names of ``obj`` and of what the reference renders under it, as the site's
    settings choose them: a module's exports (``__all__``) or the listed members; a class's own
    public members (not inherited ones)."""
    name = canonical(obj)
    found = {name} if name else set()
    if isinstance(obj, types.ModuleType):
        if members is False:
            return found
        exported = getattr(obj, "__all__", None) or [n for n in vars(obj) if not n.startswith("_")]
        selected = exported if members in (None, True) else members
        assert isinstance(selected, list | tuple)
        for member in selected:
            found |= rendered(getattr(obj, member))
    elif isinstance(obj, type):
        for member, value in vars(obj).items():
            if member.startswith("_"):
                continue
            if isinstance(value, type):
                found |= rendered(value)
            else:
                found.add(f"{obj.__module__}.{obj.__qualname__}.{member}")
    return found


def documented() -> set[str]:
    """Everything the API reference renders, by canonical name."""
    found: set[str] = set()
    for ident, members in reference_directives():
        found |= rendered(resolve(ident), members)
    return found


def _returned_class(path: str) -> str | None:
    """The class a call of ``path`` makes or returns (by its return annotation), if any."""
    try:
        obj = resolve(path)
    except LookupError:
        return None
    if isinstance(obj, type):
        return path
    annotation = getattr(getattr(obj, "__func__", obj), "__annotations__", {}).get("return")
    module = sys.modules.get(getattr(obj, "__module__", ""))
    if isinstance(annotation, str) and module is not None:
        returned = vars(module).get(annotation.split("[")[0])
        if isinstance(returned, type) and returned.__module__.startswith("wikisuggest."):
            exported = getattr(wikisuggest, returned.__name__, None) is returned
            return f"wikisuggest.{returned.__name__}" if exported else canonical(returned)
    return None


def _from_package(node: ast.ImportFrom) -> bool:
    return node.level == 0 and (node.module or "").split(".")[0] == "wikisuggest"


def python_names(code: str) -> set[str]:
    """The package's objects a Python block names: what it imports, the attributes it reads
    from them, and the methods it calls on what their constructors and factories return."""
    tree = ast.parse(code)
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "wikisuggest":
                    bound[alias.asname or "wikisuggest"] = (
                        alias.name if alias.asname else "wikisuggest"
                    )
        elif isinstance(node, ast.ImportFrom) and _from_package(node):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def dotted(expr: ast.expr) -> str | None:
        chain: list[str] = []
        while isinstance(expr, ast.Attribute):
            chain.append(expr.attr)
            expr = expr.value
        if isinstance(expr, ast.Name) and expr.id in bound:
            return ".".join([bound[expr.id], *reversed(chain)])
        return None

    # Instances: `x = wikisuggest.Client(...)`, `x = LinkEngine.default()`, `with ... as x`.
    for _ in range(3):
        for node in ast.walk(tree):
            pairs: list[tuple[ast.expr, ast.expr | None]] = []
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                pairs.append((node.value, node.targets[0]))
            elif isinstance(node, ast.With | ast.AsyncWith):
                pairs += [(item.context_expr, item.optional_vars) for item in node.items]
            for value, target in pairs:
                if isinstance(value, ast.Await):
                    value = value.value
                if isinstance(value, ast.Call) and isinstance(target, ast.Name):
                    made = (path := dotted(value.func)) and _returned_class(path)
                    if made:
                        bound[target.id] = made
    names = {path for path in bound.values() if path != "wikisuggest"}
    attributes = (node for node in ast.walk(tree) if isinstance(node, ast.Attribute))
    names |= {path for node in attributes if (path := dotted(node))}
    return names


def guide_callables() -> dict[str, set[str]]:
    """The public functions and classes (and their methods) each guide calls or names: in its
    Python blocks, and in its prose as inline code (``wikisuggest.datasets.fetch``,
    ``LinkEngine.published(...)``). Canonical name -> where."""
    exported = set(wikisuggest.__all__)
    found: dict[str, set[str]] = {}
    for path in SOURCES:
        source = path.relative_to(ROOT).as_posix()
        if source.startswith("docs/reference/"):
            continue
        text = path.read_text("utf-8")
        named = {
            name
            for block in parse_text(text, source)
            if block.lang == "python"
            for name in python_names(block.code)
        }
        prose = FENCE.sub("", text)
        for m in INLINE_NAME.finditer(prose):
            first = m["path"].split(".")[0]
            if first == "wikisuggest":
                named.add(m["path"])
            elif first in exported and ("." in m["path"] or m["call"]):
                named.add(f"wikisuggest.{m['path']}")
        for name in named:
            if name.startswith("wikisuggest._") or name.rsplit(".", 1)[-1].startswith("_"):
                continue
            try:
                obj = resolve(name)
            except LookupError:
                continue  # a logger's name, an attribute of a record: nothing to document
            key = canonical(obj)
            if not key or not callable(obj) or isinstance(obj, types.ModuleType):
                continue
            # A name kept one release for old code, which the guide names to say so.
            if (obj.__doc__ or "").startswith("Deprecated"):
                continue
            found.setdefault(key, set()).add(source)
    return found


def test_the_reference_renders_what_its_pages_name() -> None:
    directives = reference_directives()
    assert {ident for ident, _ in directives} >= {"wikisuggest", "wikisuggest.engine"}
    names = documented()
    for expected in (
        LinkEngine.published,
        wikisuggest.datasets.fetch,
        wikisuggest.engine.demo_articles,
        wikisuggest.engine.recommend_dump,
        wikisuggest.engine.write_dump,
        spark.recommend_links,
        wikisuggest.auth.HttpxAuth,
    ):
        assert canonical(expected) in names


def test_the_reference_has_every_callable_the_guides_use() -> None:
    """A guide (README.md, docs/*.md) that names a public function, class or method sends the
    reader to the reference: it must be there."""
    used = guide_callables()
    assert canonical(wikisuggest.LinkEngine.default) in used, "the scan found nothing"
    assert canonical(wikisuggest.Client.link_recommendations) in used
    missing = {name: sorted(where) for name, where in used.items() if name not in documented()}
    assert missing == {}


def test_guides_use_no_deprecated_path() -> None:
    for path in SOURCES:
        text = path.read_text("utf-8")
        for old in MOVED:
            assert not re.search(rf"\b{re.escape(old)}\b(?!\w)", text), (path.name, old)


def test_guide_scan_reads_imports_instances_and_prose() -> None:
    code = (
        "import wikisuggest\n"
        "from wikisuggest.engine.dump import recommend_dump as run\n"
        "engine = wikisuggest.LinkEngine.default()\n"
        "engine.recommend('x', 'y')\n"
        "with wikisuggest.Client('UA') as client:\n"
        "    client.link_recommendations('wikipedia', 'en', 'Cat')\n"
    )
    names = python_names(code)
    assert {
        "wikisuggest.engine.dump.recommend_dump",
        "wikisuggest.LinkEngine.default",
        "wikisuggest.LinkEngine.recommend",
        "wikisuggest.Client.link_recommendations",
    } <= names
    with pytest.raises(LookupError, match="deprecated"):
        resolve("wikisuggest.spark.recommend_links")
    with pytest.raises(LookupError):
        resolve("wikisuggest.LinkEngine.no_such_method")


def _docstring_extension() -> types.ModuleType:
    """docs/extensions/docstrings.py, the site's reading of docstrings (its text functions)."""
    path = ROOT / "docs" / "extensions" / "docstrings.py"
    spec = importlib.util.spec_from_file_location("docs_docstrings", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_roles_become_links_or_code() -> None:
    site = _docstring_extension()
    known = {"wikisuggest.LinkRules": "wikisuggest.engine.rules.LinkRules", "open": "x.open"}
    text = (
        "See :class:`~wikisuggest.LinkRules`, :meth:`open`, :func:`webbrowser.open` and\n"
        ":meth:`Wiki.siteinfo\n<wikisuggest.Wiki.siteinfo>`; :data:`~a.b.DEFAULT`."
    )
    rendered = site.crossrefs(text, known.get)
    assert rendered == (
        "See [`LinkRules`][wikisuggest.engine.rules.LinkRules], [`open()`][x.open], "
        "`webbrowser.open()` and\n`Wiki.siteinfo()`; `DEFAULT`."
    )
    assert ":" not in site.crossrefs(":exc:`ValueError`", lambda _: None).strip("`")


def test_doctest_runs_become_code_blocks() -> None:
    site = _docstring_extension()
    text = (
        "Intro.\n"
        ">>> import wikisuggest\n"
        ">>> engine = wikisuggest.LinkEngine.default()  # doctest: +SKIP\n"
        "... more\n"
        "output line\n"
        "\n"
        "After.\n"
        "    >>> indented()\n"
    )
    assert site.doctest_blocks(text) == (
        "Intro.\n"
        "\n"
        "```pycon\n"
        ">>> import wikisuggest\n"
        ">>> engine = wikisuggest.LinkEngine.default()\n"
        "... more\n"
        "output line\n"
        "```\n"
        "\n"
        "After.\n"
        "\n"
        "    ```pycon\n"
        "    >>> indented()\n"
        "    ```\n"
    )
