"""Where Wikimedia publishes the link engine's datasets, and how wikis are named there.

Two bases hold them, each with an index ``wikis.txt`` (one wiki id per line):

- ``v2``: ``https://analytics.wikimedia.org/published/wmf-ml-models/addalink/v2/`` (newer
  models, and the languages written without spaces), overridable with ``ANALYTICS_BASE_URL``;
- ``legacy``: ``https://analytics.wikimedia.org/published/datasets/one-off/research-mwaddlink/``,
  overridable with ``ANALYTICS_BASE_URL_LEGACY``.

A wiki published in both is taken from ``v2``, as production's importer does. Under
``<base><wiki>/`` are the five files of :data:`DATASETS` and a ``.checksum`` beside each
(``shasum -a 256`` output; only its first field counts, since legacy files name a relative path
of the old pipeline after it).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .. import _args, _native
from ..errors import DatasetError, InvalidParameter

__all__ = [
    "DATASETS",
    "DEFAULT_BASES",
    "BaseUrl",
    "PublishedIndex",
    "base_urls",
    "dataset_file",
    "parse_checksum",
    "parse_index",
    "wiki_id",
]

#: The published bases, newest first; a wiki in several is taken from the first.
DEFAULT_BASES: Mapping[str, str] = {
    "v2": "https://analytics.wikimedia.org/published/wmf-ml-models/addalink/v2/",
    "legacy": "https://analytics.wikimedia.org/published/datasets/one-off/research-mwaddlink/",
}
_BASE_ENV = {"v2": "ANALYTICS_BASE_URL", "legacy": "ANALYTICS_BASE_URL_LEGACY"}

#: The five published datasets, in the order of ``meta.dataset_checksums``.
DATASETS = ("anchors", "model", "pageids", "redirects", "w2vfiltered")

_INDEX_LINE = re.compile(r"[A-Za-z0-9_-]+")
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


@dataclass(frozen=True)
class BaseUrl:
    """One published base: its name (``v2``, ``legacy`` or ``mirror``) and URL (with a final
    slash)."""

    name: str
    url: str


def _with_slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


def base_urls(source: str = "auto") -> tuple[BaseUrl, ...]:
    """The bases ``source`` names, in order of preference: ``"auto"`` (v2, then legacy),
    ``"v2"``, ``"legacy"``, or the URL of a mirror laid out like them. The environment
    variables ``ANALYTICS_BASE_URL`` and ``ANALYTICS_BASE_URL_LEGACY`` replace the default
    URLs, as they do for production's importer."""
    if not isinstance(source, str):
        raise InvalidParameter(
            f"source must be 'auto', 'v2', 'legacy' or a URL, got {type(source).__name__}",
            parameter="source",
        )
    if source.startswith(("http://", "https://")):
        return (BaseUrl("mirror", _with_slash(source)),)
    names = {"auto": ("v2", "legacy"), "v2": ("v2",), "legacy": ("legacy",)}.get(source)
    if names is None:
        raise InvalidParameter(
            f"source must be 'auto', 'v2', 'legacy' or an http(s) URL, got {source!r}",
            parameter="source",
        )
    return tuple(
        BaseUrl(name, _with_slash(os.environ.get(_BASE_ENV[name]) or DEFAULT_BASES[name]))
        for name in names
    )


def dataset_file(wiki: str, dataset: str) -> str:
    """The published file name of ``dataset`` (one of :data:`DATASETS`) for ``wiki``."""
    if dataset == "model":
        return f"{wiki}.linkmodel.json"
    return f"lr_{wiki}_{dataset}.sql.gz"


def wiki_id(name: str) -> str:
    """The wiki id (database name) of ``name`` as users write it: ``frwiki``, ``fr``,
    ``fr.wikipedia.org`` (or a URL on it), ``zh-min-nan`` → ``zh_min_nanwiki``,
    ``be-tarask`` → ``be_x_oldwiki``: the one wiki-id rule, which the engine, the dataset
    builder and the reference server share. Only the spelling is checked here; whether the
    wiki is published is :meth:`PublishedIndex.resolve`'s question."""
    return _native.wiki_id(_args.text("wiki", name))


def parse_index(body: bytes) -> list[str]:
    """The wiki ids of a ``wikis.txt``: lines that fully match ``^[A-Za-z0-9_-]+$`` (others are
    ignored, as production ignores them)."""
    text = body.decode("utf-8", "replace")
    return [line.strip() for line in text.splitlines() if _INDEX_LINE.fullmatch(line.strip())]


def parse_checksum(body: bytes, url: str) -> str:
    """The sha256 of a ``.checksum`` file: its first field, 64 hex digits (lowercased). What
    follows (a file name, or a relative path in legacy files) is not checked."""
    fields = body.decode("ascii", "replace").split()
    if not fields or not _HEX64.fullmatch(fields[0]):
        raise DatasetError(
            f"{url} is not a sha256 checksum file (its first field must be 64 hex digits)",
            url=url,
        )
    return fields[0].lower()


@dataclass(frozen=True)
class PublishedIndex:
    """The union of the bases' indexes: for each wiki, the bases that publish it, the
    preferred one first."""

    bases: tuple[BaseUrl, ...]
    wikis: Mapping[str, tuple[BaseUrl, ...]]

    @classmethod
    def from_lists(cls, bases: Iterable[BaseUrl], lists: Mapping[str, list[str]]) -> PublishedIndex:
        """The union of ``lists`` (base name → ids), in the bases' order of preference."""
        ordered = tuple(bases)
        wikis: dict[str, list[BaseUrl]] = {}
        for base in ordered:
            for wiki in lists.get(base.name, []):
                entry = wikis.setdefault(wiki, [])
                if base not in entry:
                    entry.append(base)
        return cls(ordered, {w: tuple(b) for w, b in sorted(wikis.items())})

    def base_of(self, wiki: str) -> BaseUrl | None:
        """The base ``wiki`` is taken from, or ``None`` if no base publishes it."""
        found = self.wikis.get(wiki)
        return found[0] if found else None

    def suggestions(self, wiki: str, n: int = 3) -> list[str]:
        """The published ids nearest to ``wiki`` (for a misspelt or unpublished one)."""
        return difflib.get_close_matches(wiki, list(self.wikis), n=n, cutoff=0.6)

    def unknown(self, wiki: str) -> DatasetError:
        """The error for a wiki no base publishes, naming the nearest ids."""
        near = self.suggestions(wiki)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        bases = ", ".join(b.url for b in self.bases)
        return DatasetError(
            f"no published dataset for {wiki!r} in {bases}{hint}", wiki=wiki, suggestions=near
        )
