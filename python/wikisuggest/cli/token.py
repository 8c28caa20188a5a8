"""``wikisuggest token``: an OAuth 2.0 access token with client credentials."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from .environment import TOKEN, describe
from .options import add_user_agent
from .output import table


def _token(args: argparse.Namespace) -> int:
    """Request an access token with client credentials (the secret comes from the
    environment, never the command line, where other users could read it)."""
    if not args.client_id:
        args.usage.error("--client-id is required (or set WIKISUGGEST_CLIENT_ID)")
    secret = os.environ.get("WIKISUGGEST_CLIENT_SECRET")
    if not secret:
        print("wikisuggest token: set WIKISUGGEST_CLIENT_SECRET", file=sys.stderr)
        return 2
    from ..auth import TokenManager

    manager = TokenManager.client_credentials(
        args.client_id, secret, auth_url=args.auth_url, user_agent=args.user_agent
    )
    token = manager.token()
    info: dict[str, Any] = {
        "token_type": token.token_type,
        "expires_in": token.expires_in,
        "expires_at": None if token.expires_at is None else token.expires_at.isoformat(),
    }
    if args.show_token:
        info["access_token"] = token.access_token
    if args.format == "json":
        json.dump(info, sys.stdout, indent=1)
        print()
    else:
        print(table([info], list(info)))
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = commands.add_parser(
        "token", help="request an OAuth 2.0 access token (client credentials)"
    )
    token.add_argument("--client-id", default=os.environ.get("WIKISUGGEST_CLIENT_ID"))
    token.add_argument(
        "--auth-url",
        default=os.environ.get("WIKISUGGEST_AUTH_URL"),
        help="OAuth 2.0 server (default: $WIKISUGGEST_AUTH_URL, else Meta-Wiki)",
    )
    token.add_argument(
        "--show-token", action="store_true", help="print the access token itself (a secret)"
    )
    add_user_agent(token)
    token.add_argument(
        "--format", choices=["json", "table"], default="table" if sys.stdout.isatty() else "json"
    )
    token.set_defaults(run=_token, usage=token)
    describe(token, TOKEN)
