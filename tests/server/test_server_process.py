"""The server under load from a second process, and the ``serve`` command line."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from support import reference_server as ref
from support.paths import SUPPORT

HERE = SUPPORT
LINKS = "/service/linkrecommendation/v1/linkrecommendations"


def test_load_from_a_second_process(tmp_path: Path) -> None:
    requests, workers = 900, 8
    with ref.start(tmp_path, rate_limit=10**6, anonymous_rate_limit=10**6) as server:
        result = subprocess.run(
            [
                sys.executable,
                str(HERE / "load_client.py"),
                server.url,
                ref.PERSONAL_TOKEN,
                str(requests),
                str(workers),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["errors"] == []
    assert summary["ok"] == summary["distinct_ok"] == requests


def test_serve_command(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "wikisuggest",
        "serve",
        "--port",
        "0",
        "--pages",
        str(ref.write_dump(tmp_path)),
        "--datasets",
        str(ref.DATASETS),
        "--clients",
        str(ref.CLIENTS),
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline().strip()
            assert line.startswith("Serving on http://127.0.0.1:"), line
            assert process.stdout.readline().strip() == "Link datasets: enwiki"
            url = line.split()[2]
            with urllib.request.urlopen(f"{url}/healthz", timeout=10) as reply:
                assert reply.status == 200
            links = f"{url}{LINKS}/wikipedia/en/Anarchism"
            with urllib.request.urlopen(links, timeout=30) as reply:
                assert json.load(reply)["revid"] == 101
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=30) == 0
        finally:
            if process.poll() is None:
                process.kill()


def test_serve_command_reports_bad_input(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "wikisuggest", "serve", "--port", "0", "--pages", "/nonexistent"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "wikisuggest serve: /nonexistent" in result.stderr
