"""A synthetic wiki for the dataset builder, and an independent reader of what it writes.

* :func:`synthetic_dump`: a small pages-articles dump (topic articles, essays that mention
  the topics as links or as plain words, redirects), the same for the same arguments.
* :func:`read_sql_gz`: the rows of a published ``.sql.gz`` table (``INSERT`` lines, MySQL
  escapes, pickled values).
"""

from __future__ import annotations

import gzip
import pickle
import random
import re
from pathlib import Path
from typing import Any

# (title, anchor, share of mentions that are links): some phrases are nearly always
# linked, others are common words that authors rarely link.
TOPICS = [
    ("Red fox", "red fox", 0.9),
    ("Grey wolf", "grey wolf", 0.9),
    ("River Thames", "thames", 0.8),
    ("London", "london", 0.7),
    ("Oak", "oak tree", 0.8),
    ("Salmon", "salmon", 0.7),
    ("Forest", "forest", 0.15),
    ("Water", "water", 0.05),
    ("Winter", "winter", 0.1),
    ("Brown bear", "brown bear", 0.9),
    ("Europe", "europe", 0.6),
    ("Night", "night", 0.05),
]
FILLER = ["It is often seen there", "Many people know it", "This is common", "Few doubt it"]


def synthetic_dump(path: Path, articles: int = 60, seed: int = 3) -> None:
    """A pages-articles dump: topic articles, essays that mention topics, redirects."""
    rng = random.Random(seed)
    pages: list[tuple[str, str, str | None]] = []
    for title, anchor, _ in TOPICS:
        pages.append((title, f"The {anchor} is a topic. {rng.choice(FILLER)}.", None))
    for n in range(articles):
        sentences = []
        for _ in range(12):
            title, anchor, share = rng.choice(TOPICS)
            shown = anchor.capitalize() if rng.random() < 0.3 else anchor
            if rng.random() < share:
                target = "Fox" if title == "Red fox" and rng.random() < 0.3 else title
                text = f"[[{target}|{shown}]]" if target != shown else f"[[{shown}]]"
            else:
                text = shown
            sentences.append(f"{rng.choice(FILLER)} near the {text} in year {1900 + n}.")
        body = " ".join(sentences) + " [[Category:Essays]]"
        pages.append((f"Essay {n}", body, None))
    pages.append(("Fox", "#REDIRECT [[Red fox]]", "Red fox"))
    pages.append(("Thames", "#REDIRECT [[River Thames]]", "River Thames"))

    def esc(s: str) -> str:
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    out = [
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><siteinfo><namespaces>',
        '<namespace key="0" case="first-letter" />',
        '<namespace key="14" case="first-letter">Category</namespace>',
        "</namespaces></siteinfo>",
    ]
    for i, (title, text, redirect) in enumerate(pages, start=1):
        out.append(f"<page><title>{esc(title)}</title><ns>0</ns><id>{i}</id>")
        if redirect:
            out.append(f'<redirect title="{esc(redirect)}" />')
        out.append(f'<revision><id>{i + 100}</id><text xml:space="preserve">{esc(text)}</text>')
        out.append("</revision></page>")
    out.append("</mediawiki>")
    path.write_text("\n".join(out), encoding="utf-8")


def read_sql_gz(path: Path, table: str) -> list[tuple[int, str, Any]]:
    """An independent reader of the published dumps: INSERT lines, MySQL escapes, pickles."""
    escapes = {b"0": b"\0", b"n": b"\n", b"r": b"\r", b"Z": b"\x1a"}
    line_re = re.compile(
        rb"^INSERT INTO `" + table.encode() + rb"` VALUES \((\d+),'(.*)','(.*)'\);$"
    )

    def unescape(raw: bytes) -> bytes:
        return re.sub(rb"\\(.)", lambda m: escapes.get(m.group(1), m.group(1)), raw, flags=re.S)

    rows = []
    with gzip.open(path, "rb") as f:
        for line in f.read().split(b"\n"):
            if b"INSERT INTO" in line:
                m = line_re.match(line)
                assert m, line[:80]
                value = pickle.loads(unescape(m.group(3)))
                rows.append((int(m.group(1)), unescape(m.group(2)).decode(), value))
    return rows
