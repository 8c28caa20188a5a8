"""Starting the reference server for tests: data files in a temporary folder, an ephemeral
loopback port, stopped by the fixture that started it."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import wikisuggest
from support.paths import REPO
from wikisuggest.translation.sample import default_catalog_path

DATASETS = REPO / "tests" / "data" / "parity" / "datasets"
#: The translation catalog shipped in the package (English Wikipedia, every part).
TRANSLATION = default_catalog_path()
CLIENTS = REPO / "examples" / "clients.toml"

CONFIDENTIAL_ID = "example-confidential-app"
CONFIDENTIAL_SECRET = "example-confidential-secret"
PUBLIC_ID = "example-public-app"
PERSONAL_TOKEN = "example-personal-api-token-0001"
REDIRECT_URI = "http://127.0.0.1/callback"

ANARCHISM_OLD = "'''Anarchism''' was an old text."
ANARCHISM = (
    "'''Anarchism''' is a political philosophy and movement that is against all forms of "
    "authority. It is a form of [[socialism]].\n"
    "== History ==\nThe word anarchy comes from Greek. Anarchism is a political philosophy.\n"
)

DUMP = f"""<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">
  <siteinfo><sitename>Wikipedia</sitename><dbname>enwiki</dbname></siteinfo>
  <page>
    <title>Anarchism</title><ns>0</ns><id>12</id>
    <revision><id>100</id><text xml:space="preserve">{ANARCHISM_OLD}</text></revision>
    <revision><id>101</id><text xml:space="preserve">{
    ANARCHISM.replace("&", "&amp;").replace("<", "&lt;")
}</text></revision>
  </page>
  <page>
    <title>AC/DC</title><ns>0</ns><id>13</id>
    <revision><id>200</id><text>'''AC/DC''' is a rock band.</text></revision>
  </page>
</mediawiki>
"""


def write_dump(folder: Path) -> Path:
    path = folder / "enwiki-pages.xml"
    path.write_text(DUMP, encoding="utf-8")
    return path


def start(folder: Path, **options: Any) -> wikisuggest.Server:
    settings: dict[str, Any] = {
        "datasets": DATASETS,
        "pages": write_dump(folder),
        "translation": TRANSLATION,
        "clients": CLIENTS,
        "seed": 7,
    }
    settings.update(options)
    return wikisuggest.Server(**settings)


def client_credentials_token(base_url: str) -> dict[str, Any]:
    body = urllib.parse.urlencode(
        {
            "grant_type": "client_credentials",
            "client_id": CONFIDENTIAL_ID,
            "client_secret": CONFIDENTIAL_SECRET,
        }
    ).encode()
    request = urllib.request.Request(f"{base_url}/w/rest.php/oauth2/access_token", data=body)
    with urllib.request.urlopen(request, timeout=10) as response:
        result: dict[str, Any] = json.load(response)
        return result
