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

from support.paths import PARITY  # noqa: E402

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
    for part in manifest["parts"]:
        rows.extend(pq.read_table(out / part["name"]).to_pylist())
    assert pq.read_table(out).num_rows == len(rows)
    return rows


@needs_gensim
def test_rows_are_those_of_recommend_on_each_article(
    dumps: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "links.parquet"
    summary = recommend_dump(dumps["multistream"], DATASET, "enwiki", out, pages_per_part=30)
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
        *("--pages-per-part", "2", "--workers", "1", "--no-progress"),
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
    names = [part["name"] for part in state["parts"]]
    recorded = sum(pq.read_metadata(out / name).num_rows for name in names)
    assert recorded == state["links"] + state["errors"]
    # A kill between writing a part and recording it can leave that one part unrecorded (never
    # a recorded part missing): the next run removes it and redoes its pages.
    unrecorded = [p for p in out.glob("part-*.parquet") if p.name not in names]
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
    assert not [p for p in out.iterdir() if p.name.startswith(".") and p.name != ".lock"]


@needs_gensim
def test_output_of_another_run_is_not_mixed_in(dumps: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "links.parquet"
    recommend_dump(dumps["xml"], DATASET, "enwiki", out, threshold=0.9)
    with pytest.raises(wikisuggest.InvalidParameter, match="another dump, dataset or options"):
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
    with pytest.raises(wikisuggest.WikisuggestError, match=r"cut\.xml.*cut short"):
        recommend_dump(cut, DATASET, "enwiki", out, pages_per_part=10)
    state = json.loads((out / MANIFEST).read_text())
    assert state["parts"] and not state["complete"]
    assert pq.read_table(out).num_rows == state["links"]


@pytest.mark.parametrize(
    ("name", "value"),
    [("pages_per_part", 0), ("pages_per_part", -3), ("workers", 0), ("workers", -1),
     ("max_page_bytes", -1)],
)  # fmt: skip
def test_bad_counts_are_refused_before_the_output_is_touched(
    tmp_path: Path, name: str, value: int
) -> None:
    """A count out of range is the caller's mistake, named, whatever its sign."""
    from wikisuggest.engine.dump import write_dump

    dump = write_dump(tmp_path / "one.xml", [("Aardvark", "A mammal.")])
    out = tmp_path / "links.parquet"
    with pytest.raises(wikisuggest.InvalidParameter, match=f"{name}: must be at least 1") as err:
        recommend_dump(dump, DATASET, "enwiki", out, **{name: value})  # type: ignore[arg-type]
    assert err.value.parameter == name
    assert not out.exists()
    with pytest.raises(wikisuggest.InvalidParameter, match="no such dump file"):
        recommend_dump(tmp_path / "missing.xml", DATASET, "enwiki", out)
    assert not out.exists()


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


# --- Whole-wiki runs against hostile dumps and output folders, in the reproducers' shapes ---

_ARTICLES = sorted(wikisuggest.engine.demo_articles().items())


def _pages(count: int) -> list[tuple[str, str]]:
    """``count`` distinct articles: the shipped ones in turn, each under its own title and
    shortened to its first paragraphs (linked, but quick)."""
    return [
        (f"{title} {i}", text[: 1500 + 37 * (i % 11)])
        for i, (title, text) in ((i, _ARTICLES[i % len(_ARTICLES)]) for i in range(count))
    ]


def _xml(pages: list[tuple[str, str]]) -> bytes:
    from wikisuggest.engine.dump import write_dump

    with __import__("tempfile").TemporaryDirectory() as tmp:
        return write_dump(Path(tmp) / "d.xml", pages).read_bytes()


def _multistream(xml: bytes, per_stream: int) -> list[bytes]:
    """The header, then ``per_stream`` pages per bzip2 stream, then the end: as Wikimedia
    writes multistream dumps."""
    head, _, rest = xml.partition(b"  <page>")
    body, _, tail = (b"  <page>" + rest).rpartition(b"</mediawiki>")
    pages = [b"  <page>" + p for p in body.split(b"  <page>") if p]
    streams = [bz2.compress(head)]
    for start in range(0, len(pages), per_stream):
        streams.append(bz2.compress(b"".join(pages[start : start + per_stream])))
    streams.append(bz2.compress(b"</mediawiki>" + tail))
    return streams


@pytest.fixture(scope="module")
def two_hundred(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A 200-page dump, its rows from a run over it whole, and its multistream form."""
    root = tmp_path_factory.mktemp("two-hundred")
    pages = _pages(200)
    xml = _xml(pages)
    (root / "whole.xml").write_bytes(xml)
    recommend_dump(root / "whole.xml", DATASET, "enwiki", root / "whole", pages_per_part=40)
    return {"root": root, "pages": pages, "xml": xml, "rows": _written_rows(root / "whole")}


def test_a_dump_cut_between_pages_or_at_a_stream_boundary_is_never_complete(
    two_hundred: dict[str, Any], tmp_path: Path
) -> None:
    xml: bytes = two_hundred["xml"]
    # Cut after its 97th page, between two pages.
    at = [i for i in range(len(xml)) if xml.startswith(b"</page>", i)][96] + len(b"</page>\n")
    cut = tmp_path / "cut-97.xml"
    cut.write_bytes(xml[:at])
    with pytest.raises(wikisuggest.WikisuggestError, match=r"cut short.*between pages"):
        recommend_dump(cut, DATASET, "enwiki", tmp_path / "a", pages_per_part=30)
    state = json.loads((tmp_path / "a" / MANIFEST).read_text())
    assert (state["pages"], state["complete"]) == (97, False)
    expected = [r for r in two_hundred["rows"] if r["page_id"] <= 97]
    assert _written_rows(tmp_path / "a") == expected
    # Cut after its 5th bzip2 stream of 20 pages: every stream decompresses cleanly.
    streams = _multistream(xml, 20)
    at_boundary = tmp_path / "cut-100.xml.bz2"
    at_boundary.write_bytes(b"".join(streams[:6]))
    with pytest.raises(wikisuggest.WikisuggestError, match="cut short"):
        recommend_dump(at_boundary, DATASET, "enwiki", tmp_path / "b", pages_per_part=30)
    state = json.loads((tmp_path / "b" / MANIFEST).read_text())
    assert (state["pages"], state["complete"]) == (100, False)
    # The whole multistream dump reads to the same rows as the plain one.
    whole = tmp_path / "whole.xml.bz2"
    whole.write_bytes(b"".join(streams))
    summary = recommend_dump(whole, DATASET, "enwiki", tmp_path / "c", pages_per_part=30)
    assert summary.complete and summary.pages == 200
    assert _written_rows(tmp_path / "c") == two_hundred["rows"]


def _run_in_parts(dump: Path, out: Path) -> None:
    """An unfinished run: the first parts of ``dump``, then the dump's end cut off."""
    xml = dump.read_bytes()
    at = [i for i in range(len(xml)) if xml.startswith(b"</page>", i)][79] + len(b"</page>\n")
    cut = dump.with_name("first-80.xml")
    cut.write_bytes(xml[:at])
    with pytest.raises(wikisuggest.WikisuggestError, match="cut short"):
        recommend_dump(cut, DATASET, "enwiki", out, pages_per_part=20)
    # Resumed on the whole dump, it must be the same dump: here, the cut copy's identity is
    # not the whole one's, so the parts are moved under a manifest that names the whole dump.
    state = json.loads((out / MANIFEST).read_text())
    from wikisuggest.engine.dump import _dump_identity

    state["identity"]["dump"] = _dump_identity(dump)
    (out / MANIFEST).write_text(json.dumps(state))


def test_resume_refuses_another_dataset_or_another_dump_of_the_same_name_and_size(
    two_hundred: dict[str, Any], tmp_path: Path
) -> None:
    dump = tmp_path / "dump.xml"
    dump.write_bytes(two_hundred["xml"])
    out = tmp_path / "out"
    _run_in_parts(dump, out)
    other_dataset = PARITY / "datasets" / "enwiki"
    with pytest.raises(wikisuggest.InvalidParameter, match="another dump, dataset or options"):
        recommend_dump(dump, other_dataset, "enwiki", out, pages_per_part=20)
    # The same name and size, one title changed in the middle: another dump.
    xml = two_hundred["xml"]
    middle = xml.index(b"<title>", len(xml) // 2) + len(b"<title>")
    changed = (
        xml[:middle] + (b"X" if xml[middle : middle + 1] != b"X" else b"Y") + xml[middle + 1 :]
    )
    stat = dump.stat()
    dump.write_bytes(changed)
    os.utime(dump, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert dump.stat().st_size == stat.st_size
    with pytest.raises(wikisuggest.InvalidParameter, match="another dump, dataset or options"):
        recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=20)
    # The dump it started on resumes to the rows of a whole run.
    dump.write_bytes(xml)
    os.utime(dump, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    summary = recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=20)
    assert summary.complete and summary.pages_this_run == 120
    assert _written_rows(out) == two_hundred["rows"]


def test_a_deleted_part_or_an_edited_position_is_refused(
    two_hundred: dict[str, Any], tmp_path: Path
) -> None:
    dump = tmp_path / "dump.xml"
    dump.write_bytes(two_hundred["xml"])
    out = tmp_path / "out"
    recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=20)
    manifest = out / MANIFEST
    state = json.loads(manifest.read_text())
    # Ten of 20 pages, then the (empty) part that records where the dump ended.
    assert [part["pages"] for part in state["parts"]] == [20] * 10 + [0]
    # A deleted part: even a complete run no longer reads as complete.
    (out / "part-00003.parquet").rename(tmp_path / "aside.parquet")
    with pytest.raises(wikisuggest.InvalidParameter, match=r"part-00003\.parquet is missing"):
        recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=20)
    (tmp_path / "aside.parquet").rename(out / "part-00003.parquet")
    # A changed part.
    saved = (out / "part-00004.parquet").read_bytes()
    (out / "part-00004.parquet").write_bytes(saved[:-8] + b"\0" * 8)
    with pytest.raises(wikisuggest.InvalidParameter, match=r"part-00004\.parquet was changed"):
        recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=20)
    (out / "part-00004.parquet").write_bytes(saved)
    # An edited position, forward or back.
    for position in (state["position"] - 30, state["position"] + 1):
        manifest.write_text(json.dumps({**state, "position": position, "complete": False}))
        with pytest.raises(wikisuggest.InvalidParameter, match="recorded position"):
            recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=20)
    manifest.write_text(json.dumps(state))
    again = recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=20)
    assert again.complete and again.pages_this_run == 0


def test_a_hand_set_complete_is_not_believed(tmp_path: Path) -> None:
    dump = tmp_path / "dump.xml"
    dump.write_bytes(_xml(_pages(300)))
    out = tmp_path / "out"
    whole = recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=50)
    assert whole.complete and whole.pages == 300
    rows = _written_rows(out)
    # The manifest of a run that stopped half way, with "complete" set by hand: every
    # recorded part is there and unchanged, only the claim is false.
    manifest = out / MANIFEST
    state = json.loads(manifest.read_text())
    half = state["parts"][:3]
    assert half[-1]["position"] == 150
    forged = {
        **state,
        "parts": half,
        "position": 150,
        **{key: sum(part[key] for part in half) for key in ("pages", "links", "errors")},
        "complete": True,
    }
    manifest.write_text(json.dumps(forged))
    with pytest.warns(UserWarning, match="does not record the end of the dump"):
        again = recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=50)
    assert (again.complete, again.pages, again.pages_this_run) == (True, 300, 150)
    assert _written_rows(out) == rows
    # The run that reached the end is believed: nothing is read again.
    assert recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=50).pages_this_run == 0


def test_overwrite_deletes_only_the_runs_own_files(tmp_path: Path) -> None:
    dump = tmp_path / "dump.xml"
    dump.write_bytes(_xml(_pages(6)))
    out = tmp_path / "out"
    recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=2)
    victims = [tmp_path / "victim.txt", tmp_path / "absolute.txt"]
    for victim in victims:
        victim.write_text("keep me")
    state = json.loads((out / MANIFEST).read_text())
    state["parts"].append({"name": "../victim.txt"})
    state["parts"].append({"name": str(victims[1].resolve())})
    (out / MANIFEST).write_text(json.dumps(state))
    with pytest.raises(wikisuggest.InvalidParameter, match="cannot have written"):
        recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=2)
    summary = recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=2, overwrite=True)
    assert summary.complete and summary.pages_this_run == 6
    assert all(v.read_text() == "keep me" for v in victims)
    # An unreadable manifest blocks a resume, never an overwrite.
    (out / MANIFEST).write_bytes(b"\xff{ not json")
    with pytest.raises(wikisuggest.InvalidParameter, match="cannot be read"):
        recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=2)
    summary = recommend_dump(dump, DATASET, "enwiki", out, pages_per_part=2, overwrite=True)
    assert summary.complete and summary.pages == 6
    assert sorted(p.name for p in out.iterdir()) == [
        ".lock",
        MANIFEST,
        "part-00000.parquet",
        "part-00001.parquet",
        "part-00002.parquet",
        "part-00003.parquet",  # the end of the dump
    ]


def test_two_runs_on_one_folder_do_not_collide(tmp_path: Path) -> None:
    import fcntl

    dump = tmp_path / "dump.xml"
    dump.write_bytes(_xml(_pages(4)))
    out = tmp_path / "out"
    out.mkdir()
    with open(out / ".lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(wikisuggest.InvalidParameter, match="being written by another run"):
            recommend_dump(dump, DATASET, "enwiki", out)
    assert recommend_dump(dump, DATASET, "enwiki", out).complete


def test_a_bad_page_is_its_error_row_and_the_run_goes_on(tmp_path: Path) -> None:
    pages = _pages(9)
    xml = _xml(pages)
    # Page 3 gets an invalid UTF-8 byte in its text; page 6 is over the page size limit;
    # page 8 has a bad id.
    third = xml.index(b"<text", xml.index(f"<title>{pages[2][0]}".encode())) + 40
    xml = xml[:third] + b"\xff" + xml[third + 1 :]
    sixth = xml.index(b"</text>", xml.index(f"<title>{pages[5][0]}".encode()))
    xml = xml[:sixth] + b"x" * 70_000 + xml[sixth:]
    eighth = xml.index(b"<id>8</id>")
    xml = xml[:eighth] + b"<id>eight</id>" + xml[eighth + len(b"<id>8</id>") :]
    dump = tmp_path / "bad.xml"
    dump.write_bytes(xml)
    out = tmp_path / "out"
    summary = recommend_dump(dump, DATASET, "enwiki", out, max_page_bytes=64_000)
    assert summary.complete and summary.pages == 9 and summary.errors == 3
    rows = _written_rows(out)
    errors = {r["page_title"]: r for r in rows if r["error"] is not None}
    assert set(errors) == {pages[2][0], pages[5][0], pages[7][0]}
    assert errors[pages[2][0]]["error"].startswith("WikitextError: page ")
    assert "utf-8" in errors[pages[2][0]]["error"].lower()
    assert errors[pages[2][0]]["page_id"] == 3 and errors[pages[2][0]]["revision_id"] == 103
    assert "larger than the limit of 64000 bytes" in errors[pages[5][0]]["error"]
    sixth_start = xml.rindex(b"<page>", 0, xml.index(f"<title>{pages[5][0]}".encode()))
    assert f"(id 6) at byte {sixth_start}: " in errors[pages[5][0]]["error"]
    assert "bad <id>" in errors[pages[7][0]]["error"]
    # Every other page has the rows of recommend.
    engine = wikisuggest.LinkEngine.default()
    expected = [
        (page_id, link.link_text, link.link_target, link.wikitext_offset)
        for page_id, (title, text) in enumerate(pages, start=1)
        if page_id not in (3, 6, 8)
        for link in engine.recommend(text, title).links
    ]
    got = [(r["page_id"], r["link_text"], r["link_target"], r["wikitext_offset"])
           for r in rows if r["error"] is None]  # fmt: skip
    assert got == expected and len({g[0] for g in got}) >= 4


def test_a_nested_markup_page_over_its_budget_is_an_error_row(tmp_path: Path) -> None:
    """One nested-markup page of 400 KB: with no budget the engine spends minutes and GBs on
    it; over the per-page budget it is that page's error row, and every resume goes past it."""
    nested = "[[a|" * 66_000 + "a" + "]]" * 66_000
    assert 390_000 < len(nested) < 410_000
    pages = [*_pages(2), ("Nested", nested), *_pages(5)[3:]]
    dump = tmp_path / "nested.xml"
    dump.write_bytes(_xml(pages))
    out = tmp_path / "out"
    summary = recommend_dump(dump, DATASET, "enwiki", out, time_budget=1.0, workers=1)
    assert summary.complete and summary.pages == 5 and summary.errors == 1
    (error,) = [r for r in _written_rows(out) if r["error"] is not None]
    assert error["page_title"] == "Nested" and error["link_text"] is None
    # Stopped by the budget, or refused first by the engine's bound on nested links' labels.
    assert error["error"].startswith(
        (
            "WikitextError: the page was not finished within its time",
            "WikitextError: the page needs more than",
        )
    )


#: Runs the rest of its arguments as a child and writes that child's peak RSS (KiB) to the
#: file named first. The child is forked from this small process: a child forked from the
#: test process itself would report the test process's size as its own (Linux keeps the
#: high-water mark of the memory a process had before its exec).
_PEAK_RSS = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _bomb_run(dump: Path, out: Path) -> tuple[int, float, dict[str, Any]]:
    """``recommend-dump`` in a process of its own: exit code, peak RSS in MiB, summary."""
    command = [
        *(sys.executable, "-m", "wikisuggest", "recommend-dump", str(dump)),
        *("--datasets", str(DATASET), "--wiki", "enwiki", "--out", str(out), "--no-progress"),
        *("--workers", "1"),
    ]
    peak_file = out.parent / f"{out.name}.peak"
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, str(peak_file), *command],
        capture_output=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    peak = int(peak_file.read_text()) / 1024
    return done.returncode, peak, json.loads(done.stdout)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind", ["bz2", "gz"])
def test_a_compressed_bomb_is_an_error_row_in_bounded_memory(kind: str, tmp_path: Path) -> None:
    """A dump of a few KiB whose one page decompresses to 512 MiB (the reproducers: 8 GiB in a
    22 KiB multistream bz2, 7 GiB in a 7 MiB gz; the same reading at a sixteenth of the time):
    that page is an error row naming it, the pages after it are read, and memory stays far
    below the page's size."""
    import gzip
    import resource

    head = _xml([])[: _xml([]).index(b"</mediawiki>")]
    after = _xml(_pages(2))
    after = after[after.index(b"  <page>") :]
    page = (
        b"  <page>\n    <title>Bomb</title>\n    <ns>0</ns>\n    <id>77</id>\n"
        b"    <revision><id>78</id><text>"
    )
    block = b"a" * (1 << 24)
    if kind == "bz2":
        streams = [bz2.compress(head)]
        compressor: Any = bz2.BZ2Compressor(9)
    else:
        streams = [gzip.compress(head)]
        import zlib

        compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [compressor.compress(page)]
    for _ in range(32):
        parts.append(compressor.compress(block))
    parts.append(compressor.compress(b"</text></revision>\n  </page>\n" + after))
    parts.append(compressor.flush())
    streams.append(b"".join(parts))
    dump = tmp_path / f"bomb.xml.{kind}"
    dump.write_bytes(b"".join(streams))
    assert dump.stat().st_size < 2 << 20
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    _, peak, summary = _bomb_run(dump, tmp_path / "out")
    assert summary["complete"] and summary["pages"] == 3 and summary["errors"] == 1
    rows = _written_rows(tmp_path / "out")
    (error,) = [r for r in rows if r["error"] is not None]
    assert (error["page_title"], error["page_id"]) == ("Bomb", 77)
    assert "larger than the limit" in error["error"] and "at byte " in error["error"]
    assert 1 in {r["page_id"] for r in rows if r["error"] is None}
    # The child's own peak RSS: far below the page's size.
    print(f"peak RSS of the run: {peak:.0f} MiB")
    assert 0 < peak < 400, (peak, before)


def test_sigkill_at_random_points_loses_and_duplicates_no_row(
    two_hundred: dict[str, Any], tmp_path: Path
) -> None:
    import random

    dump = tmp_path / "dump.xml"
    dump.write_bytes(two_hundred["xml"])
    out = tmp_path / "out"
    command = [
        *(sys.executable, "-m", "wikisuggest", "recommend-dump", str(dump)),
        *("--datasets", str(DATASET), "--wiki", "enwiki", "--out", str(out)),
        *("--pages-per-part", "7", "--workers", "2", "--no-progress"),
    ]
    chance = random.Random(20_250_925)

    def recorded() -> int:
        try:
            return len(json.loads((out / MANIFEST).read_text())["parts"])
        except (OSError, ValueError):
            return 0

    kills = 0
    for _ in range(8):
        # Killed a random moment after a random number of further parts (29 in all).
        target = recorded() + chance.randint(1, 3)
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while proc.poll() is None and recorded() < target and time.monotonic() < deadline:
            time.sleep(0.002)
        # A part takes a few milliseconds: kill within one, at a random point of it.
        time.sleep(chance.uniform(0, 0.005))
        if proc.poll() is None:
            proc.kill()
            kills += 1
        proc.wait()
    assert kills >= 5
    done = subprocess.run(command, capture_output=True, check=True, timeout=300)
    summary = json.loads(done.stdout)
    assert summary["complete"] and summary["pages"] == 200
    assert _written_rows(out) == two_hundred["rows"]
