"""Progress bars (tqdm, in a terminal or a notebook) for long batches, runs and downloads."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["ByteProgress", "PhaseProgress", "Progress", "say"]


def _tqdm() -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError as err:
        raise ImportError("progress=True needs tqdm: pip install 'wikisuggest[progress]'") from err
    return tqdm


class Progress:
    """A tqdm bar when asked for (terminal or notebook), otherwise nothing."""

    def __init__(self, enabled: bool, total: int | None, desc: str) -> None:
        self.bar: Any = None
        if enabled:
            self.bar = _tqdm()(total=total, desc=desc, unit="page")

    def update(self, item: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)
            if item.error is not None:
                self.bar.set_postfix_str(f"last error: {type(item.error).__name__}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class ByteProgress:
    """A bar of bytes (a download), set to absolute counts: ``update(done, total)``."""

    def __init__(self, desc: str) -> None:
        self.bar: Any = _tqdm()(
            desc=desc, unit="B", unit_scale=True, unit_divisor=1024, leave=False
        )

    def update(self, done: int, total: int | None) -> None:
        if total is not None and self.bar.total != total:
            self.bar.total = total
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


class PhaseProgress:
    """One bar per phase of a long step (a conversion): ``update(done, total, phase)``."""

    def __init__(self, desc: str) -> None:
        self.tqdm = _tqdm()
        self.desc = desc
        self.phase: str | None = None
        self.bar: Any = None

    def update(self, done: int, total: int | None, phase: str) -> None:
        if phase != self.phase:
            self.close()
            self.phase = phase
            self.bar = self.tqdm(desc=f"{self.desc}: {phase}", total=total, leave=False)
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def say(message: str) -> None:
    """Prints a line on stderr without breaking the bars on screen."""
    _tqdm().write(message, file=sys.stderr)
