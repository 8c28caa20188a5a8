"""``serve --rules`` with page rules (what a community configuration turns on) under pages
built to make the page-exclusion scan slow: the scan runs inside each request's time budget
and cancellation, so one app's huge posts never hold the engine past its budget, and another
app's requests are answered in time."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from support import reference_server as ref
from support.clients import USER_AGENT

import wikisuggest

NOWIKI = "<nowiki>a</nowiki>"
#: The server's default engine time per link request, in seconds.
BUDGET = 5.0
#: What the transfer, the JSON and the answer may add to it on a loaded machine.
SLACK = 7.0


def test_huge_pages_stay_inside_the_budget_and_starve_no_other_app(tmp_path: Path) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "Anarchism.wikitext").write_text(ref.ANARCHISM, "utf-8")
    (pages / "Nowiki.wikitext").write_text(NOWIKI * (2_000_000 // len(NOWIKI)), "utf-8")
    rules = tmp_path / "rules.toml"
    rules.write_text(
        'exclude_templates = ["Under construction"]\nexclude_categories = ["Living people"]\n',
        "utf-8",
    )
    # Just under the server's 4 MiB body limit, with the JSON around it.
    big = NOWIKI * ((4 * 2**20 - 4096) // len(NOWIKI))
    command = [
        sys.executable, "-m", "wikisuggest", "serve", "--port", "0",
        "--pages", str(pages), "--datasets", str(ref.DATASETS), "--clients", str(ref.CLIENTS),
        "--rules", f"enwiki={rules}",
    ]  # fmt: skip
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline().strip()
            assert line.startswith("Serving on http://127.0.0.1:"), line
            url = line.split()[2]
            hog = wikisuggest.Client(
                USER_AGENT, base_url=url, auth=ref.PERSONAL_TOKEN, max_retries=0, timeout=120
            )
            token = ref.client_credentials_token(url)["access_token"]
            # Another app waits at most for the running requests' budget, then its own.
            other = wikisuggest.Client(
                USER_AGENT, base_url=url, auth=token, max_retries=0, timeout=2 * BUDGET + SLACK
            )

            def post_big() -> float:
                started = time.monotonic()
                result = hog.link_recommendations_for_revision(
                    "wikipedia", "en", "Nowiki", wikitext=big, revid=1, pageid=1
                )
                assert result.links == ()
                return time.monotonic() - started

            with ThreadPoolExecutor(2) as pool:
                posts = [pool.submit(post_big) for _ in range(2)]
                time.sleep(0.5)
                for _ in range(3):
                    started = time.monotonic()
                    short = other.link_recommendations_for_revision(
                        "wikipedia", "en", "Anarchism", wikitext=ref.ANARCHISM, revid=5, pageid=6,
                        threshold=0.1,
                    )  # fmt: skip
                    assert short.links, "the short page is answered in full"
                    assert time.monotonic() - started < 2 * BUDGET + SLACK
                for post in posts:
                    assert post.result(timeout=120) < 2 * BUDGET + SLACK
            # A GET of a 2 MB local page: the scan and the pass within the one budget.
            started = time.monotonic()
            got = other.link_recommendations("wikipedia", "en", "Nowiki")
            assert got.links == ()
            assert time.monotonic() - started < BUDGET + SLACK
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()
