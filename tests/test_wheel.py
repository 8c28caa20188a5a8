"""The wheel that ``scripts/build-wheel`` made (``WIKISUGGEST_WHEEL``; ``bash scripts/test`` sets
it) holds the package and nothing else, declares what it is, and is what this suite runs.

Its platform tag, stable-ABI use and metadata rendering are checked where it is built
(auditwheel, abi3audit, twine, check-wheel-contents); a fresh environment running it is
tests/support/smoke_wheel.py.
"""

from __future__ import annotations

import base64
import configparser
import csv
import hashlib
import io
import os
import re
import sysconfig
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import pytest
import tomllib

import wikisuggest
from wikisuggest import _native

ROOT = Path(__file__).resolve().parent.parent
WHEEL = os.environ.get("WIKISUGGEST_WHEEL")
VERSION = tomllib.loads((ROOT / "Cargo.toml").read_text("utf-8"))["workspace"]["package"]["version"]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))

pytestmark = pytest.mark.skipif(
    not WHEEL, reason="no built wheel (bash scripts/test builds one: scripts/build-wheel)"
)


@pytest.fixture(scope="module")
def wheel() -> zipfile.ZipFile:
    assert WHEEL
    return zipfile.ZipFile(WHEEL)


def _dist_info(wheel: zipfile.ZipFile, name: str) -> str:
    return wheel.read(f"wikisuggest-{VERSION}.dist-info/{name}").decode("utf-8")


def test_tags_say_abi3_for_cpython_310_and_the_glibc_the_extension_needs(
    wheel: zipfile.ZipFile,
) -> None:
    """One wheel for every CPython from 3.10, tagged with a glibc no newer than the one whose
    symbols its extension uses: manylinux2014 (glibc 2.17) for the release build, which links
    against 2.17's symbols; the glibc of the machine that linked it for the test build."""
    assert WHEEL
    machine = os.uname().machine
    named = re.fullmatch(
        rf"wikisuggest-{re.escape(VERSION)}-cp310-abi3-"
        rf"(?:manylinux2014_{machine}\.)?manylinux_2_(\d+)_{machine}\.whl",
        Path(WHEEL).name,
    )
    assert named, Path(WHEEL).name
    minor = int(named[1])
    platforms = [f"manylinux_2_{minor}"] + (["manylinux2014"] if minor == 17 else [])
    assert ("manylinux2014" in Path(WHEEL).name) == (minor == 17)
    info = HeaderParser().parsestr(_dist_info(wheel, "WHEEL"))
    assert info["Root-Is-Purelib"] == "false"
    assert sorted(info.get_all("Tag") or []) == sorted(
        f"cp310-abi3-{platform}_{machine}" for platform in platforms
    )
    dynstr = _elf_sections(wheel.read("wikisuggest/_native.abi3.so"))[".dynstr"]
    needed = {(int(a), int(b)) for a, b in re.findall(rb"GLIBC_(\d+)\.(\d+)", dynstr)}
    assert needed and max(needed) <= (2, minor), sorted(needed)


def test_metadata_declares_the_project(wheel: zipfile.ZipFile) -> None:
    meta = HeaderParser().parsestr(_dist_info(wheel, "METADATA"))
    assert meta["Metadata-Version"] == "2.4"
    assert (meta["Name"], meta["Version"]) == ("wikisuggest", VERSION)
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["License-Expression"] == "MIT AND CC-BY-SA-3.0"
    assert sorted(meta.get_all("License-File") or []) == ["DATA-ATTRIBUTION", "LICENSE"]
    for name in ("LICENSE", "DATA-ATTRIBUTION"):
        shipped = _dist_info(wheel, f"licenses/{name}")
        assert shipped == (ROOT / name).read_text("utf-8")
    urls = dict(url.split(", ", 1) for url in meta.get_all("Project-URL") or [])
    assert {"Documentation", "Repository", "Issues", "Changelog"} <= urls.keys()
    # No dependency at all unless an extra asks for one; no development extras.
    assert all("extra ==" in r for r in meta.get_all("Requires-Dist") or [])
    assert not {"test", "lint"} & set(meta.get_all("Provides-Extra") or [])
    readme = meta.get_payload()
    assert isinstance(readme, str) and readme.startswith("# wikisuggest")  # the project page


def test_holds_the_package_and_nothing_else(wheel: zipfile.ZipFile) -> None:
    package = ROOT / "python" / "wikisuggest"
    sources = {
        f"wikisuggest/{path.relative_to(package).as_posix()}"
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in {".so", ".pyd"}
    }
    names = set(wheel.namelist())
    packaged = {n for n in names if not n.startswith(f"wikisuggest-{VERSION}.dist-info/")}
    assert packaged == sources | {"wikisuggest/_native.abi3.so"}
    for required in ("wikisuggest/py.typed", "wikisuggest/_native.pyi"):
        assert required in packaged
    entry_points = configparser.ConfigParser()
    entry_points.read_string(_dist_info(wheel, "entry_points.txt"))
    assert dict(entry_points["console_scripts"]) == PYPROJECT["project"]["scripts"]


def test_the_extension_is_stripped(wheel: zipfile.ZipFile) -> None:
    elf = wheel.read("wikisuggest/_native.abi3.so")
    assert elf[:4] == b"\x7fELF"
    sections = _elf_section_names(elf)
    assert ".dynsym" in sections  # PyInit__native is exported...
    assert ".symtab" not in sections and not any(s.startswith(".debug") for s in sections)


def test_this_suite_runs_the_wheel(wheel: zipfile.ZipFile) -> None:
    """The package under test is the wheel's, installed: not a development build."""
    site = Path(sysconfig.get_paths()["platlib"]).resolve()
    installed = Path(_native.__file__).resolve()
    assert installed == site / "wikisuggest" / "_native.abi3.so"
    assert Path(wikisuggest.__file__).resolve().parent == installed.parent
    record = csv.reader(io.StringIO(_dist_info(wheel, "RECORD")))
    digests = {row[0]: row[1] for row in record}
    digest = base64.urlsafe_b64encode(hashlib.sha256(installed.read_bytes()).digest())
    assert digests["wikisuggest/_native.abi3.so"] == "sha256=" + digest.rstrip(b"=").decode()
    assert wikisuggest.__version__ == VERSION


def _elf_section_names(elf: bytes) -> set[str]:
    return set(_elf_sections(elf))


def _elf_sections(elf: bytes) -> dict[str, bytes]:
    """The sections of a little-endian ELF64 file by name (the section header string table)."""
    assert elf[4] == 2 and elf[5] == 1, "ELF64, little-endian"
    shoff = int.from_bytes(elf[0x28:0x30], "little")
    shentsize = int.from_bytes(elf[0x3A:0x3C], "little")
    shnum = int.from_bytes(elf[0x3C:0x3E], "little")
    shstrndx = int.from_bytes(elf[0x3E:0x40], "little")

    def header(index: int) -> tuple[int, int, int]:
        start = shoff + index * shentsize
        name = int.from_bytes(elf[start : start + 4], "little")
        offset = int.from_bytes(elf[start + 0x18 : start + 0x20], "little")
        size = int.from_bytes(elf[start + 0x20 : start + 0x28], "little")
        return name, offset, size

    strings = header(shstrndx)[1]
    sections = {}
    for index in range(shnum):
        name, offset, size = header(index)
        end = elf.index(b"\0", strings + name)
        sections[elf[strings + name : end].decode("ascii")] = elf[offset : offset + size]
    return sections
