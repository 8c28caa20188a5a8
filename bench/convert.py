"""Conversion benchmark: time and peak memory of converting enwiki-size published files.

The input is the benchmarks' synthetic enwiki-size tables (the shipped sample's tables plus
filler up to 7 M titles of which 6 M articles with 50-d vectors, 15 M anchors; see
``crates/wikisuggest-engine/benches/common/enwiki_tables.rs``) written in the published
formats (``lr_enwiki_*.sql.gz`` with pickled values, the model, ``.checksum`` files) by
``cargo run -p wikisuggest-build --example enwiki_published``, once per format
under ``target/bench-convert/``.

Each measurement runs in a fresh process and reports wall and CPU seconds, the peak
resident memory (``VmHWM``, interpreter included) and the largest disk use of the output
folder (work files and native file, sampled every half second):

* ``streamed``: ``wikisuggest.datasets.convert`` (the streamed converter), at an eighth of
  enwiki and at full size: its peak should not grow with the size beyond its stated bound
  (the sort budget, or the largest hash index: 8 bytes per slot, 11.4 bytes per anchor and
  anchor word prefix).
* ``in-memory`` (baseline): the published folder read into memory and converted there, as
  ``LinkEngine.open`` does with a published folder, at an eighth of enwiki only (at full
  size it needs more memory than a laptop has); its full-size peak is extrapolated linearly.

Run ``bash bench/run convert`` (``--divisors 8,1`` by default; ``--divisors 64`` is quick).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "bench-convert"

CHILD = r"""
import json, os, resource, sys, time
from pathlib import Path
mode, src, out = sys.argv[1:4]
t0, c0 = time.perf_counter(), time.process_time()
if mode == "streamed":
    from wikisuggest._native import convert_dataset
    path = Path(convert_dataset(src, "enwiki", out))
    native = path.stat().st_size
else:
    from wikisuggest._native import NativeEngine, __version__
    engine = NativeEngine.open(src, "enwiki", __version__, False)
    native = 0
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
status = Path("/proc/self/status").read_text().splitlines()
peak = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
print(json.dumps({"wall": wall, "cpu": cpu, "peak_kib": peak, "native": native}))
"""


def published(divisor: int) -> Path:
    """The published files at ``1/divisor`` of enwiki's size, generated once."""
    folder = WORK / f"enwiki-d{divisor}"
    if not (folder / "enwiki.linkmodel.json.checksum").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        tmp = WORK / f"enwiki-d{divisor}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(
            [
                # The development profile (the engine crates are optimised in it): no
                # second build of everything for a generator whose speed does not matter.
                *("cargo", "run", "--quiet", "-p", "wikisuggest-build"),
                *("--example", "enwiki_published", "--", str(tmp), str(divisor)),
            ],
            cwd=ROOT,
            check=True,
        )
        tmp.rename(folder)
    return folder


def disk_use(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            total += path.stat().st_size if path.is_file() else 0
    return total


def measure(mode: str, src: Path) -> dict[str, float]:
    """One conversion in a child process; the largest disk use of its output folder (work
    files and output) is sampled every half second."""
    with tempfile.TemporaryDirectory(dir=WORK, prefix="out-") as out:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, mode, str(src), out],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        disk = 0
        while child.poll() is None:
            disk = max(disk, disk_use(Path(out)))
            time.sleep(0.5)
        stdout, stderr = child.communicate()
        if child.returncode:
            raise RuntimeError(f"{mode} conversion failed: {stderr}")
        return {**json.loads(stdout.strip().splitlines()[-1]), "disk": disk}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--divisors", default="8,1", help="fractions of enwiki to measure")
    args = parser.parse_args()
    divisors = [int(d) for d in args.divisors.split(",")]
    WORK.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(f"conversion of enwiki-shaped published files; commit {commit}; {os.cpu_count()} cores")
    print(
        f"{'size':>6} {'mode':>10} {'sources MB':>10} {'native MB':>9} {'wall s':>7} "
        f"{'CPU s':>7} {'peak MB':>8} {'disk MB':>8}"
    )
    rows = {}
    for divisor in divisors:
        src = published(divisor)
        sources = sum(p.stat().st_size for p in src.iterdir() if not p.name.endswith(".checksum"))
        modes = ["streamed"] + (["in-memory"] if divisor >= 8 else [])
        for mode in modes:
            r = measure(mode, src)
            rows[(divisor, mode)] = r
            size = "full" if divisor == 1 else f"1/{divisor}"
            native = f"{r['native'] / 1e6:9.0f}" if r["native"] else f"{'-':>9}"
            print(
                f"{size:>6} {mode:>10} {sources / 1e6:10.0f} {native} {r['wall']:7.1f} "
                f"{r['cpu']:7.1f} {r['peak_kib'] / 1024:8.0f} {r['disk'] / 1e6:8.0f}"
            )
    small = max(divisors)
    if (small, "in-memory") in rows and (small, "streamed") in rows:
        base, ours = rows[(small, "in-memory")], rows[(small, "streamed")]
        print(
            f"at 1/{small}, streamed / in-memory (baseline): peak memory "
            f"{ours['peak_kib'] / base['peak_kib']:.2f}, wall {ours['wall'] / base['wall']:.2f}, "
            f"CPU {ours['cpu'] / base['cpu']:.2f}; in-memory peak extrapolated to full size: "
            f"{base['peak_kib'] * small / 1024 / 1024:.1f} GB"
        )
    if (1, "streamed") in rows and (small, "streamed") in rows and small != 1:
        full, part = rows[(1, "streamed")], rows[(small, "streamed")]
        print(
            f"streamed, full size / 1/{small}: peak memory "
            f"{full['peak_kib'] / part['peak_kib']:.2f}, wall {full['wall'] / part['wall']:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
