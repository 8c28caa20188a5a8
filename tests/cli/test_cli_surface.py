"""The command line speaks in lines: one-line errors, usage errors, a closed pipe, a missing extra,
Ctrl-C during a scan; the demo says what it shows; the help speaks to users."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from support.dataset_mirror import Mirror
from support.paths import REPO

from wikisuggest.cli.demo import REAL_LINKS
from wikisuggest.edits.community import CommunityConfiguration

ROOT = REPO


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wikisuggest", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    missing = cli("convert", str(tmp_path / "nothing"), "enwiki", str(tmp_path / "out"))
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr
    assert missing.stderr.count("\n") == 1 and missing.stderr.startswith("wikisuggest convert: ")
    debug = cli("--debug", "convert", str(tmp_path / "nothing"), "enwiki", str(tmp_path / "out"))
    assert debug.returncode == 1 and "Traceback" in debug.stderr  # raised: Python's status


def test_cli_token_without_client_id_is_a_usage_error() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WIKISUGGEST_")}
    done = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "token"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "usage:" in done.stderr and "--client-id" in done.stderr
    assert "Traceback" not in done.stderr


def test_cli_closed_pipe_ends_quietly() -> None:
    done = subprocess.run(
        f"{sys.executable} -m wikisuggest demo | head -n 1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.stdout.startswith("A toy: ")
    assert done.stderr == ""


def test_cli_missing_extra_names_the_install_line(tmp_path: Path) -> None:
    # An environment without the `train` extra: xgboost cannot be imported.
    (tmp_path / "xgboost.py").write_text("raise ImportError('No module named xgboost')\n")
    env = {"PYTHONPATH": str(tmp_path)}
    done = cli("build", str(tmp_path / "dump.xml"), "--wiki", "x", "--out", str(tmp_path), env=env)
    assert done.returncode == 1
    assert "pip install 'wikisuggest[train]'" in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_build_scan_is_interruptible(tmp_path: Path) -> None:
    """Ctrl-C during `wikisuggest build`'s scan of a dump ends it (the dump here is a pipe that
    never ends, so only an interruptible wait can return)."""
    import signal

    dump = tmp_path / "endless-pages-articles.xml"
    os.mkfifo(dump)
    out = str(tmp_path / "out")
    process = subprocess.Popen(
        [sys.executable, "-m", "wikisuggest", "build", str(dump), "--wiki", "x", "--out", out],
        stderr=subprocess.PIPE,
        text=True,
    )
    # Opening the writing end waits until the scan has opened the reading end.
    with open(dump, "w") as writer:
        writer.write('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">\n<page>')
        writer.flush()
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        try:
            status = process.wait(timeout=30)
        finally:
            process.kill()
    assert process.stderr is not None
    assert status == 130, process.stderr.read()
    assert "interrupted" in process.stderr.read()
    process.stderr.close()


def _demo_links(out: str) -> list[tuple[str, float]]:
    """The (mark, score) of each link line the demo printed."""
    found = re.findall(r"^(.) '.*' -> '.*'  score ([0-9.]+)  at ", out, re.M)
    return [(mark, float(score)) for mark, score in found]


def test_demo_says_it_is_a_toy_and_how_to_get_real_links() -> None:
    done = cli("demo")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.rstrip("\n").splitlines()
    editors = CommunityConfiguration().minimum_link_score
    assert lines[0].startswith("A toy: the sample dataset shipped in the package")
    assert f"'?' marks a score under {editors}" in lines[0]
    links = _demo_links(done.stdout)
    assert len(links) > 10
    # Every link under the score editors are shown is marked, and only those.
    assert all((mark == "?") == (score < editors) for mark, score in links), links
    assert {mark for mark, _ in links} == {"?", " "}, "the sample shows both kinds"
    assert lines[-1] == f"  {REAL_LINKS}"
    assert "production's enwiki datasets" in lines[-2]
    unknown = cli("demo", "Nope")
    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert unknown.stderr == (
        "wikisuggest demo: no shipped article Nope (shipped: Aardvark, Atomic number)\n"
    )


def test_demo_published_uses_production_datasets(tmp_path: Path) -> None:
    """The command the demo ends with: the same articles over the published enwiki datasets
    (here the loopback mirror of the published bases, serving the parity sample)."""
    mirror = Mirror.standard().start()
    try:
        env = {
            "ANALYTICS_BASE_URL": mirror.url("v2"),
            "ANALYTICS_BASE_URL_LEGACY": mirror.url("legacy"),
            "WIKISUGGEST_CACHE_DIR": str(tmp_path),
            "WIKISUGGEST_OFFLINE": "0",
        }
        done = cli(*REAL_LINKS.split()[3:], env=env)
    finally:
        mirror.stop()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Production's enwiki datasets (")
    assert _demo_links(done.stdout)
    assert REAL_LINKS not in done.stdout
    assert list(tmp_path.rglob("enwiki.linkdata")), "fetched into the cache"


def test_help_speaks_to_users() -> None:
    done = cli("--help")
    assert done.returncode == 0
    assert "add_parser" not in done.stdout and "module" not in done.stdout
    assert "wikisuggest demo" in done.stdout and "WIKISUGGEST_USER_AGENT" in done.stdout


def test_serve_refuses_a_port_out_of_range() -> None:
    for port, said in (("99999", "got 99999"), ("-1", "got -1")):
        done = cli("serve", "--port", port)
        assert done.returncode == 1, done.stderr
        assert (
            done.stderr
            == f"wikisuggest serve: port: must be a port number from 0 to 65535, {said}\n"
        )
    done = cli("serve", "--port", "0", "--threads", "-2")
    assert (
        done.returncode == 1 and "threads: must be a whole number, 0 or more, got -2" in done.stderr
    )
