"""A real MediaWiki (Debian's package, SQLite) for the tests, served on 127.0.0.1.

The wiki is installed once into a template under target/ (``scripts/mediawiki-test-wiki
template``: install.php, then the gensim enwiki excerpt through importDump.php), copied for
each test session and served by PHP's built-in server, which is started and stopped here by
its process group.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support.paths import REPO

SCRIPT = REPO / "scripts" / "mediawiki-test-wiki"
USER_AGENT = "wikisuggest-tests/1.0 (https://example.org/wikisuggest-tests; tests@example.org)"


@dataclass(frozen=True)
class LocalWiki:
    folder: Path
    url: str
    credentials: dict[str, dict[str, str]]

    @property
    def api_url(self) -> str:
        return f"{self.url}/api.php"

    def query(self, **params: str) -> Any:
        """A raw Action API GET, independent of the code under test."""
        query = urllib.parse.urlencode({**params, "format": "json", "formatversion": "2"})
        request = urllib.request.Request(
            f"{self.api_url}?{query}", headers={"User-Agent": USER_AGENT}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)

    def parse(self, text: str, title: str = "Sandbox") -> Any:
        """What MediaWiki's parser makes of ``text`` as the content of page ``title`` (with the
        pre-save transform a save applies): its HTML and the links, categories, language and
        interwiki links and page properties it sets."""
        body = urllib.parse.urlencode(
            {
                "action": "parse",
                "text": text,
                "title": title,
                "contentmodel": "wikitext",
                "pst": "1",
                "prop": "text|links|categories|langlinks|iwlinks|properties|images|templates",
                "disablelimitreport": "1",
                "format": "json",
                "formatversion": "2",
            }
        ).encode()
        request = urllib.request.Request(
            self.api_url, data=body, headers={"User-Agent": USER_AGENT}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)["parse"]

    def anonymous_edit(self, title: str, text: str, baserevid: int) -> int:
        """Another editor's edit (anonymous, token ``+\\``); the new revision id."""
        body = urllib.parse.urlencode(
            {
                "action": "edit",
                "title": title,
                "text": text,
                "baserevid": str(baserevid),
                "token": "+\\",
                "format": "json",
                "formatversion": "2",
            }
        ).encode()
        request = urllib.request.Request(
            self.api_url, data=body, headers={"User-Agent": USER_AGENT}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.load(response)
        assert answer["edit"]["result"] == "Success", answer
        return int(answer["edit"]["newrevid"])


def _installed() -> bool:
    return Path("/usr/share/mediawiki/maintenance/install.php").is_file() and bool(
        shutil.which("php")
    )


def _template() -> Path:
    """The installed wiki, built once per version of the set-up script."""
    key = hashlib.sha256(SCRIPT.read_bytes()).hexdigest()[:12]
    template = REPO / "target" / f"mediawiki-template-{key}"
    if (template / "credentials.json").is_file():
        return template
    building = template.with_name(template.name + f".tmp{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    subprocess.run([str(SCRIPT), "template", str(building)], check=True, timeout=600)
    try:
        building.rename(template)
    except OSError:  # another session finished first
        shutil.rmtree(building, ignore_errors=True)
    return template


def _serve(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    log = folder / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(SCRIPT), "serve", str(folder), "0"],
            stdout=out,
            stderr=subprocess.STDOUT,
            # Its own process group: PHP's workers would survive a signal to the parent alone.
            start_new_session=True,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        found = re.search(r"\(http://127\.0\.0\.1:(\d+)\) started", log.read_text("utf-8"))
        if found:
            return process, f"http://127.0.0.1:{found.group(1)}"
        time.sleep(0.05)
    _stop(process)
    raise RuntimeError(f"the PHP server did not start: {log.read_text('utf-8')[-2000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def mediawiki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalWiki]:
    if not _installed():
        message = "Debian's mediawiki is installed by scripts/test (scripts/mediawiki-test-wiki)"
        if os.environ.get("WIKISUGGEST_REQUIRE_SYSTEM_TOOLS"):
            pytest.fail(message)
        pytest.skip(message)
    folder = tmp_path_factory.mktemp("mediawiki") / "wiki"
    shutil.copytree(_template(), folder)
    process, url = _serve(folder)
    try:
        credentials = json.loads((folder / "credentials.json").read_text("utf-8"))
        yield LocalWiki(folder, url, credentials)
    finally:
        _stop(process)
