"""Dataset builder at scale: CPU per MB and peak memory per pass, extrapolated to enwiki.

The input is an enwiki-shaped dump generated from the real enwiki excerpt in gensim 4.4.0's
wheel (206 pages, 6 MB of XML; the wheel the test suite downloads into
``target/reference-fixtures/downloads``). The excerpt is written again and again, each copy
with its own titles: page titles, redirect targets, article-link targets and the anchor
texts of piped links (``[[target|anchor]]``) get a copy suffix (`` v17``) and page ids an
offset, so the titles, anchors and link graph grow with the copies instead of repeating, and
each anchor keeps the few targets it has in the excerpt (an anchor shared by every copy
would gain a target per copy, and the training rows per article would grow with the
copies). Plain text is not renamed: its mentions of an anchor count as unlinked mentions of
the first copy's anchor, which makes that anchor's link probability fall as copies are
added, while the later copies' anchors occur only as links; the anchors kept and the
training rows per article stay about constant across sizes. Links to other namespaces are
kept as they are. Most link targets of an excerpt lie outside it, so the build treats them
as articles (``keep_missing_targets``), as a complete dump would have them. The largest dump
is also written as Wikimedia's multistream ``.xml.bz2`` (100 pages per bzip2 stream), and
the scan is measured again from it: what decompression adds.

Each builder pass runs in a child process, which resets its peak-RSS counter
(``/proc/self/clear_refs``) before every pass and reads ``VmHWM`` after it; CPU is the
process's user + system time (all threads). Passes: ``scan`` (catalogue and counts: two
reads of the dump), ``scan .bz2`` (the same from the ``.bz2``, largest size only),
``vectors`` (link-graph embedding), ``training rows`` (a third read), ``train`` (XGBoost,
one thread), ``write`` (published files and native file), ``backtest`` (a fourth read).

Extrapolation to enwiki (100 GB of XML, see ``ENWIKI_XML_MB``; 7 M titles, 15 M anchors):
CPU grows with the XML a pass reads, with the tables (vectors, writing) or with the training
rows (training); the peak memory of a pass is fitted as a straight line between two dump
sizes (``--sizes``) against the dump's share of enwiki (the smaller of its title and anchor
shares) and read at the whole of enwiki. Training rows and backtest stop at 200,000 and
10,000 articles: their CPU is scaled to the share of the dump they read. The two passes
that hold the training rows (``training rows`` and ``train``) grow with the rows, not the
tables: their enwiki peak is the tables (the memory held when the pass starts,
extrapolated) plus what the pass added per row here times the rows of 200,000 articles.

Run ``bash bench/run build`` (default: 256 MB and 1 GB of XML; ``--sizes 32,64`` measures
smaller dumps). The generated dumps are written under ``--work-dir`` and removed afterwards.
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
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

from articles import DUMP, gensim_wheel

# enwiki's pages-articles dumps of 2024-2025 are 22-24 GB of bz2 that expand about 4x;
# 100 GB of XML rounds that up, so time is overstated rather than understated.
ENWIKI_XML_MB = 100_000
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
# [[target]], [[target|anchor]], [[target#section|anchor]]: the target and the anchor are
# renamed, the section is kept.
_LINK = re.compile(r"\[\[([^\[\]|#:]+)(#[^\[\]|]*)?(?:\|([^\[\]]*))?\]\]")


def excerpt() -> tuple[str, list[str], str]:
    """The excerpt's header, pages and footer (XML text)."""
    with zipfile.ZipFile(gensim_wheel()) as wheel:
        xml = bz2.decompress(wheel.read(DUMP)).decode("utf-8")
    first = xml.index("<page>")
    pages = _PAGE.findall(xml)
    last = xml.rindex("</page>") + len("</page>")
    return xml[:first], pages, xml[last:]


def renamed(page: str, copy: int) -> str:
    """``page`` as copy number ``copy``: titles, link targets and anchors suffixed, ids offset."""
    if copy == 0:
        return page
    suffix = f" v{copy}"

    def link(m: re.Match[str]) -> str:
        name, section, anchor = m.group(1), m.group(2) or "", m.group(3)
        if not name.strip():
            return m.group(0)
        # A piped anchor is renamed too: left as it is, it would be one anchor with a
        # target in every copy, and its candidates (training rows) would grow with them.
        label = (
            f"|{anchor.rstrip()}{suffix}"
            if anchor and anchor.strip()
            else ("" if anchor is None else f"|{anchor}")
        )
        return f"[[{name.rstrip()}{suffix}{section}{label}]]"

    page = _TITLE.sub(lambda m: f"<title>{m.group(1)}{suffix}</title>", page, count=1)
    page = _REDIRECT.sub(lambda m: f'<redirect title="{m.group(1)}{suffix}"', page, count=1)
    page = _ID.sub(lambda m: f"<id>{int(m.group(1)) + copy * 100_000_000}</id>", page)
    return _LINK.sub(link, page)


def generate(path: Path, megabytes: float, bz2_path: Path | None = None) -> tuple[int, float]:
    """Writes an enwiki-shaped dump of about ``megabytes`` MB; returns (copies, MB).

    With ``bz2_path``, the same XML is also written there as multistream bzip2 (the
    header, then 100 pages per stream, then the footer), as Wikimedia publishes it.
    """
    header, pages, footer = excerpt()
    goal = int(megabytes * 1e6)
    written, copy = 0, 0
    with contextlib.ExitStack() as files:
        out = files.enter_context(open(path, "w", encoding="utf-8"))
        packed = files.enter_context(open(bz2_path, "wb")) if bz2_path else None
        written += out.write(header)
        stream: list[str] = [header]
        while written < goal:
            for page in pages:
                page = renamed(page, copy)
                written += len(page.encode("utf-8"))
                out.write(page)
                stream.append(page)
                if packed and len(stream) >= 100:
                    packed.write(bz2.compress("".join(stream).encode("utf-8")))
                    stream = []
            copy += 1
        out.write(footer)
        if packed:
            packed.write(bz2.compress("".join([*stream, footer]).encode("utf-8")))
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
    rss_before = _rss_kb("VmRSS")
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
        "rss_before_mb": round(rss_before / 1024, 1),
        "peak_rss_mb": round(_rss_kb("VmHWM") / 1024, 1),
        "rss_after_mb": round(_rss_kb("VmRSS") / 1024, 1),
    }
    print(json.dumps(record), flush=True)
    return result


def table_passes(dump: Path, out_dir: Path, packed: Path | None) -> None:
    """Scan, vectors, training rows, training and writing of a build of ``dump``."""
    from wikisuggest import _native
    from wikisuggest.datasets.build import EMBEDDING_DIM, train_model

    if packed:
        args = (str(packed), "enwiki", "en", 0.065, 2, True, None)
        measure("scan .bz2", lambda: _native.NativeDatasetBuild(*args).stats())
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


def child(dump: Path, out_dir: Path, packed: Path | None) -> None:
    """Runs each pass of a build of ``dump`` and prints one JSON line per pass."""
    from wikisuggest import _native

    table_passes(dump, out_dir, packed)
    measure(
        "backtest",
        lambda: _native.backtest_dataset(
            str(dump), str(out_dir), "enwiki", "en", [0.5], HOLDOUT, MAX_TEST
        ),
    )


def run_size(megabytes: float, work: Path, with_bz2: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory(dir=work, prefix="build-scale-") as tmp:
        dump = Path(tmp) / "enwiki-shaped.xml"
        packed = Path(tmp) / "enwiki-shaped.xml.bz2"
        copies, size = generate(dump, megabytes, packed if with_bz2 else None)
        bz2_mb = packed.stat().st_size / 1e6 if with_bz2 else None
        extra = ["--bz2", str(packed)] if with_bz2 else []
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(dump), str(Path(tmp) / "out"), *extra],
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
    return {
        "mb": size,
        "bz2_mb": bz2_mb,
        "copies": copies,
        "stats": stats,
        "training": training,
        "passes": passes,
    }


def _row(run: dict[str, object], name: str) -> dict[str, float]:
    for p in run["passes"]:  # type: ignore[attr-defined]
        if p["pass"] == name:
            return p  # type: ignore[no-any-return]
    raise KeyError(name)


def report(runs: list[dict[str, object]]) -> None:
    for run in runs:
        s = run["stats"]
        assert isinstance(s, dict)
        packed = f", {run['bz2_mb']:.0f} MB as .bz2" if run.get("bz2_mb") else ""
        print(
            f"\n{run['mb']:.0f} MB of XML{packed} ({run['copies']} copies): "
            f"{s['articles']:,} articles, {s['pageids']:,} titles, "
            f"{s['link_anchors']:,} link anchors, {s['anchors']:,} anchors kept, "
            f"{s['anchor_targets']:,} pairs, {s['links']:,} links; training rows: "
            f"{run['training']}"
        )
        print(
            f"  {'pass':14}{'CPU s':>9}{'wall s':>9}{'CPU s/MB':>10}"
            f"{'RSS before MB':>15}{'peak RSS MB':>13}"
        )
        for p in run["passes"]:  # type: ignore[attr-defined]
            print(
                f"  {p['pass']:14}{p['cpu_s']:9.1f}{p['wall_s']:9.1f}"
                f"{p['cpu_s'] / run['mb']:10.3f}"  # type: ignore[operator]
                f"{p['rss_before_mb']:15.0f}{p['peak_rss_mb']:13.0f}"
            )
    small, large = runs[0], runs[-1]
    fs, fl = enwiki_fraction(small), enwiki_fraction(large)

    def at_enwiki(name: str, key: str) -> float:
        """``key`` of pass ``name`` read off the line through the two sizes, in MB."""
        ps, pl = _row(small, name), _row(large, name)
        slope = (pl[key] - ps[key]) / (fl - fs) if fl != fs else 0.0
        return pl[key] + slope * (1.0 - fl)

    tr = large["training"]
    assert isinstance(tr, dict)
    rows_at_cap = tr["rows"] / max(1, tr["articles"]) * MAX_TRAIN
    tables_mb = at_enwiki("training rows", "rss_before_mb")
    print(
        f"\nextrapolated to enwiki ({ENWIKI_XML_MB / 1000:.0f} GB XML, "
        f"{ENWIKI_TITLES / 1e6:.0f} M titles, {ENWIKI_ANCHORS / 1e6:.0f} M anchors), "
        f"from {small['mb']:.0f} MB ({fs:.2%} of enwiki) and {large['mb']:.0f} MB ({fl:.2%}); "
        f"training rows at the {MAX_TRAIN:,}-article cap: {rows_at_cap / 1e6:.0f} M "
        f"({rows_at_cap * 28 / 1e9:.1f} GB of float32 features):"
    )
    print(f"  {'pass':14}{'CPU h':>9}{'peak GB':>10}")
    total_cpu, worst = 0.0, 0.0
    for pl in large["passes"]:  # type: ignore[attr-defined]
        name = pl["pass"]
        cpu_h = pl["cpu_s"] / 3600 * cpu_scale(name, large)
        if name in ("training rows", "train"):
            peak_gb = (tables_mb + row_growth(small, large, name, rows_at_cap)) / 1000
        else:
            peak_gb = at_enwiki("scan" if name == "scan .bz2" else name, "peak_rss_mb") / 1000
        if name != "scan .bz2":
            total_cpu += cpu_h
        worst = max(worst, peak_gb)
        print(f"  {name:14}{cpu_h:9.2f}{peak_gb:10.1f}")
    verdict = "fits" if worst <= BUDGET_GB else "does not fit"
    print(f"  {'all (from XML)':14}{total_cpu:9.2f}{worst:10.1f}  ({verdict} in {BUDGET_GB} GB)")
    if any(p["pass"] == "scan .bz2" for p in large["passes"]):  # type: ignore[attr-defined]
        from_bz2(large, total_cpu)


def row_growth(small: dict[str, object], large: dict[str, object], name: str, rows: float) -> float:
    """What pass ``name`` adds to the tables' memory with ``rows`` training rows, in MB.

    The pass's growth over the memory held before the training rows (fixed costs such as
    XGBoost's own, and the float rows, which ``train`` gets from its caller) is fitted as a
    straight line in the rows between the two sizes: a ratio at one size would charge the
    fixed costs to every row.
    """

    def growth(run: dict[str, object]) -> tuple[float, float]:
        tr = run["training"]
        assert isinstance(tr, dict)
        base = _row(run, "training rows")["rss_before_mb"]
        return float(tr["rows"]), _row(run, name)["peak_rss_mb"] - base

    (rs, gs), (rl, gl) = growth(small), growth(large)
    slope = (gl - gs) / (rl - rs) if rl != rs else gl / max(1.0, rl)
    return gl + slope * (rows - rl)


def from_bz2(run: dict[str, object], xml_cpu_h: float) -> None:
    """CPU and wall time on two cores when every read decompresses the ``.bz2``."""
    mb = run["mb"]
    assert isinstance(mb, float)
    plain, packed = _row(run, "scan"), _row(run, "scan .bz2")
    # The scan reads the dump twice.
    parse_per_mb = plain["cpu_s"] / (2 * mb)
    decode_per_mb = (packed["cpu_s"] - plain["cpu_s"]) / (2 * mb)
    reads_mb = ENWIKI_XML_MB * (2 + READ_SHARE["training rows"] + READ_SHARE["backtest"])
    decode_h = decode_per_mb * reads_mb / 3600
    # Decoding runs on its own thread, next to the parser: on two idle cores a read takes
    # as long as the slower of the two. The other passes are single-threaded.
    read_cpu_h = sum(
        _row(run, n)["cpu_s"] / 3600 * cpu_scale(n, run) for n in ("scan", "training rows")
    ) + _row(run, "backtest")["cpu_s"] / 3600 * cpu_scale("backtest", run)
    overlap_h = min(read_cpu_h, decode_h)
    print(
        f"  from .bz2 ({mb / run['bz2_mb']:.1f}x compression here): decoding costs "  # type: ignore[operator]
        f"{decode_per_mb:.4f} CPU s per MB of XML against {parse_per_mb:.4f} s of scanning; "
        f"{decode_h:.2f} CPU h over {reads_mb / ENWIKI_XML_MB:.2f} reads of enwiki; all "
        f"passes {xml_cpu_h + decode_h:.2f} CPU h, about {xml_cpu_h + decode_h - overlap_h:.2f} h "
        f"on two idle cores (decoding overlaps the reads)"
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
    """How much of enwiki a run's tables are: the smaller of its title and anchor shares.

    Memory grows with the tables, and the generated dump's titles and anchors are different
    shares of enwiki's (more titles per anchor); reading the line at the smaller share
    extrapolates further, so the figure errs towards more memory, not less.
    """
    s = run["stats"]
    assert isinstance(s, dict)
    return min(s["pageids"] / ENWIKI_TITLES, s["link_anchors"] / ENWIKI_ANCHORS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="256,1024", help="dump sizes in MB of XML, comma-separated"
    )
    parser.add_argument(
        "--no-bz2", action="store_true", help="skip the .bz2 copy of the largest dump"
    )
    parser.add_argument(
        "--work-dir", type=Path, default=Path(__file__).resolve().parent.parent / "target"
    )
    parser.add_argument("--json", type=Path, help="also save the raw measurements here")
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--bz2", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child, args.bz2)
        return 0
    sizes = sorted(float(s) for s in args.sizes.split(","))
    args.work_dir.mkdir(parents=True, exist_ok=True)
    print(f"builder passes on generated enwiki-shaped dumps; {os.cpu_count()} cores")
    runs = [run_size(mb, args.work_dir, not args.no_bz2 and mb == sizes[-1]) for mb in sizes]
    report(runs)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
