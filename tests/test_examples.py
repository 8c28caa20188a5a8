"""Every script in examples/ runs as a user would run it (``python examples/X.py``), against
local resources only: a loopback mirror of the published datasets (the parity sample), the
shipped sample articles, Spark in local mode and the real MediaWiki the tests start. Each test
checks what the script printed or wrote against the library's own answer for the same input."""

from __future__ import annotations

import csv
import functools
import http.server
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.local_mediawiki import USER_AGENT, LocalWiki, mediawiki

import wikisuggest
from wikisuggest.datasets import fetch
from wikisuggest.engine import Page, demo_articles

__all__ = ["mediawiki"]

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
PARITY_ENWIKI = REPO / "tests" / "data" / "parity" / "datasets" / "enwiki"


def _run(script: str, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> str:
    """The script's standard output; a failure shows its standard error."""
    environment = {k: v for k, v in os.environ.items() if k != "WIKISUGGEST_OFFLINE"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        cwd=REPO,
        env={**environment, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _links_printed(out: str) -> dict[str, list[str]]:
    """Title -> the link lines printed under ``Title: N links``."""
    pages: dict[str, list[str]] = {}
    current: list[str] = []
    for line in out.splitlines():
        header = re.fullmatch(r"(.+): (\d+) links", line)
        if header:
            current = pages.setdefault(header.group(1), [])
        elif line.startswith("  "):
            current.append(line.strip())
    return pages


class _Quiet(http.server.SimpleHTTPRequestHandler):
    requested: list[str]

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.requested.append(self.path)
        super().do_GET()


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """A loopback server laid out like the published bases, serving the parity sample as
    enwiki: its URL and the paths requested from it."""
    root = tmp_path / "mirror"
    shutil.copytree(PARITY_ENWIKI, root / "enwiki")
    (root / "wikis.txt").write_text("enwiki\n")
    requested: list[str] = []
    handler = type("Handler", (_Quiet,), {"requested": requested})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", requested
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_fetch_then_recommend(mirror: tuple[str, list[str]], tmp_path: Path) -> None:
    url, requested = mirror
    cache = tmp_path / "cache"
    # The mirror stands in for both published bases (the current one and the legacy one).
    env = {"ANALYTICS_BASE_URL": url, "ANALYTICS_BASE_URL_LEGACY": url}
    env["WIKISUGGEST_CACHE_DIR"] = str(cache)
    out = _run("fetch_then_recommend.py", env=env)
    assert "Fetching the published datasets of enwiki" in out
    assert any(path.startswith("/enwiki/") for path in requested), requested
    # A second run finds the cache and says so, without a request.
    before = len(requested)
    again = _run("fetch_then_recommend.py", env=env)
    assert "Using the cached datasets of enwiki" in again and "Fetching" not in again
    assert len(requested) == before
    # What the script fetched is in the cache: the same datasets open without the network.
    engine = wikisuggest.LinkEngine.open(fetch("enwiki", cache_dir=cache, offline=True), "enwiki")
    printed = _links_printed(out)
    expected = {}
    for title, wikitext in demo_articles().items():
        links = engine.recommend(wikitext, title).links
        assert f"{title}: {len(links)} links" in out
        expected[title] = [
            f"{link.score:.3f}  {link.link_text!r} -> [[{link.link_target}]]" for link in links
        ]
    assert printed == expected
    assert sum(map(len, expected.values())) > 0


def test_notebook_analysis(tmp_path: Path) -> None:
    out = _run("notebook_analysis.py", str(tmp_path))
    engine = wikisuggest.LinkEngine.default()
    articles = demo_articles()
    counts = {title: len(engine.recommend(text, title).links) for title, text in articles.items()}
    assert f"{sum(counts.values())} links over {len(articles)} articles" in out

    with (tmp_path / "links.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == sum(counts.values())
    assert {title: sum(r["article"] == title for r in rows) for title in articles} == counts

    # The chart: one bar per article, its length proportional to the article's links.
    svg = ET.parse(tmp_path / "links_per_article.svg").getroot()
    bars = svg.findall("{http://www.w3.org/2000/svg}rect")
    assert len(bars) == len(articles)
    labels = [bar.findtext("{http://www.w3.org/2000/svg}title") for bar in bars]
    assert labels == [f"{title}: {counts[title]}" for title in articles]
    widths = {
        title: float(bar.get("width", "0")) for title, bar in zip(articles, bars, strict=True)
    }
    most = max(counts, key=lambda t: counts[t])
    for title in articles:
        assert widths[title] == pytest.approx(widths[most] * counts[title] / counts[most], abs=1)


def _spark_ready() -> bool:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return bool(shutil.which("java") or os.environ.get("JAVA_HOME"))


@pytest.mark.timeout(300)
def test_spark_job(tmp_path: Path) -> None:
    if not _spark_ready():
        message = "the Spark example needs pyspark (requirements-spark.txt) and a Java runtime"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    pq = pytest.importorskip("pyarrow.parquet")
    out = _run("spark_job.py", str(tmp_path), timeout=280)

    pages = [
        Page(text, title, pageid=page_id, revid=1000 + page_id)
        for page_id, (title, text) in enumerate(sorted(demo_articles().items()), start=1)
    ]
    expected = []
    for page, item in zip(
        pages, wikisuggest.LinkEngine.default().recommend_many(pages), strict=True
    ):
        assert item.ok and item.result is not None
        for link in item.result.links:
            expected.append((
                page.pageid, page.revid, page.page_title, link.link_index, link.link_text,
                link.link_target, link.score, link.wikitext_offset, link.match_index, None,
            ))  # fmt: skip
    assert len(expected) > 0
    table = pq.read_table(tmp_path / "links.parquet").to_pylist()
    columns = (
        "page_id", "revision_id", "page_title", "link_index", "link_text", "link_target",
        "score", "wikitext_offset", "match_index", "error",
    )  # fmt: skip
    got = sorted(tuple(row[c] for c in columns) for row in table)
    assert all(row["wiki_db"] == "enwiki" for row in table)
    assert got == sorted(expected)
    assert f"{len(expected)} rows (0 errors) written to" in out


def _current(mediawiki: LocalWiki, title: str) -> tuple[int, str]:
    page = mediawiki.query(
        action="query", prop="revisions", rvprop="ids|content", rvslots="main", titles=title
    )["query"]["pages"][0]
    revision = page["revisions"][0]
    return revision["revid"], revision["slots"]["main"]["content"]


def test_review_bot_says_in_one_line_that_the_wiki_is_unreachable() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        api = f"http://127.0.0.1:{probe.getsockname()[1]}/w/api.php"
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "review_bot.py"), api, "Aardvark"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    # The retries are logged as they happen; then the one line that says why the bot stopped.
    *retries, last = done.stderr.splitlines()
    assert all(re.search(r"retry \d of \d", line) for line in retries), retries
    assert last.startswith(f"review_bot.py: {api}: TransportError: "), done.stderr
    assert "Connection refused" in last


def test_review_bot_saves_only_reviewed_links(mediawiki: LocalWiki) -> None:
    titles = ("Achilles", "Acid")
    min_score = 0.7
    engine = wikisuggest.LinkEngine.default()
    wiki = wikisuggest.Wiki(mediawiki.api_url, USER_AGENT)
    site = wiki.siteinfo()

    # The review the script must make, worked out here from the same revisions.
    before = {title: _current(mediawiki, title) for title in titles}
    reviewed: dict[str, wikisuggest.AppliedLinks] = {}
    never: set[str] = set()
    dropped: dict[str, str] = {}
    for title, (revid, text) in before.items():
        result = engine.recommend(text, title, revid=revid)
        proposal = wikisuggest.apply_links(text, result, site=site)
        passing = [i.link for i in proposal.applied if (i.link.score or 0) >= min_score]
        assert len(passing) >= 2, f"too few good links on {title} to test the review"
        never.add(passing[0].link_target)  # the never-link list drops one that passes the score
        dropped[title] = next(i.markup for i in proposal.applied if i.link is passing[0])
        keep = {
            i.link.link_index
            for i in proposal.applied
            if (i.link.score or 0) >= min_score and i.link.link_target not in never
            if i.link.link_index is not None
        }
        assert keep and len(keep) < len(proposal.applied)
        reviewed[title] = wikisuggest.apply_links(text, result, accept=keep, site=site)
    rule = {"MIN_SCORE": str(min_score), "NEVER_LINK": ",".join(sorted(never))}

    # A dry run prints the diffs of the reviewed links and saves nothing.
    dry = _run("review_bot.py", mediawiki.api_url, *titles, env={**rule, "BOT_USER": ""})
    assert "dry run" in dry
    for title in titles:
        assert wiki.save(reviewed[title], dry_run=True).diff in dry
        assert _current(mediawiki, title) == before[title]

    bot = mediawiki.credentials["bot"]
    login = {"BOT_USER": bot["user"], "BOT_PASSWORD": bot["password"]}
    out = _run("review_bot.py", mediawiki.api_url, *titles, env={**rule, **login})
    for title in titles:
        revid, text = _current(mediawiki, title)
        assert revid > before[title][0]
        assert f"saved revision {revid} on top of {before[title][0]}" in out
        # MediaWiki trims trailing whitespace when it saves.
        assert text == reviewed[title].wikitext.rstrip()
        assert dropped[title] not in text
