"""Dataset builder at scale: CPU per MB and peak memory per pass, extrapolated to enwiki.

The input is an enwiki-shaped dump generated from the real enwiki excerpt in gensim 4.4.0's
wheel (206 pages, 6 MB of XML; the wheel the test suite downloads into
``target/reference-fixtures/downloads``). The excerpt is written again and again, each copy
with its own titles: page titles, redirect targets and article-link targets get a copy
suffix (`` v17``) and page ids an offset, so the titles, anchors of plain links and the link
graph grow with the copies instead of repeating. Links to other namespaces are kept as they
are. Most link targets of an excerpt lie outside it, so the build treats them as articles
(``keep_missing_targets``), as a complete dump would have them.

Each builder pass runs in a child process, which resets its peak-RSS counter
(``/proc/self/clear_refs``) before every pass and reads ``VmHWM`` after it; CPU is the
process's user + system time. Passes: ``scan`` (catalogue and counts: two reads of the dump),
``vectors`` (link-graph embedding), ``training rows`` (a third read), ``train`` (XGBoost,
one thread), ``write`` (published files and native file), ``backtest`` (a fourth read).

Extrapolation to enwiki (about 90 GB of XML, 7 M titles, 15 M anchors): CPU grows with the
XML a pass reads, with the tables (vectors, writing) or with the training rows (training);
the peak memory of a pass is fitted as a straight line between two dump sizes (``--sizes``)
against the dump's share of enwiki (the larger of its title and anchor shares) and read at
the whole of enwiki. Training rows and backtest stop at 200,000 and 10,000 articles: their
CPU is scaled to the share of the dump they read, their memory is not (the feature matrix
at the training cap is printed separately).

Run ``bash bench/run build`` (default: 512 MB and 1 GB of XML; ``--sizes 32,64`` measures
smaller dumps). The generated dumps are written under ``--work-dir`` and removed afterwards.
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import DUMP, gensim_wheel

ENWIKI_XML_MB = 90_000
ENWIKI_TITLES = 7_000_000
ENWIKI_ANCHORS = 15_000_000
ENWIKI_ARTICLES = 6_800_000
BUDGET_GB = 24
# The build's defaults: half the articles held out; at most 200,000 train, 10,000 test.
HOLDOUT, MAX_TRAIN, MAX_TEST = 0.5, 200_000, 10_000
T = TypeVar("T")
# Share of enwiki's dump the capped passes read before they have their articles.
READ_SHARE = {
    "training rows": min(1.0, MAX_TRAIN / (1 - HOLDOUT) / ENWIKI_ARTICLES),
    "backtest": min(1.0, MAX_TEST / HOLDOUT / ENWIKI_ARTICLES),
}

_PAGE = re.compile(r"<page>.*?</page>\s*", re.S)
_TITLE = re.compile(r"<title>([^<]*)</title>")
_REDIRECT = re.compile(r'<redirect title="([^"]*)"')
_ID = re.compile(r"<id>(\d+)</id>")
# [[target]], [[target|anchor]], [[target#section|anchor]]: the target group is renamed.
_LINK = re.compile(r"\[\[([^\[\]|#:]+)(?=[\]|#])")


def excerpt() -> tuple[str, list[str], str]:
    """The excerpt's header, pages and footer (XML text)."""
    with zipfile.ZipFile(gensim_wheel()) as wheel:
        xml = bz2.decompress(wheel.read(DUMP)).decode("utf-8")
    first = xml.index("<page>")
    pages = _PAGE.findall(xml)
    last = xml.rindex("</page>") + len("</page>")
    return xml[:first], pages, xml[last:]


def renamed(page: str, copy: int) -> str:
    """``page`` as copy number ``copy``: titles and link targets suffixed, ids offset."""
    if copy == 0:
        return page
    suffix = f" v{copy}"

    def target(m: re.Match[str]) -> str:
        name = m.group(1)
        return f"[[{name.rstrip()}{suffix}" if name.strip() else m.group(0)

    page = _TITLE.sub(lambda m: f"<title>{m.group(1)}{suffix}</title>", page, count=1)
    page = _REDIRECT.sub(lambda m: f'<redirect title="{m.group(1)}{suffix}"', page, count=1)
    page = _ID.sub(lambda m: f"<id>{int(m.group(1)) + copy * 100_000_000}</id>", page)
    return _LINK.sub(target, page)


def generate(path: Path, megabytes: float) -> tuple[int, float]:
    """Writes an enwiki-shaped dump of about ``megabytes`` MB; returns (copies, MB)."""
    header, pages, footer = excerpt()
    goal = int(megabytes * 1e6)
    written, copy = 0, 0
    with open(path, "w", encoding="utf-8") as out:
        written += out.write(header)
        while written < goal:
            for page in pages:
                written += len(renamed(page, copy).encode("utf-8"))
                out.write(renamed(page, copy))
            copy += 1
        out.write(footer)
    return copy, path.stat().st_size / 1e6


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def measure(name: str, run: Callable[[], T]) -> T:
    """Runs one pass and prints its CPU time and peak RSS as a JSON line."""
    _reset_peak()
    before = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter()
    result = run()
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    record = {
        "pass": name,
        "cpu_s": round(cpu, 3),
        "wall_s": round(time.perf_counter() - wall, 3),
        "peak_rss_mb": round(_rss_kb("VmHWM") / 1024, 1),
        "rss_after_mb": round(_rss_kb("VmRSS") / 1024, 1),
    }
    print(json.dumps(record), flush=True)
    return result


def table_passes(dump: Path, out_dir: Path) -> None:
    """Scan, vectors, training rows, training and writing of a build of ``dump``."""
    from wikisuggest import _native
    from wikisuggest.build import EMBEDDING_DIM, train_model

    args = (str(dump), "enwiki", "en", 0.065, 2, True, None)
    build = measure("scan", lambda: _native.NativeDatasetBuild(*args))
    print(json.dumps({"stats": dict(build.stats())}), flush=True)
    measure("vectors", lambda: build.set_link_graph_vectors(EMBEDDING_DIM, 7))
    features, labels, articles, _ = measure(
        "training rows", lambda: build.training_rows(0.5, MAX_TRAIN, MAX_TEST)
    )
    rows = {"rows": len(labels), "articles": articles, "feature_bytes": len(features)}
    print(json.dumps({"training": rows}), flush=True)
    model_json, _ = measure("train", lambda: train_model(features, labels, seed=7))
    features = labels = b""
    measure("write", lambda: build.write(str(out_dir), model_json))


def child(dump: Path, out_dir: Path) -> None:
    """Runs each pass of a build of ``dump`` and prints one JSON line per pass."""
    from wikisuggest import _native

    table_passes(dump, out_dir)
    measure(
        "backtest",
        lambda: _native.backtest_dataset(
            str(dump), str(out_dir), "enwiki", "en", [0.5], HOLDOUT, MAX_TEST
        ),
    )


def run_size(megabytes: float, work: Path) -> dict[str, object]:
    with tempfile.TemporaryDirectory(dir=work, prefix="build-scale-") as tmp:
        dump = Path(tmp) / "enwiki-shaped.xml"
        copies, size = generate(dump, megabytes)
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(dump), str(Path(tmp) / "out")],
            check=True,
            capture_output=True,
            text=True,
        )
    passes, stats, training = [], {}, {}
    for line in proc.stdout.splitlines():
        record = json.loads(line)
        if "stats" in record:
            stats = record["stats"]
        elif "training" in record:
            training = record["training"]
        else:
            passes.append(record)
    return {"mb": size, "copies": copies, "stats": stats, "training": training, "passes": passes}


def report(runs: list[dict[str, object]]) -> None:
    for run in runs:
        s = run["stats"]
        assert isinstance(s, dict)
        print(
            f"\n{run['mb']:.0f} MB of XML ({run['copies']} copies): {s['articles']:,} articles, "
            f"{s['pageids']:,} titles, {s['link_anchors']:,} link anchors, "
            f"{s['anchors']:,} anchors kept, {s['anchor_targets']:,} pairs, {s['links']:,} links"
        )
        print(f"  {'pass':14}{'CPU s':>9}{'wall s':>9}{'CPU s/MB':>10}{'peak RSS MB':>13}")
        for p in run["passes"]:  # type: ignore[attr-defined]
            print(
                f"  {p['pass']:14}{p['cpu_s']:9.1f}{p['wall_s']:9.1f}"
                f"{p['cpu_s'] / run['mb']:10.3f}{p['peak_rss_mb']:13.0f}"  # type: ignore[operator]
            )
    small, large = runs[0], runs[-1]
    fs, fl = enwiki_fraction(small), enwiki_fraction(large)
    print(
        f"\nextrapolated to enwiki ({ENWIKI_XML_MB / 1000:.0f} GB XML, "
        f"{ENWIKI_TITLES / 1e6:.0f} M titles, {ENWIKI_ANCHORS / 1e6:.0f} M anchors), "
        f"from {small['mb']:.0f} MB ({fs:.2%} of enwiki) and {large['mb']:.0f} MB ({fl:.2%}):"
    )
    print(f"  {'pass':14}{'CPU h':>9}{'peak GB':>10}")
    total_cpu, worst = 0.0, 0.0
    for ps, pl in zip(small["passes"], large["passes"], strict=True):  # type: ignore[call-overload]
        cpu_h = pl["cpu_s"] / 3600 * cpu_scale(pl["pass"], large)  # type: ignore[operator]
        slope = (pl["peak_rss_mb"] - ps["peak_rss_mb"]) / (fl - fs) if fl != fs else 0.0
        peak_gb = (pl["peak_rss_mb"] + slope * (1.0 - fl)) / 1000
        total_cpu += cpu_h
        worst = max(worst, peak_gb)
        print(f"  {pl['pass']:14}{cpu_h:9.2f}{peak_gb:10.1f}")
    verdict = "fits" if worst <= BUDGET_GB else "does not fit"
    print(f"  {'all passes':14}{total_cpu:9.2f}{worst:10.1f}  ({verdict} in {BUDGET_GB} GB)")
    tr = large["training"]
    assert isinstance(tr, dict)
    per_article = tr["feature_bytes"] / max(1, tr["articles"])
    print(
        f"  training rows: {tr['rows']:,} rows from {tr['articles']:,} articles here; at the "
        f"{MAX_TRAIN:,}-article cap the feature matrix alone is "
        f"{per_article * MAX_TRAIN / 1e9:.1f} GB (float32), before XGBoost's copies"
    )


def cpu_scale(name: str, run: dict[str, object]) -> float:
    """By how much a pass's CPU grows from ``run`` to enwiki.

    Passes that read the dump grow with the XML they read (the capped ones stop after their
    articles); passes over the tables grow with the tables; training grows with its rows.
    """
    mb = run["mb"]
    assert isinstance(mb, float)
    if name in ("vectors", "write"):
        return 1 / enwiki_fraction(run)
    if name == "train":
        tr = run["training"]
        assert isinstance(tr, dict)
        return MAX_TRAIN / max(1, tr["articles"])
    return ENWIKI_XML_MB / mb * READ_SHARE.get(name, 1.0)


def enwiki_fraction(run: dict[str, object]) -> float:
    """How much of enwiki a run's tables are: the larger of its title and anchor shares.

    Memory grows with the tables, and the generated dump has fewer anchors per title than
    enwiki, so scaling by whichever share is smaller at enwiki size would understate it.
    """
    s = run["stats"]
    assert isinstance(s, dict)
    return max(s["pageids"] / ENWIKI_TITLES, s["link_anchors"] / ENWIKI_ANCHORS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="512,1024", help="dump sizes in MB of XML, comma-separated"
    )
    parser.add_argument(
        "--work-dir", type=Path, default=Path(__file__).resolve().parent.parent / "target"
    )
    parser.add_argument("--json", type=Path, help="also save the raw measurements here")
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return 0
    sizes = sorted(float(s) for s in args.sizes.split(","))
    args.work_dir.mkdir(parents=True, exist_ok=True)
    print(f"builder passes on generated enwiki-shaped dumps; {os.cpu_count()} cores")
    runs = [run_size(mb, args.work_dir) for mb in sizes]
    report(runs)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
