"""The articles the engine is measured and trained on: the 71 parity articles (in the
repository) and the other pages of the enwiki sample in gensim 4.4.0's wheel (from PyPI).

``bench/engine.py`` measures on all of them (106); the profile that guides the release build
(``scripts/train-profile``) is trained on :func:`training_articles`, the gensim pages that are
no parity article, so that the 71 parity articles stay unseen by it.
"""

from __future__ import annotations

import bz2
import hashlib
import io
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARITY = ROOT / "tests" / "data" / "parity"
DOWNLOADS = ROOT / "target" / "reference-fixtures" / "downloads"
DUMP = "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
DUMP_SHA256 = "a53f4648dec40467ebdcbc7a1307eddb51fe6e28e9309f6ebde81ba0d04bea2d"


def parity_articles() -> dict[str, str]:
    lines = (PARITY / "articles" / "manifest.tsv").read_text("utf-8").splitlines()[1:]
    out = {}
    for line in lines:
        file, title = line.split("\t")[:2]
        out[title] = (PARITY / "articles" / file).read_text("utf-8")
    return out


def gensim_wheel() -> Path:
    """gensim 4.4.0's wheel (the one the test suite pins), downloaded when missing."""
    wheels = sorted(DOWNLOADS.glob("gensim-4.4.0-*.whl"))
    if not wheels:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary",
                ":all:",
                "--python-version",
                "3.11",
                "--platform",
                "manylinux_2_28_x86_64",
                "gensim==4.4.0",
                "-d",
                str(DOWNLOADS),
            ],
            check=True,
        )
        wheels = sorted(DOWNLOADS.glob("gensim-4.4.0-*.whl"))
    if not wheels:
        raise SystemExit(f"gensim 4.4.0's wheel is not in {DOWNLOADS}: cannot build the input")
    return wheels[-1]


def gensim_excerpt() -> bytes:
    """The dump excerpt in gensim's wheel (bzip2), its sha256 checked: the one
    scripts/build-sample-dataset builds the package's dataset from."""
    with zipfile.ZipFile(gensim_wheel()) as wheel:
        packed = wheel.read(DUMP)
    digest = hashlib.sha256(packed).hexdigest()
    if digest != DUMP_SHA256:
        raise SystemExit(f"{DUMP}: sha256 {digest}, not {DUMP_SHA256}")
    return packed


def gensim_articles() -> dict[str, str]:
    """Main-namespace, non-redirect pages of the dump excerpt in gensim's wheel."""
    data = bz2.decompress(gensim_excerpt())
    out = {}
    for _, element in ET.iterparse(io.BytesIO(data)):
        if not element.tag.endswith("}page"):
            continue
        ns = element.find("{*}ns")
        text = element.find("{*}revision/{*}text")
        title = element.find("{*}title")
        is_redirect = element.find("{*}redirect") is not None
        if ns is not None and ns.text == "0" and not is_redirect and text is not None:
            out[title.text or ""] = text.text or ""
        element.clear()
    return out


def fresh(text: str) -> str:
    """A new ``str`` equal to ``text``, with no UTF-8 form cached (as a decoder makes it)."""
    return text.encode("utf-8").decode("utf-8")


def training_articles() -> dict[str, str]:
    """The gensim sample's articles that are no parity article (35)."""
    parity = parity_articles()
    return {title: text for title, text in gensim_articles().items() if title not in parity}
