"""Damaged native datasets through the Python API: refused on open when the structure is
wrong, found by ``verify`` when the data is, and never answered from silently."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from wikisuggest import LinkEngine
from wikisuggest.engine import default_dataset_path
from wikisuggest.errors import DatasetError, InvalidParameter

PAGE = "Anarchism is a political philosophy. Autism and the cat and the ants."


def damaged_copy(tmp_path: Path, at: int, value: bytes) -> Path:
    path = tmp_path / "enwiki.linkdata"
    shutil.copyfile(default_dataset_path(), path)
    data = bytearray(path.read_bytes())
    data[at : at + len(value)] = value
    path.write_bytes(bytes(data))
    return path


def test_a_one_field_change_of_the_section_table_is_refused(tmp_path: Path) -> None:
    # Entry 12 (candidate offsets): its offset moved by one alignment unit.
    at = 64 + 11 * 24 + 8
    original = default_dataset_path().read_bytes()
    (offset,) = struct.unpack_from("<Q", original, at)
    path = damaged_copy(tmp_path, at, struct.pack("<Q", offset + 64))
    with pytest.raises(DatasetError, match="out of place"):
        LinkEngine.open(path, "enwiki")


def test_verify_finds_damaged_data_that_a_cheap_open_accepts(tmp_path: Path) -> None:
    size = default_dataset_path().stat().st_size
    path = damaged_copy(tmp_path, size - 3, b"~")
    engine = LinkEngine.open(path, "enwiki")
    with pytest.raises(DatasetError, match="checksum"):
        engine.verify()
    with pytest.raises(DatasetError, match="checksum"):
        LinkEngine.open(path, "enwiki", verify=True)
    LinkEngine.open(default_dataset_path(), "enwiki", verify=True).verify()


@pytest.mark.parametrize("version", [1, 2])
def test_an_old_format_version_asks_to_convert_again(tmp_path: Path, version: int) -> None:
    path = damaged_copy(tmp_path, 8, struct.pack("<I", version))
    with pytest.raises(DatasetError, match=f"format version {version} .*convert the dataset again"):
        LinkEngine.open(path, "enwiki")


def test_verify_must_be_a_bool() -> None:
    with pytest.raises(InvalidParameter):
        LinkEngine.open(default_dataset_path(), "enwiki", verify="yes")  # type: ignore[arg-type]


def test_an_intact_file_still_answers() -> None:
    engine = LinkEngine.open(default_dataset_path(), "enwiki", verify=True)
    assert engine.recommend(PAGE, "Page", threshold=0.0).links


CHANGE_UNDER_ENGINE = """
import os, shutil, sys
from wikisuggest import LinkEngine
from wikisuggest.engine import default_dataset_path
path = sys.argv[1]
shutil.copyfile(default_dataset_path(), path)
engine = LinkEngine.open(path, "enwiki")
page = sys.argv[2]
before = engine.recommend(page, "Page", threshold=0.0).links
os.truncate(path, 10)
after = engine.recommend(page, "Page", threshold=0.0).links
print("SAME" if before == after and before else "DIFFERENT")
"""


def test_truncating_the_file_under_a_live_engine_is_harmless(tmp_path: Path) -> None:
    # In a child process: a fault (SIGBUS on a truncated map) must not take pytest down.
    out = subprocess.run(
        [sys.executable, "-c", CHANGE_UNDER_ENGINE, str(tmp_path / "enwiki.linkdata"), PAGE],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "SAME"
