"""A native dataset file of more than 64 MiB (memory-mapped, as every real wiki's is)
truncated in place under a running engine or server: typed errors (``DatasetError``, HTTP
503), never a signal that kills the process, and the server answering again once the file
is whole.

The large file is the parity sample's tables plus enwiki-shaped filler articles (titles
that sort among the sample's, each with a vector), written as published ``.sql.gz`` files
and converted with ``LinkEngine.convert``: the real conversion path.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import pickle
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.reference_server import CLIENTS, DATASETS, PERSONAL_TOKEN

from wikisuggest import LinkEngine

LINKS = "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en"
ROW = re.compile(rb"^INSERT INTO `(\w+)` VALUES \((\d+),'((?:[^'\\]|\\.)*)','(.*)'\);$")
MYSQL_ESCAPES = {0: b"\\0", 10: b"\\n", 13: b"\\r", 26: b"\\Z", 34: b'\\"', 39: b"\\'", 92: b"\\\\"}


def _escape(raw: bytes) -> bytes:
    """mysqldump's escaping of a string value."""
    return b"".join(MYSQL_ESCAPES.get(b, bytes([b])) for b in raw)


def _grown(source: Path, table: str, rows: Iterator[tuple[bytes, bytes]]) -> bytes:
    """The dump ``source`` with ``rows`` (escaped key, escaped value) inserted after its own."""
    lines = gzip.decompress(source.read_bytes()).split(b"\n")
    last = max(i for i, line in enumerate(lines) if line.startswith(b"INSERT INTO"))
    next_id = int(ROW.match(lines[last]).group(2)) + 1  # type: ignore[union-attr]
    added = [
        b"INSERT INTO `%s` VALUES (%d,'%s','%s');" % (table.encode(), next_id + i, key, value)
        for i, (key, value) in enumerate(rows)
    ]
    return b"\n".join(lines[: last + 1] + added + lines[last + 1 :])


def _write_published(dump: bytes, path: Path) -> None:
    path.write_bytes(gzip.compress(dump, compresslevel=1))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_name(path.name + ".checksum").write_text(f"{digest}  {path.name}\n")


@pytest.fixture(scope="module")
def large_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An enwiki-shaped native file of about 80 MB."""
    folder = tmp_path_factory.mktemp("large-dataset")
    source = DATASETS / "enwiki"
    published = folder / "published"
    shutil.copytree(source, published)
    vectors = source / "lr_enwiki_w2vfiltered.sql.gz"
    sample_rows = [
        match
        for line in gzip.decompress(vectors.read_bytes()).split(b"\n")
        if (match := ROW.match(line))
    ]
    titles = [m.group(3) for m in sample_rows]
    blob = sample_rows[0].group(4)  # a pickled 50-d float32 vector, escaped
    count = 330_000
    filler = [titles[i % len(titles)] + b" zq%x" % i for i in range(count)]
    _write_published(
        _grown(vectors, "lr_enwiki_w2vfiltered", ((t, blob) for t in filler)),
        published / vectors.name,
    )
    pageids = source / "lr_enwiki_pageids.sql.gz"
    _write_published(
        _grown(
            pageids,
            "lr_enwiki_pageids",
            ((t, _escape(pickle.dumps(10**9 + i, protocol=4))) for i, t in enumerate(filler)),
        ),
        published / pageids.name,
    )
    path = LinkEngine.convert(published, "enwiki", folder / "native")
    assert path.stat().st_size > 64 << 20
    return path


CHILD = """
import json, sys, time
from wikisuggest import LinkEngine
from wikisuggest.engine import Page, demo_articles
from wikisuggest.errors import DatasetError

engine = LinkEngine.open(sys.argv[1], "enwiki")
pages = [Page(text, title) for title, text in demo_articles().items()] * 4
ok = typed = 0
other = []
print("READY", flush=True)
deadline = time.monotonic() + 90
while time.monotonic() < deadline and not typed:
    for item in engine.recommend_many(pages, workers=2):
        if item.error is None:
            ok += 1
        elif isinstance(item.error, DatasetError):
            typed += 1
        else:
            other.append(repr(item.error))
# Once the file changed, every page is refused: none is answered from what is left of it.
after = engine.recommend_many(pages[:5], workers=2)
refused = all(isinstance(item.error, DatasetError) for item in after)
print(json.dumps({"ok": ok, "typed": typed, "other": other, "refused": refused}))
"""


def test_truncating_the_file_under_recommend_many_gives_typed_errors(
    large_file: Path, tmp_path: Path
) -> None:
    original = large_file.read_bytes()
    live = tmp_path / "enwiki.linkdata"
    outcomes = []
    for trial in range(15):
        live.write_bytes(original)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(live)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "READY"
        time.sleep(random.uniform(0.05, 0.5))
        cut = random.randrange(len(original))
        os.truncate(live, cut)
        out, err = child.communicate(timeout=180)
        # Killed by a signal, the child's return code is minus its number (SIGBUS: -7).
        assert child.returncode == 0, f"trial {trial}, cut at {cut}: {child.returncode} {err}"
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["typed"] > 0 and summary["other"] == [], (trial, cut, summary)
        assert summary["refused"], (trial, cut, summary)
        outcomes.append(summary)
    assert len(outcomes) == 15


def _post(url: str) -> tuple[int, dict[str, object]]:
    body = json.dumps({"wikitext": "Anarchism is a political philosophy.", "revid": 1, "pageid": 1})
    request = urllib.request.Request(
        f"{url}{LINKS}/Page?threshold=0",
        data=body.encode(),
        headers={"Authorization": f"Bearer {PERSONAL_TOKEN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read() or b"{}")


def _keep_asking(url: str, stop: threading.Event, statuses: list[int]) -> None:
    while not stop.is_set():
        statuses.append(_post(url)[0])


def _until_answered(url: str, server: subprocess.Popen[str]) -> dict[str, object]:
    for _ in range(600):
        assert server.poll() is None, "the server process died"
        status, body = _post(url)
        if status == 200:
            return body
        assert status == 503, (status, body)
        time.sleep(0.1)
    raise AssertionError("the dataset was never opened again")


def test_truncating_the_file_under_wikisuggest_serve(large_file: Path, tmp_path: Path) -> None:
    original = large_file.read_bytes()
    datasets = tmp_path / "datasets"
    (datasets / "enwiki").mkdir(parents=True)
    live = datasets / "enwiki" / "enwiki.linkdata"
    for trial in range(5):
        live.write_bytes(original)
        command = [sys.executable, "-m", "wikisuggest", "serve", "--port", "0"]
        command += ["--datasets", str(datasets), "--clients", str(CLIENTS)]
        command += ["--rate-limit", "1000000"]
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
            try:
                assert server.stdout is not None
                url = server.stdout.readline().split()[2]
                first = _until_answered(url, server)
                statuses: list[int] = []
                stop = threading.Event()

                askers = [
                    threading.Thread(target=_keep_asking, args=(url, stop, statuses))
                    for _ in range(2)
                ]
                for thread in askers:
                    thread.start()
                time.sleep(random.uniform(0.05, 0.3))
                cut = random.randrange(len(original))
                os.truncate(live, cut)
                status, body = _post(url)
                stop.set()
                for thread in askers:
                    thread.join()
                assert server.poll() is None, f"trial {trial}: the server died at cut {cut}"
                assert status == 503 and "changed on disk" in str(body["message"]), (status, body)
                assert set(statuses) <= {200, 503}, (trial, cut, sorted(set(statuses)))
                # Written back in place, whole (as `cp` does): answered from it again.
                live.write_bytes(original)
                assert _until_answered(url, server)["links"] == first["links"]
            finally:
                server.send_signal(signal.SIGINT)
                server.wait(timeout=60)


def test_a_replaced_file_is_swapped_in_on_request(tmp_path: Path) -> None:
    import wikisuggest

    datasets = tmp_path / "datasets"
    (datasets / "enwiki").mkdir(parents=True)
    LinkEngine.convert(DATASETS / "enwiki", "enwiki", datasets / "enwiki")
    with wikisuggest.Server(datasets=datasets, clients=CLIENTS) as server:
        assert server.wikis == ("enwiki",)
        assert server.reload_datasets() == {"enwiki": "unchanged"}
        staging = tmp_path / "staging"
        LinkEngine.convert(DATASETS / "enwiki", "enwiki", staging)
        (staging / "enwiki.linkdata").replace(datasets / "enwiki" / "enwiki.linkdata")
        assert server.reload_datasets() == {"enwiki": "reopened"}
        assert _post(server.url)[0] == 200
        (datasets / "enwiki" / "enwiki.linkdata").write_bytes(b"not a dataset")
        outcome = server.reload_datasets()["enwiki"]
        assert outcome.startswith("failed: ") and "enwiki.linkdata" in outcome
        assert _post(server.url)[0] == 200
