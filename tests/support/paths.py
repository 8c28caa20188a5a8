"""Where the repository and the test data are, for tests in any folder."""

from __future__ import annotations

from pathlib import Path

#: The repository's root.
REPO = Path(__file__).resolve().parent.parent.parent
#: ``tests/``.
TESTS = REPO / "tests"
#: ``tests/data``: fixtures committed with the tests.
DATA = TESTS / "data"
#: ``tests/data/parity``: production's datasets and outputs on real articles.
PARITY = DATA / "parity"
#: The helper programs some tests start in processes of their own.
SUPPORT = TESTS / "support"
