"""`wikisuggest token`: client credentials from the command line, secret from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.oauth_server import BOT_SECRET, USER_AGENT, OAuthTestServer


def run(
    server: OAuthTestServer, *args: str, secret: str | None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WIKISUGGEST_USER_AGENT": USER_AGENT}
    env.pop("WIKISUGGEST_CLIENT_SECRET", None)
    if secret is not None:
        env["WIKISUGGEST_CLIENT_SECRET"] = secret
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "wikisuggest",
            "token",
            "--client-id",
            "bot",
            "--auth-url",
            server.url,
            *args,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_token_metadata_without_the_secret(oauth_server: OAuthTestServer) -> None:
    result = run(oauth_server, "--format", "json", secret=BOT_SECRET)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["token_type"] == "Bearer" and info["expires_in"] > 0
    assert "access_token" not in info
    assert BOT_SECRET not in result.stdout + result.stderr


def test_show_token_prints_it(oauth_server: OAuthTestServer) -> None:
    result = run(oauth_server, "--format", "json", "--show-token", secret=BOT_SECRET)
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["access_token"]) > 10


def test_secret_is_required_and_wrong_secret_is_typed(oauth_server: OAuthTestServer) -> None:
    missing = run(oauth_server, secret=None)
    assert missing.returncode == 2 and "WIKISUGGEST_CLIENT_SECRET" in missing.stderr
    wrong = run(oauth_server, secret="not-the-secret")
    assert wrong.returncode == 2 and "InvalidClient" in wrong.stderr
    assert "not-the-secret" not in wrong.stdout + wrong.stderr
