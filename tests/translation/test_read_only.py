"""A catalog is opened and queried from a read-only folder (an installed package, a read-only
mount, a folder shared by many readers) and nothing in it changes: no lock file appears, no
file is rewritten. The folder is compared entry by entry (size and modification time, with
every time set a day back first so any write shows), not only through its permission bits,
which a superuser writes through."""

from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from wikisuggest import TranslationEngine
from wikisuggest.translation import sample
from wikisuggest.translation.sample import default_catalog_path

Listing = dict[str, tuple[int, int]]


def listing(folder: Path) -> Listing:
    """Every entry under ``folder`` and the folder itself: size and modification time."""
    paths = [folder, *folder.rglob("*")]
    out = {}
    for path in paths:
        info = path.lstat()
        out[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    return out


def backdate_and_lock(folder: Path) -> None:
    day_ago = time.time() - 86_400
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (day_ago, day_ago))
        path.chmod(stat.S_IMODE(path.stat().st_mode) & ~0o222)


def unlock(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        path.chmod(stat.S_IMODE(path.stat().st_mode) | 0o200)


@pytest.fixture
def read_only_catalog(tmp_path: Path) -> Iterator[Path]:
    """The shipped catalog copied without the lock files its index build left (readers must
    not need them: a reader that took a lock would create one again), then made read-only."""
    folder = tmp_path / "catalog"
    shutil.copytree(default_catalog_path(), folder)
    for lock in (folder / "search").glob(".tantivy-*.lock"):
        lock.unlink()
    backdate_and_lock(folder)
    try:
        yield folder
    finally:
        unlock(folder)


def ask(engine: TranslationEngine) -> tuple[list[tuple[str, float]], list[str]]:
    """A seed search and a seed recommendation (English articles French Wikipedia lacks)."""
    found = engine.similar("Tellurium", limit=5)
    items = engine.recommend("fr", seed="Tellurium", count=5, rank_method="sitelinks")
    return found, [item.title for item in items]


def test_a_read_only_catalog_answers_seed_requests_and_is_left_unchanged(
    read_only_catalog: Path,
) -> None:
    before = listing(read_only_catalog)
    engine = TranslationEngine.open(read_only_catalog)
    found, recommended = ask(engine)
    assert found[0][0] == "Indium" and len(found) == 5
    assert recommended and "Tellurium" not in recommended
    # A second reader of the same folder, while the first is open; the answers are the
    # writable shipped catalog's.
    assert ask(TranslationEngine.open(read_only_catalog)) == (found, recommended)
    assert ask(TranslationEngine.default()) == (found, recommended)
    assert listing(read_only_catalog) == before


def test_the_default_catalog_opens_read_only(
    read_only_catalog: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``TranslationEngine.default()`` on a package installed read-only (its catalog's copy)."""
    monkeypatch.setattr(sample, "default_catalog_path", lambda: read_only_catalog)
    before = listing(read_only_catalog)
    found, recommended = ask(TranslationEngine.default())
    assert found and recommended
    assert listing(read_only_catalog) == before
