"""Local link engine benchmark: ``LinkEngine.recommend`` against ``mwparserfromhell.parse``.

Production's engine parses each page with mwparserfromhell before doing anything else, so
parsing alone is a floor for its cost per page. We time, on the same articles:

* ``mwparserfromhell.parse`` (pinned 0.7.2, its C tokenizer), one core, each tree dropped;
* ``LinkEngine.recommend`` with the HTTP API's defaults (threshold 0.5, at most 15 links),
  one page at a time on one core: on a fresh ``str`` per call (first call: a page as a
  dump reader or a request hands it over, no UTF-8 form cached) and again on the same
  strings (repeated call), and ``recommend_many`` on all cores;
* the same with the parity set's ``exhaustive`` settings (threshold 0, no maximum), which
  classifies every candidate mention of the page.

Articles: the 71 parity articles plus the other pages of the enwiki sample in gensim's wheel
(106 articles in all; ``--parity-only`` for the 71). The wheel is the one ``bash
scripts/test`` downloads into ``target/reference-fixtures/downloads``; when it is missing
the benchmark downloads it there, and fails rather than measure a smaller set.

The measurements run in interleaved rounds (parse, then each engine row, round after
round), so that all of them see the same machine; one-core rows are timed in the process's
CPU time. A row's ratio is the median over the rounds of parse time / row time within a
round (best round in brackets). The machine's load (1-minute average) is printed before and
after. ``--instructions`` counts instructions instead (valgrind's callgrind, independent of
the load): the Python API's per article (a fresh ``str`` per call; valgrind slows a page a
hundredfold, so the process's first try on the calling thread is given an hour,
``WIKISUGGEST_FIRST_TRY``, and pages run there as they do at full speed) and, from the Rust
example ``profile_recommend``, the pass's stages. ``--block K`` times instead a loop that
parses K articles and then recommends the same K (fresh ``str``), block after block: the
engine then starts each block with the parser's allocations in the caches, as in a program
that does both page by page; the ratio is the round's sums. Run ``bash bench/run engine``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from articles import ROOT, fresh, gensim_articles, parity_articles


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def build_label() -> str:
    """Which build of the extension runs (``bench/run`` says how it built it)."""
    import wikisuggest._native as native

    file = Path(native.__file__ or "").name
    kind = "abi3" if ".abi3." in file else "version-specific"
    return os.environ.get("WIKISUGGEST_BENCH_BUILD", f"{file} ({kind}, profile not recorded)")


def timed_rounds(
    rounds: int, rows: list[tuple[str, Callable[[], object], Callable[[], float]]]
) -> dict[str, list[float]]:
    """Every row once per round, rows in order within a round."""
    times: dict[str, list[float]] = {label: [] for label, _, _ in rows}
    for _ in range(rounds):
        for label, run, clock in rows:
            start = clock()
            run()
            times[label].append(clock() - start)
    return times


def instructions(args: argparse.Namespace, pages: list[tuple[str, str]]) -> int:
    """Instruction counts: the Python API per article, and the Rust pass's stages."""
    import json
    import shutil
    import tempfile

    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    script = r"""
import json, sys
import wikisuggest
pages = json.load(open(sys.argv[1], encoding="utf-8"))
count = int(sys.argv[2])
engine = wikisuggest.LinkEngine.default()
options = json.loads(sys.argv[3])
engine.recommend(pages[0][1].encode().decode(), pages[0][0], **options)  # warm-up
# Fresh strings for every page in both runs; only the calls differ between them.
copies = [(title, text.encode().decode()) for title, text in pages]
for title, text in copies[:count]:
    engine.recommend(text, title, **options)
"""

    def collected(count: int, options: dict[str, float], folder: str) -> int:
        out = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=/dev/null",
                sys.executable,
                "-c",
                script,
                f"{folder}/pages.json",
                str(count),
                json.dumps(options),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "WIKISUGGEST_FIRST_TRY": "3600"},
        )
        for line in out.stderr.splitlines():
            if "Collected :" in line:
                return int(line.rsplit(":", 1)[1].strip())
        raise SystemExit(f"no instruction count from valgrind:\n{out.stderr[-2000:]}")

    settings = {"api": {}, "exhaustive": {"threshold": 0.0, "max_recommendations": 0}}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "pages.json").write_text(json.dumps(pages), "utf-8")
        print(
            f"\ninstructions through the Python API (callgrind; {len(pages)} articles, "
            "a fresh str per call):"
        )
        for name, options in settings.items():
            base = collected(0, options, folder)
            full = collected(len(pages), options, folder)
            per = (full - base) / len(pages)
            print(f"  recommend ({name}): {per / 1e6:.2f} M per article ({full - base:,} in all)")
        stages(pages, folder)
    return 0


#: The pass's stages, by the functions that run them (inclusive counts), in order.
STAGES = [
    ("wikitext partition (mwparserfromhell port)", ["NodeStream::step"]),
    ("wikilink search (wikitextparser port)", ["wikilink_ranges_in"]),
    ("existing links (all, search included)", ["Linked::existing"]),
    ("sentences, words, n-grams, look-ups", ["words::node_mentions"]),
    ("... of which anchor look-ups", ["LinkModel>::anchor_rows"]),
    ("features and XGBoost", ["place::classify"]),
    ("placement (splicing, offsets, contexts)", ["place::splice_link", "place::place"]),
]


def stages(pages: list[tuple[str, str]], folder: str) -> None:
    """Instructions of the Rust pass by stage: the example ``profile_recommend`` over the
    same articles, one round, under callgrind."""
    import shutil

    if shutil.which("cargo") is None:
        print("(no cargo: the stages of the Rust pass are not counted)")
        return
    subprocess.run(
        [
            "cargo",
            "build",
            "--quiet",
            "--release",
            "--example",
            "profile_recommend",
            "-p",
            "wikisuggest-engine",
        ],
        cwd=ROOT,
        check=True,
    )
    articles = Path(folder, "articles")
    articles.mkdir()
    manifest = ["file\ttitle"]
    for i, (title, text) in enumerate(pages):
        Path(articles, f"{i:03}.txt").write_text(text, "utf-8")
        manifest.append(f"{i:03}.txt\t{title}")
    Path(articles, "manifest.tsv").write_text("\n".join(manifest) + "\n", "utf-8")
    import wikisuggest.engine

    dataset = str(wikisuggest.engine.sample.default_dataset_path())
    example = ROOT / "target" / "release" / "examples" / "profile_recommend"
    for setting in ["", "exhaustive"]:
        out = Path(folder, f"callgrind{setting}.out")
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(example)]
            + [dataset, str(articles), "1"]
            + ([setting] if setting else []),
            capture_output=True,
            text=True,
            check=True,
        )
        digest = run.stdout.strip().splitlines()[-1]
        report = subprocess.run(
            ["callgrind_annotate", "--inclusive=yes", str(out)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        counts: dict[str, int] = {}
        for line in report.splitlines():
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[0].replace(",", "").isdigit():
                name = parts[2]
                counts.setdefault(name, int(parts[0].replace(",", "")))
        total = max(
            (v for k, v in counts.items() if "pipeline::recommend_filtered" in k), default=0
        )
        label = "exhaustive" if setting else "API defaults"
        print(f"\nthe Rust pass by stage, {label} ({digest}); callgrind, inclusive counts:")
        print(f"  {'whole pass':44}{total / len(pages) / 1e6:8.2f} M per article  100.0 %")
        for stage, names in STAGES:
            n = sum(
                max((v for k, v in counts.items() if pattern in k and "'2" not in k), default=0)
                for pattern in names
            )
            if not n:
                # A stage's functions were inlined into their caller: not counted apart.
                print(f"  {stage:44}{'(not found: inlined?)':>27}")
                continue
            share = 100 * n / total if total else 0.0
            print(f"  {stage:44}{n / len(pages) / 1e6:8.2f} M per article {share:6.1f} %")


def blocked(pages: list[tuple[str, str]], engine: Any, block: int, rounds: int) -> int:
    """Parse ``block`` articles, then recommend the same ones (API defaults, fresh strs)."""
    import mwparserfromhell

    cpu = time.process_time
    ratios, parse_s, engine_s = [], [], []
    for _ in range(rounds):
        parsed = recommended = 0.0
        for at in range(0, len(pages), block):
            part = pages[at : at + block]
            copies = [(title, fresh(text)) for title, text in part]
            start = cpu()
            for _, text in part:
                mwparserfromhell.parse(text)
            middle = cpu()
            for title, text in copies:
                engine.recommend(text, title)
            parsed, recommended = parsed + middle - start, recommended + cpu() - middle
        ratios.append(parsed / recommended)
        parse_s.append(parsed)
        engine_s.append(recommended)
    print(
        f"\nblocks of {block}: parse median {statistics.median(parse_s):.3f} s, recommend (api) "
        f"median {statistics.median(engine_s):.3f} s; vs parse {statistics.median(ratios):.1f}x "
        f"(rounds {min(ratios):.1f}x to {max(ratios):.1f}x)\nload after: {load()}"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--parity-only", action="store_true", help="skip the gensim sample")
    parser.add_argument(
        "--block",
        type=int,
        default=0,
        help="parse and recommend in blocks of this many articles, instead of whole rows",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions with callgrind instead of timing",
    )
    args = parser.parse_args()

    import mwparserfromhell

    import wikisuggest
    from wikisuggest.engine import Page

    articles = parity_articles()
    if not args.parity_only:
        for title, text in gensim_articles().items():
            articles.setdefault(title, text)
    pages = list(articles.items())
    if args.instructions:
        return instructions(args, pages)
    chars = sum(len(t) for _, t in pages)
    megabytes = sum(len(t.encode("utf-8")) for _, t in pages) / 1e6
    engine = wikisuggest.LinkEngine.default()
    cores = os.cpu_count() or 1
    source = "71 parity articles" if args.parity_only else "parity articles + gensim 4.4.0 sample"
    print(
        f"input: {source}, embedded enwiki sample dataset; "
        f"{len(pages)} articles, {chars:,} characters ({megabytes:.2f} MB UTF-8); "
        f"{cores} cores; {args.rounds} interleaved rounds; mwparserfromhell "
        f"{mwparserfromhell.__version__} (C tokenizer: {mwparserfromhell.parser.use_c})\n"
        f"build: {build_label()}; load before: {load()}"
    )

    def parse_all() -> None:
        for _, text in pages:
            mwparserfromhell.parse(text)

    # A fresh copy of every page for each first-call row of each round, made outside the
    # timed span; the repeated-call row then reads the same strings again.
    copies: list[tuple[str, str]] = []

    def refresh() -> None:
        copies[:] = [(title, fresh(text)) for title, text in pages]

    if args.block > 0:
        engine.recommend(pages[0][1], pages[0][0])
        return blocked(pages, engine, args.block, args.rounds)

    settings = {"api": {}, "exhaustive": {"threshold": 0.0, "max_recommendations": 0}}
    # One-core runs are timed in this process's CPU time, immune to other processes competing
    # for the cores (not this thread's: `recommend` runs each page on a worker thread of the
    # extension while the caller waits). Multi-core runs can only be timed by the wall clock.
    cpu, wall = time.process_time, time.perf_counter
    rows: list[tuple[str, Callable[[], object], Callable[[], float]]] = [
        ("mwparserfromhell.parse, 1 core", parse_all, cpu)
    ]
    for name, options in settings.items():

        def first_call(options: dict[str, float] = options) -> None:
            for title, text in copies:
                engine.recommend(text, title, **options)

        def repeated(options: dict[str, float] = options) -> None:
            for title, text in copies:
                engine.recommend(text, title, **options)

        def all_cores(options: dict[str, float] = options) -> None:
            batch = engine.recommend_many(
                [Page(text, title) for title, text in copies], workers=cores, **options
            )
            assert not batch.errors, batch.errors[:3]

        rows.append(("(fresh strings)", refresh, cpu))
        rows.append((f"recommend ({name}), 1 core, first call", first_call, cpu))
        rows.append((f"recommend ({name}), 1 core, repeated", repeated, cpu))
        rows.append(("(fresh strings)", refresh, cpu))
        rows.append((f"recommend_many ({name}), {cores} cores, wall", all_cores, wall))

    engine.recommend(pages[0][1], pages[0][0])  # the dataset mapped and warm
    times = timed_rounds(args.rounds, rows)
    after = load()
    parse = times[rows[0][0]]
    print(f"\n{'':46}{'median s':>9}{'best s':>9}{'articles/s':>12}{'vs parse':>10}{'best':>8}")
    for label, _, _ in rows:
        if label.startswith("("):
            continue
        seconds = times[label]
        ratios = sorted(p / t for p, t in zip(parse, seconds, strict=False) if t > 0)
        median = statistics.median(seconds)
        print(
            f"{label:46}{median:9.3f}{min(seconds):9.3f}{len(pages) / median:12.1f}"
            f"{statistics.median(ratios):9.1f}x{max(ratios):7.1f}x"
        )
    print(f"\nload after: {after}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
