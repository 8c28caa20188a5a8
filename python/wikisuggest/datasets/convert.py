"""Conversion of the published dataset files into the engine's native format."""

from __future__ import annotations

import os
from pathlib import Path

from .. import _args, _progress
from .._native import convert_dataset

__all__ = ["convert"]


def convert(
    src_dir: str | os.PathLike[str],
    wiki_id: str,
    out_dir: str | os.PathLike[str],
    *,
    progress: bool = False,
) -> Path:
    """Convert the published dataset of ``wiki_id`` in ``src_dir`` (``lr_{wiki}_*.sql.gz``
    and ``{wiki}.linkmodel.json`` with their ``.checksum`` files, or legacy ``.sqlite``
    files) into ``out_dir/{wiki_id}.linkdata``, which :meth:`LinkEngine.open` memory-maps
    in an instant. Every file is verified against its checksum. Returns the new file's path.

    Published files are converted as a stream, in bounded memory (a sort budget of 256 MiB,
    or the largest hash index: about 11.4 bytes per anchor, whichever is larger), with work
    files beside the output. ``progress`` shows a bar per phase (needs tqdm). Ctrl-C stops
    it and removes what it wrote."""
    _args.text("wiki_id", wiki_id)
    bar = (
        _progress.PhaseProgress(f"converting {wiki_id}")
        if _args.flag("progress", progress)
        else None
    )
    try:
        done = convert_dataset(
            os.fspath(src_dir), wiki_id, os.fspath(out_dir), bar.update if bar else None
        )
    finally:
        if bar:
            bar.close()
    return Path(done)
