"""Runs a notebook's code cells in order, in one namespace, without Jupyter, and saves its
figure: how ``docs/translation-gaps.png`` is made from ``examples/translation_gaps.ipynb``.

    python scripts/run_notebook.py examples/translation_gaps.ipynb [--figure OUT.png]

A cell's last expression is not displayed (print what should be seen); ``--figure`` saves the
Matplotlib figure the notebook leaves in ``fig``.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any


def run(notebook: Path) -> dict[str, Any]:
    """The namespace after every code cell of ``notebook`` ran."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    cells = json.loads(notebook.read_text("utf-8"))["cells"]
    namespace: dict[str, Any] = {"__name__": "__main__"}
    for n, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            exec(compile(source, f"{notebook}[{n}]", "exec"), namespace)
    return namespace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--figure", type=Path, help="where to save the notebook's `fig`")
    args = parser.parse_args()
    namespace = run(args.notebook)
    if args.figure:
        namespace["fig"].savefig(args.figure, dpi=80, metadata={"Software": None})


if __name__ == "__main__":
    main()
