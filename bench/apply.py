"""``apply_links`` benchmark: the engine's partition (Rust, without the GIL) against the named
baseline, the regular-expression scanner that ``apply_links`` used in 0.1
(``python/wikisuggest/edits/_wikitext.py`` at commit 0d89ced, read from git).

Two measurements, best of ``ROUNDS`` (default 3) each:

* real pages: the 71 parity articles, each with the engine's own recommendations
  (``max_recommendations=0``), placed by ``apply_links``; and the baseline's partition of the
  same pages (what the placement waited for);
* unclosed markup: a sentence followed by ``N`` bytes of unclosed ``[[`` (vandalism's shape),
  for growing ``N``: the time per doubling says linear (x2) or quadratic (x4).

Run ``bash bench/run apply [ROUNDS]``.
"""

from __future__ import annotations

import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

import wikisuggest

ROOT = Path(__file__).resolve().parent.parent
PARITY = ROOT / "tests" / "data" / "parity"
BASELINE_COMMIT = "0d89ced"


def _baseline() -> types.ModuleType | None:
    """The 0.1 scanner, as a module, or ``None`` outside a git checkout."""
    done = subprocess.run(
        ["git", "show", f"{BASELINE_COMMIT}:python/wikisuggest/edits/_wikitext.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return None
    module = types.ModuleType("baseline_wikitext")
    # Registered first: its dataclasses look their module up while they are made.
    sys.modules[module.__name__] = module
    exec(compile(done.stdout, "baseline_wikitext.py", "exec"), module.__dict__)
    return module


def _best(rounds: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def _pages() -> list[tuple[str, str]]:
    rows = (PARITY / "articles" / "manifest.tsv").read_text("utf-8").splitlines()[1:]
    return [
        (title, (PARITY / "articles" / file).read_text("utf-8"))
        for file, title, *_ in (row.split("\t") for row in rows)
    ]


def main(argv: list[str]) -> int:
    rounds = int(argv[0]) if argv else 3
    baseline = _baseline()
    engine = wikisuggest.LinkEngine.open(PARITY / "datasets" / "enwiki", "enwiki")
    pages = _pages()
    results = [engine.recommend(text, title, max_recommendations=0) for title, text in pages]
    size = sum(len(text) for _, text in pages)

    def apply_all() -> None:
        for (_, text), result in zip(pages, results, strict=True):
            wikisuggest.apply_links(text, result)

    new = _best(rounds, apply_all)
    print(f"real pages: {len(pages)} parity articles, {size / 1e6:.2f} M code points")
    print(f"  apply_links (engine partition)      {new * 1e3:9.1f} ms")
    if baseline is not None:

        def scan_all() -> None:
            for _, text in pages:
                baseline.TextMap(text)

        old = _best(rounds, scan_all)
        print(f"  0.1 scanner, partition only          {old * 1e3:9.1f} ms  ({old / new:.1f}x)")

    print("unclosed '[[' after one sentence (time per doubling: 2x linear, 4x quadratic)")
    link = wikisuggest.LinkRecommendation("cats", "Cat", wikitext_offset=4)
    previous: dict[str, float] = {}
    for kb in (5, 10, 20, 40, 80, 160, 320):
        text = "The cats sleep. " + "[[" * (kb * 512)
        new = _best(rounds, lambda text=text: wikisuggest.apply_links(text, [link]))
        line = f"  {kb:4d} KB  apply_links {new * 1e3:9.2f} ms"
        if "new" in previous:
            line += f" (x{new / previous['new']:.1f})"
        previous["new"] = new
        if baseline is not None and kb <= 10:
            old = _best(1, lambda text=text: baseline.TextMap(text))
            line += f"   0.1 scanner {old * 1e3:9.1f} ms"
            if "old" in previous:
                line += f" (x{old / previous['old']:.1f})"
            previous["old"] = old
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
