"""Ctrl-C during each long step of a dataset build (the title vectors, from the link graph or
from word vectors, and the training rows) ends the wait at once: every step runs on a
thread of its own that the caller waits for interruptibly, and an interrupted step that is
still running makes the next step say so instead of waiting for it.

Each case runs in its own process: the step once to measure it, then again with SIGINT
sent a quarter of the way through."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import json, os, signal, struct, sys, threading, time
from pathlib import Path

import wikisuggest
from wikisuggest._native import NativeDatasetBuild
from wikisuggest.engine.dump import write_dump

step, pages_count, dim, folder = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
words = [f"word{i}" for i in range(50)]
pages = [
    (
        f"Topic {i}",
        " ".join(
            f"[[Topic {(i * 7 + k) % pages_count}|{words[k % 50]} {k}]] text {words[(i + k) % 50]}."
            for k in range(30)
        ),
    )
    for i in range(pages_count)
]
dump = write_dump(folder / "xxwiki-pages-articles.xml", pages)
scan = NativeDatasetBuild(str(dump), "xxwiki", "en", 0.0, 1, True, None)
if step == "training_rows":
    scan.set_link_graph_vectors(dim, 1)


def word_vectors(dim):
    return (["topic", *words], dim, struct.pack("<f", 0.5) * (51 * dim))


vectors = word_vectors(dim)


def run():
    if step == "link_graph":
        scan.set_link_graph_vectors(dim, 1)
    elif step == "word_vectors":
        scan.set_word_vectors(*vectors)
    else:
        scan.training_rows(0.0, 10**9, 10**9)


# The step is measured, and made larger until it takes long enough to be interrupted well
# inside it (an optimised build is many times faster than a debug one).
while True:
    started = time.perf_counter()
    run()
    whole = time.perf_counter() - started
    if whole >= 1.0 or step == "training_rows" or dim >= 1 << 22:
        break
    dim *= 4
    vectors = word_vectors(dim)
threading.Timer(whole / 4, os.kill, (os.getpid(), signal.SIGINT)).start()
started = time.perf_counter()
try:
    run()
    outcome = "finished"
except KeyboardInterrupt:
    outcome = "interrupted"
waited = time.perf_counter() - started
try:
    scan.stats()
    busy = None
except wikisuggest.WikisuggestError as err:
    busy = str(err)
print(json.dumps({"whole": whole, "waited": waited, "outcome": outcome, "busy": busy}))
"""

#: Sizes that make each step take a second or more in a debug build (the script grows the
#: vectors' dimension where an optimised build is faster).
CASES = {
    "link_graph": (300, 2000),
    "word_vectors": (300, 60000),
    "training_rows": (60, 64),
}


@pytest.mark.parametrize("step", sorted(CASES))
def test_ctrl_c_ends_the_wait_for_each_build_step(step: str, tmp_path: Path) -> None:
    pages, dim = CASES[step]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, step, str(pages), str(dim), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["outcome"] == "interrupted", seen
    # The wait ended well before the step would have (it goes on, unseen, on its thread).
    assert seen["waited"] < seen["whole"] * 0.75, seen
    assert seen["busy"] is not None and "busy" in seen["busy"], seen
