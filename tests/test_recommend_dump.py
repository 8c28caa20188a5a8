"""`recommend-dump`: every article of a real dump excerpt to Parquet, identical to
`LinkEngine.recommend` page by page, and a run that is interrupted resumes to the same rows.

The dump is the enwiki excerpt shipped in gensim 4.4.0's wheel (106 articles, 99 redirects),
rewritten by the test as plain XML and as a multistream bz2 (one stream per 20 pages, as
Wikimedia writes them).
"""

from __future__ import annotations

import bz2
import glob
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Any

import pytest

pq = pytest.importorskip("pyarrow.parquet")

import wikisuggest  # noqa: E402
from wikisuggest.engine.dump import MANIFEST, recommend_dump  # noqa: E402

SAMPLE = (
    "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)
SAMPLE_SHA256 = "a53f4648dec40467ebdcbc7a1307eddb51fe6e28e9309f6ebde81ba0d04bea2d"
DATASET = wikisuggest.engine.default_dataset_path()


def _gensim_wheel() -> str | None:
    fixtures = os.environ.get("WIKISUGGEST_FIXTURES", "target/reference-fixtures")
    pattern = os.environ.get("WIKISUGGEST_GENSIM_WHEEL", f"{fixtures}/downloads/gensim-4.4.0-*.whl")
    found = sorted(glob.glob(pattern))
    return found[0] if found else None


needs_gensim = pytest.mark.skipif(_gensim_wheel() is None, reason="no gensim 4.4.0 wheel")


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    wheel = _gensim_wheel()
    assert wheel is not None
    data = zipfile.ZipFile(wheel).read(SAMPLE)
    assert hashlib.sha256(data).hexdigest() == SAMPLE_SHA256
    xml = bz2.decompress(data)
    root = tmp_path_factory.mktemp("dumps")
    plain = root / "enwiki-sample.xml"
    plain.write_bytes(xml)
    # Multistream: the header, then groups of 20 pages, each its own bzip2 stream.
    head, _, rest = xml.partition(b"<page>")
    pages = (b"<page>" + rest).split(b"</page>")
    streams = [bz2.compress(head)]
    for start in range(0, len(pages), 20):
        streams.append(bz2.compress(b"</page>".join(pages[start : start + 20])))
        if start + 20 < len(pages):
            streams[-1] += bz2.compress(b"</page>")
    multistream = root / "enwiki-sample-multistream.xml.bz2"
    multistream.write_bytes(b"".join(streams))
    assert bz2.decompress(multistream.read_bytes()) == xml
    return {"xml": plain, "multistream": multistream}


def _articles(xml_path: Path) -> list[tuple[int, int, str, str]]:
    """Main-namespace pages that are not redirects, read independently of the package."""
    out = []
    for _, element in ET.iterparse(xml_path):
        if element.tag.rsplit("}", 1)[-1] != "page":
            continue
        fields = {child.tag.rsplit("}", 1)[-1]: child for child in element}
        if fields["ns"].text == "0" and "redirect" not in fields:
            revision = {c.tag.rsplit("}", 1)[-1]: c for c in fields["revision"]}
            text = revision["text"].text or ""
            out.append((int(fields["id"].text or ""), int(revision["id"].text or ""),
                        fields["title"].text or "", text))  # fmt: skip
        element.clear()
    return out


def _expected_rows(xml_path: Path) -> list[dict[str, Any]]:
    engine = wikisuggest.LinkEngine.default()
    rows = []
    for page_id, revision_id, title, text in _articles(xml_path):
        result = engine.recommend(text, title, pageid=page_id, revid=revision_id)
        for link in result.links:
            rows.append(
                {
                    "wiki_db": "enwiki",
                    "page_id": page_id,
                    "revision_id": revision_id,
                    "page_title": title,
                    "link_index": link.link_index,
                    "link_text": link.link_text,
                    "link_target": link.link_target,
                    "score": link.score,
                    "wikitext_offset": link.wikitext_offset,
                    "match_index": link.match_index,
                    "context_before": link.context_before,
                    "context_after": link.context_after,
                    "error": None,
                }
            )
    return rows


def _written_rows(out: Path) -> list[dict[str, Any]]:
    """The rows of every recorded part, in part order (dump order)."""
    manifest = json.loads((out / MANIFEST).read_text())
    rows: list[dict[str, Any]] = []
    for name in manifest["parts"]:
        rows.extend(pq.read_table(out / name).to_pylist())
    assert pq.read_table(out).num_rows == len(rows)
    return rows


@needs_gensim
def test_rows_are_those_of_recommend_on_each_article(
    dumps: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "links.parquet"
    summary = recommend_dump(
        dumps["multistream"], DATASET, "enwiki", out, pages_per_part=30, batch_pages=16
    )
    expected = _expected_rows(dumps["xml"])
    assert len({r["page_id"] for r in expected}) > 90
    assert _written_rows(out) == expected
    assert summary.complete and summary.pages == summary.pages_this_run == 106
    assert summary.links == len(expected) and summary.errors == 0
    assert summary.parts == 4  # 106 articles, a part per 30 or more
    assert summary.articles_per_second > 0
    # A finished run is not redone.
    again = recommend_dump(dumps["multistream"], DATASET, "enwiki", out, pages_per_part=30)
    assert again.pages_this_run == 0 and again.links == summary.links


def _command(dump: Path, out: Path) -> list[str]:
    return [
        *(sys.executable, "-m", "wikisuggest", "recommend-dump", str(dump)),
        *("--datasets", str(DATASET), "--wiki", "enwiki", "--out", str(out)),
        *("--pages-per-part", "2", "--batch-pages", "2", "--workers", "1", "--no-progress"),
    ]


def _interrupt_part_way(command: list[str], out: Path, sig: int) -> dict[str, Any]:
    """Starts the command, sends ``sig`` once it has recorded some parts, and returns the
    manifest it left behind."""
    before = len(json.loads((out / MANIFEST).read_text())["parts"]) if out.exists() else 0
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                state = json.loads((out / MANIFEST).read_text())
            except (OSError, ValueError):
                state = {"parts": []}
            if len(state["parts"]) >= before + 3:
                break
            time.sleep(0.005)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if sig == signal.SIGINT:
        assert proc.returncode == 130, stderr.decode()
        assert b"run the same command again to resume" in stderr
    else:
        assert proc.returncode == -sig
    state = json.loads((out / MANIFEST).read_text())
    assert not state["complete"], "the run finished before it could be interrupted"
    assert len(state["parts"]) >= before + 3
    # What it recorded is there, whole.
    recorded = sum(pq.read_metadata(out / name).num_rows for name in state["parts"])
    assert recorded == state["links"] + state["errors"]
    # A kill between writing a part and recording it can leave that one part unrecorded (never
    # a recorded part missing): the next run removes it and redoes its pages.
    unrecorded = [p for p in out.glob("part-*.parquet") if p.name not in state["parts"]]
    assert len(unrecorded) <= (0 if sig == signal.SIGINT else 1), unrecorded
    # What it wrote stays readable as one dataset.
    assert pq.read_table(out).num_rows >= recorded
    return dict(state)


@needs_gensim
def test_interrupted_runs_resume_to_the_same_rows(dumps: dict[str, Path], tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    recommend_dump(dumps["xml"], DATASET, "enwiki", whole, pages_per_part=50)
    out = tmp_path / "interrupted"
    command = _command(dumps["xml"], out)
    first = _interrupt_part_way(command, out, signal.SIGINT)
    second = _interrupt_part_way(command, out, signal.SIGKILL)
    assert second["pages"] > first["pages"]
    done = subprocess.run(command, capture_output=True, check=True, timeout=120)
    summary = json.loads(done.stdout)
    assert summary["complete"] and summary["pages"] == 106
    # Pages finished before the interruptions were not redone.
    assert summary["pages_this_run"] == 106 - second["pages"]
    assert _written_rows(out) == _written_rows(whole)
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


@needs_gensim
def test_output_of_another_run_is_not_mixed_in(dumps: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "links.parquet"
    recommend_dump(dumps["xml"], DATASET, "enwiki", out, threshold=0.9)
    with pytest.raises(wikisuggest.InvalidParameter, match="another dump or other options"):
        recommend_dump(dumps["xml"], DATASET, "enwiki", out, threshold=0.5)
    replaced = recommend_dump(dumps["xml"], DATASET, "enwiki", out, overwrite=True)
    assert replaced.pages_this_run == 106
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(wikisuggest.InvalidParameter, match="not empty"):
        recommend_dump(dumps["xml"], DATASET, "enwiki", tmp_path / "other")


@needs_gensim
def test_broken_dump_keeps_finished_parts(dumps: dict[str, Path], tmp_path: Path) -> None:
    xml = dumps["xml"].read_bytes()
    cut = tmp_path / "cut.xml"
    cut.write_bytes(xml[: len(xml) * 2 // 3])
    out = tmp_path / "links.parquet"
    with pytest.raises(wikisuggest.WikisuggestError, match=r"cut\.xml"):
        recommend_dump(cut, DATASET, "enwiki", out, pages_per_part=10, batch_pages=5)
    state = json.loads((out / MANIFEST).read_text())
    assert state["parts"] and not state["complete"]
    assert pq.read_table(out).num_rows == state["links"]


def test_written_dump_of_shipped_articles(tmp_path: Path) -> None:
    """`write_dump` (the README's example dump) gives back each article's links."""
    from wikisuggest.engine.dump import write_dump

    articles = sorted(wikisuggest.engine.demo_articles().items())
    dump = write_dump(tmp_path / "demo.xml.bz2", articles)
    summary = recommend_dump(dump, DATASET, "enwiki", tmp_path / "links.parquet")
    engine = wikisuggest.LinkEngine.default()
    expected = [
        (page_id, title, link.link_text, link.link_target, link.wikitext_offset, link.score)
        for page_id, (title, text) in enumerate(articles, start=1)
        for link in engine.recommend(text, title).links
    ]
    rows = pq.read_table(tmp_path / "links.parquet").to_pylist()
    got = [
        (r["page_id"], r["page_title"], r["link_text"], r["link_target"], r["wikitext_offset"],
         r["score"])
        for r in rows
    ]  # fmt: skip
    assert got == expected and summary.links == len(expected) > 0
    assert {r["revision_id"] for r in rows} == {101, 102}
