"""The module paths of wikisuggest 0.1 that 0.2 moved, kept importable for one release.

``import wikisuggest.oauth`` (and the other old paths below) still works, with a
:class:`DeprecationWarning` naming the new path: the old module forwards every name to the
module that now holds it. 0.3 drops these aliases.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED", "install"]

#: Old module path -> where its public names live now.
MOVED = {
    "wikisuggest.adapters": "wikisuggest.auth",
    "wikisuggest.apply": "wikisuggest.edits.apply",
    "wikisuggest.build": "wikisuggest.datasets.build",
    "wikisuggest.dump": "wikisuggest.engine.dump",
    "wikisuggest.edit": "wikisuggest.edits.wiki",
    "wikisuggest.models": "wikisuggest.records",
    "wikisuggest.oauth": "wikisuggest.auth",
    "wikisuggest.review": "wikisuggest.edits.review",
    "wikisuggest.spark": "wikisuggest.engine.spark",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths and loads each as the module that replaced it."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        """The default module: :meth:`exec_module` makes it forward to the new one."""
        return None

    def exec_module(self, module: ModuleType) -> None:
        new_path = MOVED[module.__name__]
        warnings.warn(
            f"{module.__name__} is deprecated: import from {new_path} instead "
            "(the alias goes in 0.3)",
            DeprecationWarning,
            stacklevel=2,
        )
        new = importlib.import_module(new_path)
        # Every name is the new module's own object: one definition, and identity holds
        # (``wikisuggest.models.Meta is wikisuggest.records.Meta``).
        module.__doc__ = new.__doc__
        module.__all__ = list(getattr(new, "__all__", ()))  # type: ignore[attr-defined]
        module.__getattr__ = functools.partial(getattr, new)  # type: ignore[method-assign]
        module.__dir__ = new.__dir__  # type: ignore[method-assign]


def install() -> None:
    """Put the finder in front of the import system (once)."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
