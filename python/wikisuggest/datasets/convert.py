"""Conversion of the published dataset files into the engine's native format."""

from __future__ import annotations

import os
from pathlib import Path

from .. import _args
from .._native import NativeEngine

__all__ = ["convert"]


def convert(src_dir: str | os.PathLike[str], wiki_id: str, out_dir: str | os.PathLike[str]) -> Path:
    """Convert the published dataset of ``wiki_id`` in ``src_dir`` (``lr_{wiki}_*.sql.gz``
    and ``{wiki}.linkmodel.json`` with their ``.checksum`` files, or legacy ``.sqlite``
    files) into ``out_dir/{wiki_id}.linkdata``, which :meth:`LinkEngine.open` memory-maps
    in an instant. Checksums are verified first. Returns the new file's path."""
    _args.text("wiki_id", wiki_id)
    return Path(NativeEngine.convert(os.fspath(src_dir), wiki_id, os.fspath(out_dir)))
