"""Every example in README.md and in the documentation (docs/**/*.md) runs, as written, against
local resources.

Each fenced ``python``, ``bash`` and ``sh`` block is a test (fences may be indented, as inside
an admonition or a content tab, and may carry attributes after the language, such as
``title="bot.py"``). A block runs from a scratch folder that mirrors the repository root (the
repo's top-level entries are linked into it, so relative paths such as ``tests/data/...``
resolve, and files an example writes land in the scratch folder), with an environment pointing
at a reference server this module starts:

* ``WIKISUGGEST_BASE_URL`` and ``WIKISUGGEST_AUTH_URL``: the server (link datasets and pages
  of the parity sample, the shipped translation catalogs, ``examples/clients.toml``);
* ``WIKISUGGEST_CLIENT_ID`` and ``WIKISUGGEST_CLIENT_SECRET``: its confidential example app;
* ``BROWSER``: a command that follows the authorization redirect, standing in for a person.

Python blocks also pass ``mypy --strict``. Markers, on the line before a fence:

* ``<!-- readme-test: skip: <reason> -->`` leaves a block out (in README.md only the set-up
  commands and installs may be; each page has a small allowance: see ``ALLOWED_SKIPS``);
* ``<!-- readme-test: until <text> -->`` runs a block that serves until stopped: it passes
  once ``<text>`` appears in its output, and is then interrupted.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import wikisuggest
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
def test_example_block(block: Block, environment: dict[str, str], repo_root: Path) -> None:
    if block.lang == "python":
        command = [sys.executable, "-c", block.code]
    else:
        command = ["bash", "-euo", "pipefail", "-c", block.code]
    if block.marker and block.marker.startswith("until "):
        _run_until(command, block.marker.removeprefix("until "), environment, repo_root)
        return
    done = subprocess.run(
        command,
        cwd=repo_root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, f"{block.name}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


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
