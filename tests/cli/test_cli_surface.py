"""The command line speaks in lines: one-line errors, usage errors, a closed pipe, a missing extra,
Ctrl-C during a scan."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from support.paths import REPO

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
    assert done.stdout.startswith("Local link engine")
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
