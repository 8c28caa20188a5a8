"""Every example in README.md runs, as written, against local resources.

Each fenced ``python``, ``bash`` and ``sh`` block is a test. It runs from a scratch folder that
mirrors the repository root (the repo's top-level entries are linked into it, so relative
paths such as ``tests/data/...`` resolve, and files an example writes land in the scratch
folder), with an environment pointing at a reference server this module starts:

* ``WIKISUGGEST_BASE_URL`` and ``WIKISUGGEST_AUTH_URL``: the server (link datasets and pages
  of the parity sample, the shipped translation catalogs, ``examples/clients.toml``);
* ``WIKISUGGEST_CLIENT_ID`` and ``WIKISUGGEST_CLIENT_SECRET``: its confidential example app;
* ``BROWSER``: a command that follows the authorization redirect, standing in for a person.

Python blocks also pass ``mypy --strict``. Markers, on the line before a fence:

* ``<!-- readme-test: skip: <reason> -->`` leaves a block out (only the set-up commands and
  installs may be: see ``ALLOWED_SKIPS``);
* ``<!-- readme-test: until <text> -->`` runs a block that serves until stopped: it passes
  once ``<text>`` appears in its output, and is then interrupted.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import wikisuggest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(
    r"(?:^<!-- readme-test: (?P<marker>[^>]*?) -->\n)?^```(?P<lang>python|bash|sh)\n"
    r"(?P<code>.*?)^```$",
    re.S | re.M,
)
#: Blocks that may be left out: the README's two set-up commands and installs.
ALLOWED_SKIPS = 3
BLOCK_TIMEOUT = 180


@dataclass(frozen=True)
class Block:
    line: int
    lang: str
    code: str
    marker: str | None

    @property
    def name(self) -> str:
        return f"README.md:{self.line}:{self.lang}"


def blocks() -> list[Block]:
    text = README.read_text("utf-8")
    return [
        Block(text.count("\n", 0, m.start("code")), m["lang"], m["code"], m["marker"])
        for m in FENCE.finditer(text)
    ]


BLOCKS = blocks()
RUN = [b for b in BLOCKS if not (b.marker or "").startswith("skip")]


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with wikisuggest.Server(
        datasets=ROOT / "tests" / "data" / "parity" / "datasets",
        pages=ROOT / "tests" / "data" / "parity" / "articles" / "enwiki",
        translation=ROOT / "data" / "translation",
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


def test_markers_are_few_and_known() -> None:
    skipped = [b for b in BLOCKS if (b.marker or "").startswith("skip")]
    assert len(skipped) <= ALLOWED_SKIPS, [b.name for b in skipped]
    for block in BLOCKS:
        marker = block.marker or ""
        assert marker == "" or re.fullmatch(r"skip: .+|until .+", marker), block.name
    assert len(RUN) >= 8


@pytest.mark.parametrize("block", RUN, ids=lambda b: b.name)
def test_readme_block(block: Block, environment: dict[str, str], repo_root: Path) -> None:
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


def test_python_blocks_pass_mypy_strict(tmp_path: Path) -> None:
    for index, block in enumerate(b for b in BLOCKS if b.lang == "python"):
        (tmp_path / f"readme_block_{index:02d}.py").write_text(block.code)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout
