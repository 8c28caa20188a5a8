"""Run in the processes of a documentation block (``tests/test_readme.py`` puts this folder on
``PYTHONPATH``): an import of a third-party module made by the block itself or by the package
on its behalf fails unless the block says it needs that module's distribution.

``DOCS_BLOCK_ALLOWS`` lists the top-level modules the block may import (comma-separated);
``DOCS_BLOCK_IMPORT_LOG`` names a file where each import of an allowed module (by anyone) is
recorded, one module a line. Imports made by third-party code (pandas importing pyarrow) are
that code's business and pass. The standard library and ``wikisuggest`` always pass.
"""

from __future__ import annotations

import builtins
import os
import sys
from collections.abc import Mapping, Sequence
from types import ModuleType

_ALLOWED = frozenset(filter(None, os.environ.get("DOCS_BLOCK_ALLOWS", "").split(",")))
_LOG = os.environ.get("DOCS_BLOCK_IMPORT_LOG")
_import = builtins.__import__


def _importer(globals_: Mapping[str, object] | None) -> str:
    """The module that imports: its spec's name (``python -m pyspark.daemon`` runs as
    ``__main__`` but is pyspark), else its ``__name__``. A call of ``__import__`` without
    globals is its caller's."""
    if globals_ is None:
        globals_ = sys._getframe(2).f_globals
    spec = globals_.get("__spec__")
    return str(getattr(spec, "name", None) or globals_.get("__name__") or "__main__")


def _guarded_import(
    name: str,
    globals: Mapping[str, object] | None = None,
    locals: Mapping[str, object] | None = None,
    fromlist: Sequence[str] | None = (),
    level: int = 0,
) -> ModuleType:
    top = name.partition(".")[0]
    if level == 0 and top and top not in sys.stdlib_module_names and top != "wikisuggest":
        importer = _importer(globals)
        mine = importer == "__main__" or importer.partition(".")[0] == "wikisuggest"
        if mine and top not in _ALLOWED:
            raise ModuleNotFoundError(
                f"No module named {top!r} here: the documentation block does not say it "
                f"needs it (a '# Needs:' line naming its distribution; imported by {importer})",
                name=top,
            )
        if _LOG and top in _ALLOWED:
            with open(_LOG, "a", encoding="utf-8") as log:
                log.write(f"{top}\n")
    return _import(name, globals, locals, fromlist, level)


builtins.__import__ = _guarded_import
