"""The local link engine through the Python API: parity with the production engine, batches,
errors, threads, asyncio, interruption, dataset conversion and the demo command."""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support.paths import PARITY

import wikisuggest
from wikisuggest import LinkEngine
from wikisuggest.engine import Page

DATASETS = PARITY / "datasets" / "enwiki"
# The parity set's "exhaustive" run used -1 ("no limit" upstream); the engine, like the client,
# refuses negative values and spells "no limit" as 0.
CONFIGS = {"api": (0.5, 15), "exhaustive": (0.0, 0)}


def manifest() -> list[dict[str, Any]]:
    lines = (PARITY / "articles" / "manifest.tsv").read_text("utf-8").splitlines()
    header = lines[0].split("\t")
    rows = [dict(zip(header, line.split("\t"), strict=True)) for line in lines[1:]]
    return [
        {
            "name": Path(row["file"]).stem,
            "page_title": row["page_title"],
            "pageid": int(row["pageid"]),
            "revid": int(row["revid"]),
            "wikitext": (PARITY / "articles" / row["file"]).read_text("utf-8"),
        }
        for row in rows
    ]


ARTICLES = manifest()


def expected(config: str, name: str) -> dict[str, Any]:
    path = PARITY / "expected" / config / "enwiki" / f"{name}.json"
    return json.loads(path.read_text("utf-8"))  # type: ignore[no-any-return]


def page(article: dict[str, Any]) -> dict[str, Any]:
    return {k: article[k] for k in ("wikitext", "page_title", "pageid", "revid")}


def differences(got: wikisuggest.LinkRecommendationSet, want: dict[str, Any]) -> list[str]:
    """Compared as the parity set prescribes: links in order, every field exact, score as
    float32 (Python floats of widened float32 values compare exactly)."""
    problems = []
    if got.links_count != want["links_count"] or len(got.links) != len(want["links"]):
        problems.append(f"links_count {got.links_count} != {want['links_count']}")
    for i, (link, w) in enumerate(zip(got.links, want["links"], strict=False)):
        ours = {k: getattr(link, k) for k in w}
        if ours != w:
            problems.append(f"link {i}: {ours} != {w}")
    for key in ("page_title", "pageid", "revid"):
        if getattr(got, key) != want[key]:
            problems.append(f"{key}: {getattr(got, key)!r} != {want[key]!r}")
    if got.meta is None or got.meta.format_version != 1:
        problems.append(f"meta: {got.meta}")
    return problems


@pytest.fixture(scope="module")
def engine() -> LinkEngine:
    return LinkEngine.open(DATASETS, "enwiki")


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_parity_on_every_article(engine: LinkEngine, config: str) -> None:
    threshold, maximum = CONFIGS[config]
    results = engine.recommend_many(
        [page(a) for a in ARTICLES], threshold=threshold, max_recommendations=maximum
    )
    assert len(results) == len(ARTICLES) == 71
    failures = {}
    for article, item in zip(ARTICLES, results, strict=True):
        problems = differences(item.unwrap(), expected(config, article["name"]))
        if problems:
            failures[article["name"]] = problems[:3]
    assert failures == {}


def test_recommend_equals_recommend_many_in_input_order(engine: LinkEngine) -> None:
    picked = [ARTICLES[i] for i in (30, 2, 30, 11, 0)]
    many = engine.recommend_many(
        [Page(a["wikitext"], a["page_title"]) for a in picked], workers=2, max_recommendations=0
    )
    assert [item.index for item in many] == list(range(5))
    for article, item in zip(picked, many, strict=True):
        single = engine.recommend(article["wikitext"], article["page_title"], max_recommendations=0)
        assert item.input == Page(article["wikitext"], article["page_title"])
        assert item.unwrap() == single
        assert single.page_title == article["page_title"]


def test_results_of_one_dataset_share_one_meta_record(engine: LinkEngine) -> None:
    # A batch keeps every result; the meta (five checksums) is the same for all of them.
    picked = [ARTICLES[i] for i in (0, 2, 11)]
    many = engine.recommend_many([Page(a["wikitext"], a["page_title"]) for a in picked])
    metas = [item.unwrap().meta for item in many]
    single = engine.recommend(picked[0]["wikitext"], picked[0]["page_title"]).meta
    assert metas[0] == single
    assert metas[0] is not None and metas[0].dataset_checksums is not None
    assert all(meta is metas[0] for meta in metas)


def test_result_is_the_client_dataclass(engine: LinkEngine) -> None:
    a = ARTICLES[0]
    result = engine.recommend(a["wikitext"], a["page_title"], pageid=5, revid=6)
    assert isinstance(result, wikisuggest.LinkRecommendationSet)
    assert all(isinstance(link, wikisuggest.LinkRecommendation) for link in result.links)
    assert (result.pageid, result.revid) == (5, 6)
    assert result.meta is not None and result.meta.application_version == wikisuggest.__version__
    sums = (DATASETS / "lr_enwiki_anchors.sql.gz.checksum").read_text().split()[0]
    assert result.meta.dataset_checksums is not None
    assert result.meta.dataset_checksums.anchors == sums
    # Round trip through the contract's JSON shape, as the HTTP client's results do.
    assert wikisuggest.LinkRecommendationSet.from_dict(result.to_dict()) == result


def test_per_page_errors_are_reported_in_place(engine: LinkEngine) -> None:
    good = page(ARTICLES[3])
    pages: list[Any] = [
        good,
        {"wikitext": 42, "page_title": "Numbers"},
        {"wikitext": "Some text.", "page_title": "Japanese", "language_code": "ja"},
        "not a page",
        {"wikitext": "x", "page_title": "X", "colour": "red"},
        good,
    ]
    results = engine.recommend_many(pages)
    assert [item.ok for item in results] == [True, False, True, False, False, True]
    assert isinstance(results[1].error, wikisuggest.WikitextError)
    assert isinstance(results[1].error, ValueError)
    assert isinstance(results[3].error, wikisuggest.InvalidParameter)
    assert isinstance(results[4].error, wikisuggest.InvalidParameter)
    assert results[0].result == results[5].result
    assert len(results.results) == 3 and len(results.errors) == 3


def test_single_call_errors(engine: LinkEngine) -> None:
    with pytest.raises(wikisuggest.WikitextError):
        engine.recommend(b"bytes", "Page")  # type: ignore[arg-type]
    with pytest.raises(wikisuggest.InvalidParameter):
        engine.recommend("Text.", "Page", time_budget=-1)
    with pytest.raises(wikisuggest.DatasetError):
        LinkEngine.open(PARITY, "enwiki")


def test_max_recommendations_and_sections(engine: LinkEngine) -> None:
    a = ARTICLES[30]
    full = engine.recommend(a["wikitext"], a["page_title"], threshold=0.0, max_recommendations=0)
    three = engine.recommend(a["wikitext"], a["page_title"], threshold=0.0, max_recommendations=3)
    assert len(full.links) > 3
    assert three.links == full.links[:3]
    no_lead = engine.recommend(
        a["wikitext"],
        a["page_title"],
        threshold=0.0,
        max_recommendations=0,
        sections_to_exclude=["%LEAD%"],
    )
    lead_end = a["wikitext"].index("\n==")
    assert all(link.wikitext_offset > lead_end for link in no_lead.links)
    assert any(link.wikitext_offset < lead_end for link in full.links)


def test_threads_share_one_engine(engine: LinkEngine) -> None:
    picked = ARTICLES[:12]
    with ThreadPoolExecutor(4) as pool:
        results = list(
            pool.map(lambda a: engine.recommend(a["wikitext"], a["page_title"], **_ids(a)), picked)
        )
    for article, result in zip(picked, results, strict=True):
        assert differences(result, expected("api", article["name"])) == []


def _ids(article: dict[str, Any]) -> dict[str, Any]:
    return {"pageid": article["pageid"], "revid": article["revid"]}


async def test_recommend_async(engine: LinkEngine) -> None:
    picked = ARTICLES[5:9]
    results = await asyncio.gather(
        *(engine.recommend_async(a["wikitext"], a["page_title"], **_ids(a)) for a in picked)
    )
    for article, result in zip(picked, results, strict=True):
        assert differences(result, expected("api", article["name"])) == []
    # Thai is tokenized with its SentencePiece model, not refused.
    thai = await engine.recommend_async("Text.", "Page", language_code="th")
    assert thai.links == ()


def test_awaited_pages_take_a_thread_per_core_not_per_page() -> None:
    """Hundreds of pages awaited at once wait their turn as futures: the engine runs at most
    one per core (each would otherwise take a thread of the blocking pool), and every page
    gets its answer."""
    code = f"""
import asyncio, json, os, pathlib, wikisuggest
folder = pathlib.Path({str(PARITY / "articles")!r})
rows = [line.split("\\t") for line in (folder / "manifest.tsv").read_text("utf-8").splitlines()[1:]]
pages = [((folder / row[0]).read_text("utf-8"), row[1]) for row in rows] * 4
engine = wikisuggest.LinkEngine.default()
peak = 0

async def watch():
    global peak
    while True:
        peak = max(peak, len(os.listdir("/proc/self/task")))
        await asyncio.sleep(0.002)

async def main():
    watcher = asyncio.create_task(watch())
    results = await asyncio.gather(*(engine.recommend_async(text, title) for text, title in pages))
    watcher.cancel()
    return [r.page_title for r in results] == [title for _, title in pages]

print(json.dumps([asyncio.run(main()), len(pages), peak, os.cpu_count()]))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    ok, n_pages, peak, cores = json.loads(out.strip().splitlines()[-1])
    assert ok and n_pages == 284
    # The interpreter, two I/O threads, the hand-over thread, and the engine's threads: about
    # one per core (a thread that finished its page is replaced before it is seen idle, the
    # more often the busier the machine: up to 11 on two cores under three busy loops), far
    # from one per page.
    assert peak <= 4 + 4 * cores + 4 < n_pages


def test_ctrl_c_during_recommend_many_keeps_finished_results(engine: LinkEngine) -> None:
    big = sorted(ARTICLES, key=lambda a: len(a["wikitext"]))[-20:]
    read = 0

    def pages() -> Iterator[dict[str, Any]]:
        nonlocal read
        for i in range(100):
            if i == 6:
                # Interrupt while the following pages run in native code.
                threading.Timer(0.05, _thread.interrupt_main).start()
            spec = page(big[i % len(big)])
            # Counted where no signal handler can run before the page is handed over.
            read += 1
            yield spec

    with pytest.raises(wikisuggest.BatchInterrupted) as caught:
        engine.recommend_many(pages(), workers=1, threshold=0.0, max_recommendations=0).wait()
    results = caught.value.results
    assert 0 < len(results.results) < 100
    # Every page read comes back: finished, or cancelled before it started.
    assert len(results) == read < 100
    assert [item.index for item in results] == list(range(len(results)))
    for item in results:
        if item.ok:
            assert item.unwrap() == engine.recommend(
                item.input["wikitext"],
                item.input["page_title"],
                pageid=item.input["pageid"],
                revid=item.input["revid"],
                threshold=0.0,
                max_recommendations=0,
            )
        else:
            assert isinstance(item.error, wikisuggest.Cancelled)


def _engine_call_workers() -> set[str]:
    """Thread ids of this process's per-caller workers of the engine (found by name)."""
    ids = set()
    for task in Path("/proc/self/task").iterdir():
        # A thread may end while the folder is listed.
        with contextlib.suppress(OSError):
            if (task / "comm").read_text("utf-8").strip() == "wikisuggest-cpu":
                ids.add(task.name)
    return ids


def _engine_call_threads() -> int:
    return len(_engine_call_workers())


def _worker_cpu_ticks() -> dict[str, int]:
    """CPU time (user, clock ticks) of each of the engine's per-caller workers, by thread id."""
    ticks = {}
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            if (task / "comm").read_text("utf-8").strip() == "wikisuggest-cpu":
                # Fields after the parenthesised name; user time is the 14th field.
                fields = (task / "stat").read_text("utf-8").rsplit(")", 1)[1].split()
                ticks[task.name] = int(fields[11])
    return ticks


def _interrupt_once_a_worker_computes() -> threading.Thread:
    """Ctrl-C for the main thread once some worker has used 50 ms more CPU than now: the
    page was handed over and runs."""
    start = _worker_cpu_ticks()

    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = _worker_cpu_ticks()
            if any(t - start.get(tid, 0) >= 5 for tid, t in now.items()):
                _thread.interrupt_main()
                return
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    return watcher


def _eventually(condition: Callable[[], bool], seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


#: Every parity article joined, twice: a page read whole takes far longer than a blocking
#: call's first try on the calling thread (a tenth of a second): 0.45 s in the test build on a
#: fast machine. The articles once take only 0.15 s there, and the pass reads the clock only at
#: some of its steps, so a first try could end with the whole answer.
LONG_PAGE = "\n".join(a["wikitext"] for a in ARTICLES) * 2


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads listed by /proc")
def test_short_pages_run_on_the_calling_thread_and_long_ones_on_its_one_worker(
    engine: LinkEngine,
) -> None:
    before = _engine_call_workers()
    seen: list[int] = []
    workers: list[set[str]] = []
    # The long page's whole answer, computed by a batch's workers.
    (whole,) = engine.recommend_many(
        [Page(LONG_PAGE, "Long")], threshold=0.0, max_recommendations=0
    ).results

    def calls() -> None:
        for article in ARTICLES[:8]:
            result = engine.recommend(**page(article))
            assert differences(result, expected("api", article["name"])) == []
            seen.append(_engine_call_threads())
        # A long page outlasts the first try and runs again on the thread's worker: its
        # answer is the whole one, not what the first try had found...
        for _ in range(3):
            long = engine.recommend(LONG_PAGE, "Long", threshold=0.0, max_recommendations=0)
            assert long == whole
            workers.append(_engine_call_workers() - before)

    thread = threading.Thread(target=calls)
    thread.start()
    thread.join()
    # ... short pages start no worker at all ...
    assert seen == [len(before)] * 8
    # ... long ones share the thread's one worker ...
    assert len(workers) == 3 and len(workers[0]) == 1
    assert workers[0] == workers[1] == workers[2]
    # ... which ends with the thread.
    assert _eventually(lambda: not _engine_call_workers() & workers[0])


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads listed by /proc")
def test_the_first_try_bound_is_set_for_the_process_by_its_environment_variable() -> None:
    code = """
import pathlib, wikisuggest
def workers():
    return sum(
        (task / "comm").read_text("utf-8").strip() == "wikisuggest-cpu"
        for task in pathlib.Path("/proc/self/task").iterdir()
    )
engine = wikisuggest.LinkEngine.default()
try:
    result = engine.recommend("A short page about [[Cats]].", "Short")
except wikisuggest.InvalidParameter as e:
    print("InvalidParameter", e.parameter)
else:
    print(result.page_title, workers())
"""

    def run(value: str | None) -> str:
        env = {k: v for k, v in os.environ.items() if k != "WIKISUGGEST_FIRST_TRY"}
        if value is not None:
            env["WIKISUGGEST_FIRST_TRY"] = value
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    # By default a short page ends on the calling thread; with 0 it is handed to a worker.
    assert run(None) == "Short 0"
    assert run("0.5") == "Short 0"
    assert run("0") == "Short 1"
    for bad in ("soon", "-1", "nan", "inf"):
        assert run(bad) == "InvalidParameter WIKISUGGEST_FIRST_TRY"


def test_a_time_budget_counts_from_the_first_try() -> None:
    # A first try of 2 s, then the worker: the call ends at its budget of 2.2 s, and what the
    # pass does before it next reads the clock (0.2-0.35 s on this 38 MB page in the test
    # build, idle or busy), not at 4.2 s and that. The page takes 6.6 s whole there, so a
    # machine three times faster still runs it past both bounds.
    code = f"""
import json, pathlib, time, wikisuggest
folder = pathlib.Path({str(PARITY / "articles")!r})
rows = [line.split("\\t") for line in (folder / "manifest.tsv").read_text("utf-8").splitlines()[1:]]
page = "\\n".join((folder / row[0]).read_text("utf-8") for row in rows) * 10
engine = wikisuggest.LinkEngine.default()
started = time.monotonic()
engine.recommend(page, "Long", threshold=0.0, max_recommendations=0, time_budget=2.2)
print(json.dumps(time.monotonic() - started))
"""
    env = {**os.environ, "WIKISUGGEST_FIRST_TRY": "2"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    elapsed = json.loads(done.stdout.strip().splitlines()[-1])
    assert 2.15 <= elapsed < 3.6


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads listed by /proc")
def test_ctrl_c_during_recommend_leaves_the_page_behind_and_the_next_call_runs(
    engine: LinkEngine,
) -> None:
    # A page of several megabytes, classified whole: it runs long after the interrupt.
    big = LONG_PAGE * 2
    # This thread's worker is started (a long page is handed to it after the first try).
    warm = engine.recommend(LONG_PAGE, "Warm", threshold=0.0, max_recommendations=0)
    before = _engine_call_threads()
    watcher = _interrupt_once_a_worker_computes()
    with pytest.raises(KeyboardInterrupt):
        engine.recommend(big, "Big", threshold=0.0, max_recommendations=0)
    watcher.join()
    # The interrupted page still runs on the worker it was handed to; the next calls answer
    # as always: a short page on the calling thread (no thread started) ...
    article = ARTICLES[0]
    result = engine.recommend(**page(article))
    assert differences(result, expected("api", article["name"])) == []
    assert _engine_call_threads() == before
    # ... and a long one on a new worker while the old one is busy.
    again = engine.recommend(LONG_PAGE, "Warm", threshold=0.0, max_recommendations=0)
    assert again == warm
    # The page left behind ends, and its worker with it: the thread keeps one.
    assert _eventually(lambda: _engine_call_threads() == before)


def test_an_interrupt_between_items_settles_every_page_read(engine: LinkEngine) -> None:
    # What recommend_many does when Ctrl-C lands in its own loop: the interrupt is thrown
    # into the iterator, which returns every page it read and had not returned yet.
    read = 0

    def pages() -> Iterator[dict[str, Any]]:
        nonlocal read
        for article in ARTICLES[:30]:
            read += 1
            yield page(article)

    items = engine.recommend_iter(pages(), workers=2)
    first = next(items)
    assert first.index == 0 and first.ok
    with pytest.raises(wikisuggest.BatchInterrupted) as caught:
        items.throw(KeyboardInterrupt())
    rest = caught.value.results
    assert isinstance(caught.value.__cause__, KeyboardInterrupt)
    assert [item.index for item in rest] == list(range(1, read))
    assert 1 < read < 30
    for item in rest:
        if item.ok:
            article = ARTICLES[item.index]
            assert item.unwrap() == engine.recommend(
                article["wikitext"], article["page_title"], **_ids(article)
            )
        else:
            assert isinstance(item.error, wikisuggest.Cancelled)


async def test_async_batch_matches_the_blocking_one(engine: LinkEngine) -> None:
    picked = [page(a) for a in ARTICLES[:12]] + [("text", "Bad|title")]
    blocking = engine.recommend_many(picked, workers=2).wait()
    awaited = await engine.recommend_many_async(picked, workers=2)
    assert [i.index for i in awaited] == list(range(13))
    assert [i.result for i in awaited] == [i.result for i in blocking]
    assert isinstance(awaited[-1].error, wikisuggest.InvalidParameter)
    streamed = [item async for item in engine.recommend_many_async(iter(picked), workers=2)]
    # The engine hands items over in input order, as the blocking as_completed() does.
    assert [i.index for i in streamed] == list(range(13))
    assert [i.result for i in streamed] == [i.result for i in blocking]
    with pytest.raises(wikisuggest.InvalidParameter):
        engine.recommend_many_async(picked, threshold=2.0)


async def test_cancelling_an_async_batch_settles_every_page_read(engine: LinkEngine) -> None:
    big = sorted(ARTICLES, key=lambda a: len(a["wikitext"]))[-20:]
    read = 0

    def pages() -> Iterator[dict[str, Any]]:
        nonlocal read
        for i in range(200):
            read += 1
            yield page(big[i % len(big)])

    batch = engine.recommend_many_async(pages(), workers=1, threshold=0.0, max_recommendations=0)
    task = asyncio.ensure_future(batch)
    while batch.settled is None and read < 12:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    settled = batch.settled
    assert settled is not None
    # Every page read comes back, in input order: finished, or cancelled before it started.
    assert [item.index for item in settled] == list(range(read))
    assert 0 < len(settled.results) < read < 200
    for item in settled:
        if item.ok:
            spec = item.input
            assert item.unwrap() == engine.recommend(
                spec["wikitext"],
                spec["page_title"],
                pageid=spec["pageid"],
                revid=spec["revid"],
                threshold=0.0,
                max_recommendations=0,
            )
        else:
            assert isinstance(item.error, wikisuggest.Cancelled)


def test_an_engine_coroutine_in_flight_at_exit_does_not_crash() -> None:
    """A program that leaves while a page still runs on the engine ends with status 0: the
    exit waits for the native task that hands the page's result to asyncio, as it does for
    the client's requests (without that, finalization could abort the process)."""
    script = (
        "import asyncio, wikisuggest\n"
        "from wikisuggest.engine import demo_articles\n"
        "engine = wikisuggest.LinkEngine.default()\n"
        "text = '\\n'.join(demo_articles().values()) * 10\n"
        "async def main():\n"
        "    tasks = [asyncio.ensure_future(engine.recommend_async(text, 'All', threshold=0.0))\n"
        "             for _ in range(4)]\n"
        "    await asyncio.sleep(0.01)\n"
        "    print('leaving with', sum(not t.done() for t in tasks), 'pages running')\n"
        "asyncio.run(main())\n"
    )
    runs = [
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        for _ in range(10)
    ]
    # Before the exit waited for them, about one run in fifteen printed a panic of a thread
    # that handed a result over during finalization.
    assert [(r.returncode, r.stderr) for r in runs] == [(0, "")] * 10
    assert all("pages running" in r.stdout for r in runs)
    assert any("leaving with 0 " not in r.stdout for r in runs)


def test_a_result_for_a_closed_loop_is_dropped_quietly() -> None:
    """Pages still running when their event loop is closed (not cancelled: the loop simply
    ended) finish unseen: nothing is printed and nothing is left running. The bridge checks
    the future, then schedules its result on the loop; a loop closed between the two, or
    before, refuses the result, and that refusal is expected, not an error to report."""
    script = (
        "import asyncio, logging, time, wikisuggest\n"
        "from wikisuggest._native import in_flight_tasks\n"
        "from wikisuggest.engine import demo_articles\n"
        "logging.getLogger('asyncio').setLevel(logging.CRITICAL)  # pending tasks' own notice\n"
        "engine = wikisuggest.LinkEngine.default()\n"
        "text = '\\n'.join(demo_articles().values()) * 20\n"
        "loop = asyncio.new_event_loop()\n"
        "async def start():\n"
        "    tasks = [asyncio.ensure_future(engine.recommend_async(text, 'All', threshold=0.0))\n"
        "             for _ in range(3)]\n"
        "    await asyncio.sleep(0)\n"
        "    return tasks\n"
        "tasks = loop.run_until_complete(start())\n"
        "running = in_flight_tasks()\n"
        "loop.close()\n"
        "deadline = time.monotonic() + 60\n"
        "while in_flight_tasks() and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
        "print('running at close', running > 0, 'left', in_flight_tasks(),\n"
        "      'done', sum(t.done() for t in tasks))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert (out.returncode, out.stderr) == (0, "")
    # At least one page was still running when the loop closed (all three, unless a fast
    # build finished one first); none of them is left running, and no task was resolved.
    assert out.stdout.strip() == "running at close True left 0 done 0"


def test_score_inspection(engine: LinkEngine) -> None:
    want = expected("api", "Aardvark")["links"][0]
    scores = engine.score("Aardvark", want["link_text"])
    assert scores is not None
    best = max(scores, key=lambda c: c.probability)
    assert (best.title, best.probability) == (want["link_target"], want["score"])
    assert set(best.features) == {"ngram", "freq", "ambig", "kurtosis", "w2v", "jaro", "wiki"}
    assert best.features["ambig"] == len(scores) or len(scores) == 10
    only = engine.score("Aardvark", want["link_text"], candidates=[want["link_target"]])
    assert only == [best]
    assert engine.score("Aardvark", "no such anchor xyzzy") is None


def test_convert_round_trip(tmp_path: Path, engine: LinkEngine) -> None:
    path = wikisuggest.datasets.convert(DATASETS, "enwiki", tmp_path)
    assert path == tmp_path / "enwiki.linkdata" and path.is_file()
    native = LinkEngine.open(tmp_path, "enwiki")
    same_file = LinkEngine.open(path, "enwiki")
    info, published = native.info(), engine.info()
    assert (info.source, published.source) == ("native", "published")
    assert info.checksums == published.checksums and len(info.checksums) == 5
    assert (info.anchors, info.pages, info.redirects) == (20818, 21356, 99)
    a = ARTICLES[20]
    want = engine.recommend(a["wikitext"], a["page_title"], threshold=0.0)
    assert native.recommend(a["wikitext"], a["page_title"], threshold=0.0) == want
    assert same_file.recommend(a["wikitext"], a["page_title"], threshold=0.0) == want
    with pytest.raises(wikisuggest.InvalidParameter):
        LinkEngine.open(path, "dewiki")


def test_cli_convert(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "convert", str(DATASETS), "enwiki", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert out.stdout.strip() == str(tmp_path / "enwiki.linkdata")


def test_default_engine_is_the_shipped_sample() -> None:
    default = LinkEngine.default()
    assert default is LinkEngine.default()
    info = default.info()
    assert (info.wiki_id, info.source, info.anchors) == ("enwiki", "native", 20842)


def test_demo_prints_links_offline() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "demo", "Aardvark"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    # The shipped sample is built by `wikisuggest build`, not the parity dataset: check
    # that the printed links are real placements in the article, not a fixed list.
    from wikisuggest.engine import demo_articles

    article = demo_articles()["Aardvark"]
    assert "Aardvark: 15 links" in out.stdout
    found = re.findall(r"^[ ?] '(.+)' -> '(.+)'  score ([0-9.]+)  at (\d+)", out.stdout, re.M)
    assert len(found) == 15
    for text, _target, score, offset in found:
        assert article[int(offset) : int(offset) + len(text)] == text
        assert float(score) >= 0.5
