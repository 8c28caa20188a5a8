"""The gap-analysis notebook (``examples/translation_gaps.ipynb``) runs cell by cell as
``scripts/run_notebook.py`` runs it (no Jupyter), prints the gaps of the shipped catalog as the
engine computes them, and draws its figure."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support.paths import REPO

import wikisuggest

NOTEBOOK = REPO / "examples" / "translation_gaps.ipynb"
TARGETS = ("sw", "yo", "ha")

pytest.importorskip("matplotlib", reason="the notebook plots with Matplotlib (requirements-dev)")
pytest.importorskip("pandas")


def test_notebook_is_stored_without_outputs() -> None:
    cells = json.loads(NOTEBOOK.read_text("utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert code and all(not c["outputs"] and c["execution_count"] is None for c in code)


def test_notebook_prints_the_engines_gaps_and_draws_them(tmp_path: Path) -> None:
    figure = tmp_path / "gaps.png"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "run_notebook.py"),
            str(NOTEBOOK),
            "--figure",
            str(figure),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()

    engine = wikisuggest.TranslationEngine.default()
    per_target = {t: engine.missing(t).to_pylist() for t in TARGETS}
    for target, rows in per_target.items():
        assert rows
        assert f"{target}    {len(rows)}" in lines

    # The topic table: the twelve topics with the most missing articles over the three
    # targets (ties in the order pandas' pivot sorts them: by name), a count per target.
    counts = {
        t: Counter(topic for r in rows for topic in r["topics"]) for t, rows in per_target.items()
    }
    total = Counter[str]()
    for c in counts.values():
        total.update(c)
    top = sorted(total, key=lambda topic: (-total[topic], topic))[:12]
    header = lines.index(next(line for line in lines if line.split() == ["target", *TARGETS]))
    table = [line.split() for line in lines[header + 2 : header + 2 + len(top)]]
    assert table == [[topic, *(str(counts[t][topic]) for t in TARGETS)] for topic in top]

    data = figure.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (880, 400)
    assert len(data) > 20_000  # bars, labels and legend, not an empty canvas
