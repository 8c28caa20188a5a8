"""The loopback dumps host serves the fixture tree as dumps.wikimedia.org lays it out, and its
faults fire as armed (the test helper itself; the fetcher's tests use it)."""

from __future__ import annotations

import hashlib
import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from support.dumps_mirror import RUN, DumpsMirror, Fault, serve_dumps


@pytest.fixture(scope="module")
def mirror() -> Iterator[DumpsMirror]:
    yield from serve_dumps()


def get(mirror: DumpsMirror, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(mirror.base_url() + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_tree_is_laid_out_like_the_dumps_host(mirror: DumpsMirror) -> None:
    _, _, runs = get(mirror, "enwiki/")
    for run in ("20260520/", "20260601/", "20260620/", "latest/"):
        assert f'<a href="{run}">{run}</a>' in runs.decode()
    newest = json.loads(get(mirror, "enwiki/20260620/dumpstatus.json")[2])["jobs"]
    assert {job: e["status"] for job, e in newest.items()} == {
        "langlinkstable": "waiting",
        "namespaces": "waiting",
        "pagepropstable": "in-progress",
        "pagetable": "done",
        "redirecttable": "waiting",
    }
    # A copied run lists the copies, their digests in dumpstatus.json and the sum files.
    copied = json.loads(get(mirror, "simplewiki/20260520/dumpstatus.json")[2])["jobs"]
    sums = get(mirror, "simplewiki/20260520/simplewiki-20260520-sha1sums.txt")[2].decode()
    for job, name in (
        ("redirecttable", "simplewiki-20260520-redirect.sql.gz"),
        ("namespaces", "simplewiki-20260520-siteinfo-namespaces.json.gz"),
    ):
        data = get(mirror, f"simplewiki/20260520/{name}")[2]
        assert data == mirror.files[f"simplewiki/{RUN}/{name.replace('20260520', RUN)}"]
        entry = copied[job]["files"][name]
        assert (entry["size"], entry["sha1"]) == (len(data), hashlib.sha1(data).hexdigest())
        assert f"{entry['sha1']}  {name}\n" in sums
    # latest/ holds each job's newest done file: the page table of the unfinished run.
    latest = get(mirror, "enwiki/latest/enwiki-latest-page.sql.gz-rss.xml")[2].decode()
    assert "/enwiki/20260620/enwiki-20260620-page.sql.gz" in latest
    for name in ("langlinks.sql.gz", "redirect.sql.gz", "siteinfo-namespaces.json.gz"):
        feed = get(mirror, f"enwiki/latest/enwiki-latest-{name}-rss.xml")[2].decode()
        assert f"/enwiki/20260601/enwiki-20260601-{name}" in feed
        assert (
            get(mirror, f"enwiki/latest/enwiki-latest-{name}")[2]
            == mirror.files[f"enwiki/20260601/enwiki-20260601-{name}"]
        )
    index = get(mirror, "other/cirrus_search_index/20260614/index_name%3Denwiki_content/")[
        2
    ].decode()
    assert "enwiki_content-20260614-00000.json.bz2" in index and "_SUCCESS" not in index
    status, headers, body = get(
        mirror, "other/cirrus_search_index/20260607/index_name=enwiki_content/_SUCCESS"
    )
    assert (status, body) == (200, b"")
    status, headers, body = get(
        mirror, DumpsMirror.run_path("enwiki", RUN, "page"), Range="bytes=10-"
    )
    whole = mirror.files[DumpsMirror.run_path("enwiki", RUN, "page")]
    assert (status, body) == (206, whole[10:])
    assert headers["Content-Range"] == f"bytes 10-{len(whole) - 1}/{len(whole)}"
    assert headers["Last-Modified"] == "Tue, 02 Jun 2026 07:31:47 GMT" and "ETag" in headers
    assert get(mirror, "enwiki/20260601/nothing.sql.gz")[0] == 404


def test_faults_fire_on_the_next_requests(mirror: DumpsMirror) -> None:
    path = DumpsMirror.run_path("simplewiki", RUN, "langlinks")
    whole = mirror.files[path]
    mirror.arm(path, Fault(cut_after=1000))
    assert mirror.server is not None
    connection = http.client.HTTPConnection("127.0.0.1", mirror.server.server_address[1])
    try:
        connection.request("GET", "/" + path)
        response = connection.getresponse()
        with pytest.raises(http.client.IncompleteRead) as cut:
            response.read()
    finally:
        connection.close()
    assert cut.value.partial == whole[:1000]
    rest = get(mirror, path, Range="bytes=1000-")[2]
    assert hashlib.sha1(cut.value.partial + rest).hexdigest() == hashlib.sha1(whole).hexdigest()

    mirror.arm(path, Fault(corrupt_at=5))
    assert get(mirror, path)[2] != whole
    mirror.arm(path, Fault(chunk=4096, delay=0.01))
    assert get(mirror, path)[2] == whole
    mirror.arm(path, Fault(status=503, retry_after="2"))
    status, headers, _ = get(mirror, path)
    assert (status, headers["Retry-After"]) == (503, "2")
    mirror.arm(path, Fault(location="/" + path))
    assert get(mirror, path)[2] == whole  # urllib follows the redirect to the file


def test_scenarios_change_the_published_tree() -> None:
    mirror = DumpsMirror.standard()
    mirror.set_job("enwiki", RUN, "langlinkstable", "failed")
    assert mirror.status("enwiki", RUN)["langlinkstable"]["status"] == "failed"
    mirror.publish_wrong_checksum("enwiki", RUN, "page")
    name = DumpsMirror.run_path("enwiki", RUN, "page")
    announced = mirror.status("enwiki", RUN)["pagetable"]["files"]
    assert announced[name.rsplit("/", 1)[1]]["sha1"] != hashlib.sha1(mirror.files[name]).hexdigest()  # type: ignore[index]
    mirror.remove("other/cirrus_search_index/20260607/index_name=enwiki_content/_SUCCESS")
    assert (
        mirror.resolve("other/cirrus_search_index/20260607/index_name=enwiki_content/_SUCCESS")
        is None
    )


def test_offline_mode_answers_nothing_and_records_the_attempt() -> None:
    mirror = DumpsMirror.standard().start()
    assert isinstance(mirror, DumpsMirror)
    try:
        mirror.offline = True
        with pytest.raises(
            (urllib.error.URLError, http.client.RemoteDisconnected, ConnectionError)
        ):
            get(mirror, "enwiki/20260601/dumpstatus.json")
        assert [r.path for r in mirror.requests] == ["enwiki/20260601/dumpstatus.json"]
    finally:
        mirror.stop()
