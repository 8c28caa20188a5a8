"""What never-link rules cost the pass: the 71 parity articles with a realistic rule set (3,000
target titles and 300 phrases drawn from the dataset) against the same articles without rules.

Two measures, both of the pass alone (opening the dataset and building the rules excluded):

* **Instructions** (the repeatable one on a shared machine): each mode runs under callgrind
  with 1 and with 3 rounds over the articles; the difference is two rounds of passes.
* **Paired time**: the two modes alternate, each timing its own rounds of passes inside the
  process; the ratio is taken pair by pair and the median reported.

Run ``bash bench/run rules`` (``--pairs N``, ``--rounds N`` change the paired run). Needs
valgrind (Debian's package) for the first measure; without it only the paired run is made.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTICLES = ROOT / "tests" / "data" / "parity" / "articles"
PUBLISHED = ROOT / "tests" / "data" / "parity" / "datasets" / "enwiki"
WORK = ROOT / "target" / "bench-rules"
EXAMPLE = ROOT / "target" / "release" / "examples" / "rules_cost"


def build() -> Path:
    subprocess.run(
        ["cargo", "build", "--quiet", "--release", "-p", "wikisuggest-engine",
         "--example", "rules_cost"],
        cwd=ROOT,
        check=True,
    )  # fmt: skip
    native = WORK / "enwiki.linkdata"
    if not native.is_file():
        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(EXAMPLE), "convert", str(PUBLISHED), str(WORK)], check=True)
    return native


def run(native: Path, mode: str, rounds: int) -> tuple[float, str]:
    """Seconds of the whole process and what it printed."""
    started = time.perf_counter()
    out = subprocess.run(
        [str(EXAMPLE), "run", str(native), str(ARTICLES), mode, str(rounds)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return time.perf_counter() - started, out


def instructions(native: Path, mode: str, rounds: int) -> int:
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(EXAMPLE), "run",
         str(native), str(ARTICLES), mode, str(rounds)],
        check=True,
        capture_output=True,
        text=True,
    )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    if not found:
        sys.exit(f"callgrind printed no total:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=9, help="paired runs (9)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over the articles (3)")
    args = parser.parse_args()
    native = build()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(f"commit {commit}; {run(native, 'rules', 1)[1]}")

    if shutil.which("valgrind"):
        per_mode = {}
        for mode in ("plain", "rules"):
            one, three = instructions(native, mode, 1), instructions(native, mode, 3)
            per_mode[mode] = (three - one) / 2
            print(f"{mode:>6}: {per_mode[mode] / 71:,.0f} instructions per article")
        print(f"instructions, rules / plain: {per_mode['rules'] / per_mode['plain']:.4f}")
    else:
        print("valgrind not found: no instruction counts (apt-get install valgrind)")

    # Paired: each process times only the passes (the difference of two round counts).
    ratios = []
    for _ in range(args.pairs):
        plain = run(native, "plain", args.rounds + 1)[0] - run(native, "plain", 1)[0]
        ruled = run(native, "rules", args.rounds + 1)[0] - run(native, "rules", 1)[0]
        ratios.append(ruled / plain)
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
    print(
        f"paired time, rules / plain over {args.pairs} pairs: median "
        f"{statistics.median(ratios):.3f} (quartiles {quartiles[0]:.3f}-{quartiles[2]:.3f})"
    )


if __name__ == "__main__":
    main()
